"""REST handlers of the file-system API (``/terax/api/fs/...``)."""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.iostream import StreamClosedError

from terax_jupyter.base import TeraxAPIHandler, parse_bool
from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.fs.grep import GrepQuery
from terax_jupyter.services.fs.watch_handler import WatchWebSocket

AUTH_RESOURCE = "terax.fs"


class FsHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE


class FileHandler(FsHandler):
    """Read, write and delete one file."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        path = self.string_argument("path")
        self.finish_json(
            await self.terax.files.read(path, format=self.string_argument("format", "auto"))
        )

    @web.authenticated
    @authorized
    async def put(self) -> None:
        body = self.json_body()
        content = body.get("content")
        if not isinstance(content, str):
            raise InvalidRequest("'content' must be a string.", reason="invalid_parameter")
        etag = body.get("etag")
        if etag is not None and not isinstance(etag, str):
            raise InvalidRequest("'etag' must be a string or null.", reason="invalid_parameter")
        result = await self.terax.files.write(
            _string(body, "path"),
            content,
            encoding=_string(body, "encoding", "utf-8"),
            etag=etag,
            overwrite=parse_bool(body.get("overwrite", False), "overwrite"),
        )
        self.finish_json(result)

    @web.authenticated
    @authorized
    async def delete(self) -> None:
        await self.terax.files.delete(
            self.string_argument("path"), recursive=self.bool_argument("recursive")
        )
        self.set_status(204)
        self.finish()


class StatHandler(FsHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(await self.terax.files.stat(self.string_argument("path")))


class ListHandler(FsHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        listing = await self.terax.files.list(
            self.string_argument("path", ""), show_hidden=self.bool_argument("hidden", True)
        )
        self.finish_json(listing)


class CreateHandler(FsHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        result = await self.terax.files.create(
            _string(body, "path"),
            kind=_string(body, "type", "file"),
            content=_string(body, "content", ""),
            parents=parse_bool(body.get("parents", False), "parents"),
        )
        self.finish_json(result, status=201)


class RenameHandler(FsHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        result = await self.terax.files.rename(
            _string(body, "path"),
            _string(body, "new_path"),
            overwrite=parse_bool(body.get("overwrite", False), "overwrite"),
        )
        self.finish_json(result)


class CopyHandler(FsHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        result = await self.terax.files.copy(
            _string(body, "path"),
            _string(body, "new_path"),
            overwrite=parse_bool(body.get("overwrite", False), "overwrite"),
        )
        self.finish_json(result, status=201)


class SearchHandler(FsHandler):
    """Fuzzy file-name search (quick open)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        result = await self.terax.search.search(
            self.string_argument("q", ""),
            path=self.string_argument("path", ""),
            limit=self.int_argument("limit", 50, minimum=1, maximum=1000),
        )
        self.finish_json(result)


class GlobHandler(FsHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        result = await self.terax.search.glob(
            self.string_argument("pattern"),
            path=self.string_argument("path", ""),
            limit=self.int_argument("limit", 5000, minimum=1, maximum=100_000),
        )
        self.finish_json(result)


class GrepHandler(FsHandler):
    """Content search, streamed as newline-delimited JSON: one line per file, then a summary."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        query = GrepQuery(
            pattern=self.string_argument("pattern"),
            path=self.string_argument("path", ""),
            regex=self.bool_argument("regex", False),
            case=self.string_argument("case", "smart"),
            whole_word=self.bool_argument("word", False),
            include=_globs(self.string_argument("include", "")),
            exclude=_globs(self.string_argument("exclude", "")),
            max_results=self.int_argument("max_results", 2000, minimum=1, maximum=100_000),
            max_per_file=self.int_argument("max_per_file", 200, minimum=1, maximum=100_000),
        )
        stream = self.terax.grep.search(query)
        try:
            # The first item is awaited before any byte is sent, so a bad pattern is a 400.
            first = await stream.__anext__()
            self.set_header("Content-Type", "application/x-ndjson")
            self.set_header("Cache-Control", "no-store")
            self.set_header("X-Accel-Buffering", "no")
            await self._send(first)
            async for item in stream:
                await self._send(item)
        except StreamClosedError:
            pass
        finally:
            await stream.aclose()
        if not self._finished:
            self.finish()

    async def _send(self, item: dict[str, Any]) -> None:
        self.write(json.dumps(item) + "\n")
        await self.flush()


def _string(body: dict[str, Any], key: str, default: str | None = None) -> str:
    value = body.get(key, default)
    if value is None:
        raise InvalidRequest(f"'{key}' is required.", reason="missing_parameter")
    if not isinstance(value, str):
        raise InvalidRequest(f"'{key}' must be a string.", reason="invalid_parameter")
    return value


def _globs(value: str) -> list[str]:
    """Comma-separated globs; commas inside braces belong to the glob (``*.{ts,tsx}``)."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in value:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        if char == "{":
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
        current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


default_handlers = [
    (r"/terax/api/fs/file", FileHandler),
    (r"/terax/api/fs/stat", StatHandler),
    (r"/terax/api/fs/list", ListHandler),
    (r"/terax/api/fs/create", CreateHandler),
    (r"/terax/api/fs/rename", RenameHandler),
    (r"/terax/api/fs/copy", CopyHandler),
    (r"/terax/api/fs/search", SearchHandler),
    (r"/terax/api/fs/glob", GlobHandler),
    (r"/terax/api/fs/grep", GrepHandler),
    (r"/terax/api/fs/watch", WatchWebSocket),
]
