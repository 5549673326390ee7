"""REST handlers for workspace roots (``/terax/api/workspace/roots``)."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter.base import TeraxAPIHandler
from terax_jupyter.exceptions import InvalidRequest

AUTH_RESOURCE = "terax.workspace"


class RootsHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(self._listing())

    @web.authenticated
    @authorized
    async def post(self) -> None:
        self.terax.security.paths.refuse_writes("workspace roots cannot be added")
        path = self.json_body().get("path")
        if not isinstance(path, str):
            raise InvalidRequest("'path' must be a string.", reason="invalid_parameter")
        root = self.terax.security.roots.add(path, user=self.user_name)
        self.terax.on_roots_changed()
        self.finish_json({**self._listing(), "added": root.to_dict()}, status=201)

    @web.authenticated
    @authorized
    async def delete(self) -> None:
        self.terax.security.paths.refuse_writes("workspace roots cannot be removed")
        self.terax.security.roots.remove(self.string_argument("path"), user=self.user_name)
        self.terax.on_roots_changed()
        self.finish_json(self._listing())

    def _listing(self) -> dict[str, object]:
        roots = self.terax.security.roots
        return {
            "roots": [root.to_dict() for root in roots.all()],
            "allow_user_roots": roots.allow_user_roots,
        }


default_handlers = [(r"/terax/api/workspace/roots", RootsHandler)]
