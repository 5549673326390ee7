"""REST handlers of the terminal API (``/terax/api/pty/...``)."""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter.base import TeraxAPIHandler
from terax_jupyter.exceptions import InvalidRequest, NotFound
from terax_jupyter.services.pty import shells
from terax_jupyter.services.pty.stream import PtyStreamWebSocket

AUTH_RESOURCE = "terax.pty"
# Path parameters match anything, so a malformed one gets this API's JSON 404, not HTML.
_ID = r"(?P<session_id>[^/]+)"


class PtyHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE


class SessionsHandler(PtyHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json({"sessions": self.terax.pty.list()})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body() if self.request.body else {}
        session = await self.terax.pty.create(
            cwd=_optional_string(body, "cwd") or "",
            shell=_optional_string(body, "shell"),
            name=_optional_string(body, "name"),
            columns=_int(body, "columns", 80, 2, 1000),
            rows=_int(body, "rows", 24, 1, 500),
        )
        self.finish_json(session.describe(), status=201)


class SessionHandler(PtyHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        self.finish_json(self.terax.pty.get(session_id).describe())

    @web.authenticated
    @authorized
    async def patch(self, session_id: str) -> None:
        name = _optional_string(self.json_body(), "name")
        if name is None:
            raise InvalidRequest("'name' is required.", reason="missing_parameter")
        self.finish_json(self.terax.pty.rename(session_id, name).describe())

    @web.authenticated
    @authorized
    async def delete(self, session_id: str) -> None:
        await self.terax.pty.close(session_id)
        self.set_status(204)
        self.finish()


class BlocksHandler(PtyHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        session = self.terax.pty.get(session_id)
        self.finish_json({"blocks": [b.to_dict() for b in session.blocks.all()]})


class BlockTextHandler(PtyHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str, block_id: str) -> None:
        session = self.terax.pty.get(session_id)
        number = (
            int(block_id)
            if block_id.isascii() and block_id.isdigit() and len(block_id) <= 9
            else -1
        )
        result = await session.block_text(number, rendered=self._rendered())
        if result is None:
            raise NotFound(f"Terminal {session_id} has no block {block_id}.")
        self.finish_json(result)

    def _rendered(self) -> bool:
        return _format(self.string_argument("format", "plain"))


class LinesHandler(PtyHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        session = self.terax.pty.get(session_id)
        count = self.int_argument("count", 50, minimum=1, maximum=10_000)
        rendered = _format(self.string_argument("format", "plain"))
        text = await session.last_lines(count, rendered=rendered)
        self.finish_json({"text": text, "count": count})


class RunHandler(PtyHandler):
    """Type a command at the prompt and wait for its block to end."""

    @web.authenticated
    @authorized
    async def post(self, session_id: str) -> None:
        body = self.json_body()
        command = _optional_string(body, "command")
        if not command or not command.strip():
            raise InvalidRequest("'command' is required.", reason="missing_parameter")
        timeout = body.get("timeout", 60)
        if (
            not isinstance(timeout, (int, float))
            or isinstance(timeout, bool)
            or not 0 < timeout <= 3600
        ):
            raise InvalidRequest("'timeout' must be 0-3600 seconds.", reason="invalid_parameter")
        self.finish_json(await self.terax.pty.run(session_id, command, timeout=float(timeout)))


class HistoryHandler(PtyHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        text = self.string_argument("q", "")
        limit = self.int_argument("limit", 20, minimum=1, maximum=200)
        self.finish_json(
            {"query": text, "suggestions": self.terax.pty.history.suggest(text, limit=limit)}
        )


class ShellsHandler(PtyHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        available = shells.available_shells()
        try:
            default = shells.shell_kind(shells.default_shell(list(self.terax.pty.shell_command)))
        except Exception:
            default = None
        self.finish_json({"shells": sorted(available), "default": default})


def _optional_string(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"'{key}' must be a string.", reason="invalid_parameter")
    return value


def _int(body: dict[str, Any], key: str, default: int, minimum: int, maximum: int) -> int:
    value = body.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= maximum:
        raise InvalidRequest(
            f"'{key}' must be an integer from {minimum} to {maximum}.", reason="invalid_parameter"
        )
    return value


def _format(value: str) -> bool:
    if value not in ("plain", "rendered"):
        raise InvalidRequest("'format' must be 'plain' or 'rendered'.", reason="invalid_parameter")
    return value == "rendered"


default_handlers = [
    (r"/terax/api/pty/sessions", SessionsHandler),
    (rf"/terax/api/pty/sessions/{_ID}", SessionHandler),
    (rf"/terax/api/pty/sessions/{_ID}/blocks", BlocksHandler),
    (rf"/terax/api/pty/sessions/{_ID}/blocks/(?P<block_id>[^/]+)", BlockTextHandler),
    (rf"/terax/api/pty/sessions/{_ID}/lines", LinesHandler),
    (rf"/terax/api/pty/sessions/{_ID}/run", RunHandler),
    (r"/terax/api/pty/history", HistoryHandler),
    (r"/terax/api/pty/shells", ShellsHandler),
    (rf"/terax/api/pty/{_ID}/stream", PtyStreamWebSocket),
]
