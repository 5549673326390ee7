"""REST handler of the git history (``/terax/api/git/log``); commit detail is in handlers.py."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter.services.git.handlers import AUTH_RESOURCE, GitHandler
from terax_jupyter.services.git.log import DEFAULT_LIMIT, MAX_LIMIT

__all__ = ["AUTH_RESOURCE", "default_handlers"]


class LogHandler(GitHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(
            await self.terax.git.log(
                self.path_argument(),
                ref=self.string_argument("ref", None) or None,
                cursor=self.string_argument("cursor", None) or None,
                limit=self.int_argument("limit", DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT),
                query=self.string_argument("query", None),
                author=self.string_argument("author", None),
                file=self.string_argument("file", None) or None,
                refs=self.string_argument("refs", None) or None,
                may_write=await self.may_write(),
            )
        )


default_handlers = [
    (r"/terax/api/git/log", LogHandler),
]
