"""REST handlers for keys (``/terax/api/secrets``): which are set and from where, never values."""

from __future__ import annotations

import asyncio

from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter.base import TeraxAPIHandler

AUTH_RESOURCE = "terax.secrets"


class SecretsHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def get(self) -> None:
        # Finding and reading a keychain may block (D-Bus, a keychain prompt): off the loop.
        self.finish_json(await asyncio.to_thread(self.terax.secrets.overview))


class SecretHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized
    async def put(self, name: str) -> None:
        self.terax.security.paths.refuse_writes("keys cannot be set")
        value = self.json_body().get("value")
        entry = await asyncio.to_thread(self.terax.secrets.set, name, value, user=self.user_name)
        self.finish_json(entry)

    @web.authenticated
    @authorized
    async def delete(self, name: str) -> None:
        self.terax.security.paths.refuse_writes("keys cannot be deleted")
        entry = await asyncio.to_thread(self.terax.secrets.delete, name, user=self.user_name)
        self.finish_json(entry)


default_handlers = [
    (r"/terax/api/secrets", SecretsHandler),
    (r"/terax/api/secrets/(?P<name>[^/]+)", SecretHandler),
]
