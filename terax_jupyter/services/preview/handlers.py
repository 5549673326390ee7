"""REST handlers of the web preview (``/terax/api/preview/...``) and the proxy routes."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter.base import TeraxAPIHandler
from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.preview.proxy import CapabilityProxyHandler, ProxyHandler
from terax_jupyter.services.preview.relay import AUTH_RESOURCE

# Path parameters match anything, so a malformed one gets this API's error, not an HTML 404.
_PORT = r"(?P<port>[^/~]+)"
_CAPABILITY = r"(?P<capability>[^/]*)"


class PreviewHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE


class ServersHandler(PreviewHandler):
    """The dev servers terminals started: printed URLs and listening ports."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        session = self.string_argument("session", None)
        self.finish_json({"servers": await self.terax.preview.servers(session or None)})


class CapabilitiesHandler(PreviewHandler):
    """The server's preview addresses: issue one for a target, look at one, revoke them all.

    Issuing one opens the target to the user's browser, so it needs ``execute`` (as the
    proxy does), not the ``write`` a POST would ask for.
    """

    @web.authenticated
    @authorized("execute")
    async def post(self) -> None:
        target = self.json_body().get("target")
        if not isinstance(target, str) or not target:
            raise InvalidRequest(
                "'target' must be a port (5173) or a loopback host and port (127.0.0.1:5173).",
                reason="invalid_parameter",
            )
        self.finish_json(self.terax.preview.issue_capability(self._user(), target))

    @web.authenticated
    @authorized
    async def get(self) -> None:
        target = self.string_argument("target")
        self.finish_json(self.terax.preview.capability_of(target))

    @web.authenticated
    @authorized
    async def delete(self) -> None:
        self.finish_json({"revoked": self.terax.preview.capabilities.revoke()})

    def _user(self) -> str:
        return self.user_name or "user"


default_handlers = [
    (r"/terax/api/preview/servers", ServersHandler),
    (r"/terax/api/preview/capabilities", CapabilitiesHandler),
    (rf"/terax/proxy/{_PORT}~{_CAPABILITY}/(?P<path>.*)", CapabilityProxyHandler),
    (rf"/terax/proxy/{_PORT}/(?P<path>.*)", ProxyHandler),
]
