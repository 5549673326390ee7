"""REST handlers of the web preview (``/terax/api/preview/...``) and the proxy routes."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter.base import TeraxAPIHandler
from terax_jupyter.services.preview.proxy import ProxyHandler
from terax_jupyter.services.preview.relay import AUTH_RESOURCE

# Path parameters match anything, so a malformed one gets this API's error, not an HTML 404.
_PORT = r"(?P<port>[^/]+)"


class PreviewHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE


class ServersHandler(PreviewHandler):
    """The dev servers terminals started: printed URLs and listening ports."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        session = self.string_argument("session", None)
        self.finish_json({"servers": await self.terax.preview.servers(session or None)})


default_handlers = [
    (r"/terax/api/preview/servers", ServersHandler),
    (rf"/terax/proxy/{_PORT}/(?P<path>.*)", ProxyHandler),
]
