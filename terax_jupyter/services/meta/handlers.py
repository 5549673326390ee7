"""REST handlers for server facts (``/terax/api/info``) and the API description."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter._version import __version__
from terax_jupyter.base import TeraxAPIHandler

AUTH_RESOURCE = "terax.meta"


class MetaHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE


class InfoHandler(MetaHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        terax = self.terax
        self.finish_json(
            {
                "version": __version__,
                "server_root": terax.security.roots.server_root,
                "read_only": terax.security.paths.read_only,
                "search_engine": "ripgrep" if terax.search.ripgrep else "python",
                "grep_engine": terax.grep.engine(),
                "limits": {
                    "max_read_bytes": terax.files.max_read_bytes,
                    "max_write_bytes": terax.files.max_write_bytes,
                },
            }
        )


class PolicyHandler(MetaHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        security = self.terax.security
        described = security.policy.describe()
        if security.paths.read_only:  # read-only by the server's own setting says so too
            described["read_only"] = {"value": True, "locked": True}
        self.finish_json({**described, "locked": sorted(security.policy.locked)})


class OpenAPIHandler(MetaHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        # Built on first request: the schema fragments of every area are not kept in an idle
        # server's memory (issue 17's idle budget).
        from terax_jupyter.openapi import openapi_document

        base_url = self.settings.get("base_url", "/")
        self.finish_json(openapi_document(base_url))


default_handlers = [
    (r"/terax/api/info", InfoHandler),
    (r"/terax/api/policy", PolicyHandler),
    (r"/terax/api/openapi.json", OpenAPIHandler),
]
