"""The MCP tests' parts: a live ``jupyter server`` with Terax (isolated home, config, data and
runtime folders, a small git repository as its root, under JupyterHub's ``/user/alice/``
prefix), and an MCP client session with a stdio server subprocess, usable from sync tests."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.live_server import (
    PROJECT,
    READY_TIMEOUT,
    LiveTerax,
    environment_for,
    start_live_server,
)

if TYPE_CHECKING:
    from mcp_types import CallToolResult

__all__ = ["PROJECT", "LiveTerax", "McpSession", "environment_for", "start_live_terax"]

BASE_URL = "/user/alice/"
FILES = {
    "src/app.py": "def main():\n    print('hello terax')\n",
    "README.md": "# Demo\n\nA demo project for the MCP tests.\n",
    "notes/todo.txt": "".join(f"item {n}\n" for n in range(1, 31)),
    ".env": "API_TOKEN=never-read-me\n",
}


def _git(root: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Terax", "-c", "user.email=terax@example.invalid", *arguments],
        cwd=root,
        check=True,
        capture_output=True,
    )


def start_live_terax(home: Path, config: dict[str, Any] | None = None) -> LiveTerax:
    """A Terax server over a small git repository in ``home``/project, under the prefix,
    ready to answer; ``config`` is more server configuration (``{"AiManager": {...}}``)."""
    root = home / "project"
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "src", "README.md", "notes")
    _git(root, "commit", "-q", "-m", "start")
    return start_live_server(home, root, BASE_URL, config)


class McpSession:
    """An MCP client session with a stdio server subprocess, driven from sync code: the
    session lives on an event loop in a thread of its own."""

    def __init__(self, parameters: StdioServerParameters, errlog: IO[str]) -> None:
        self.parameters = parameters
        self.errlog = errlog
        self.session: ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            async with (
                stdio_client(self.parameters, errlog=self.errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                self.session = session
                self._ready.set()
                await self._stop.wait()
        except BaseException as error:  # reported to the test thread
            self._error = error
        finally:
            self._ready.set()

    def start(self) -> McpSession:
        self._thread.start()
        if not self._ready.wait(READY_TIMEOUT) or self.session is None:
            raise RuntimeError(f"the MCP server did not start: {self._error!r}")
        return self

    def _run(self, coroutine: Any, timeout: float = 120.0) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        assert self.session is not None
        return self._run(self.session.call_tool(tool, arguments))

    def text(self, tool: str, **arguments: Any) -> str:
        """The tool's text; fails the test when the tool reports an error."""
        result = self.call(tool, **arguments)
        text = "\n".join(getattr(item, "text", "") for item in result.content)
        assert not result.is_error, text
        return text

    def error(self, tool: str, **arguments: Any) -> str:
        """The tool's error text; fails the test when the tool succeeds."""
        result = self.call(tool, **arguments)
        text = "\n".join(getattr(item, "text", "") for item in result.content)
        assert result.is_error, text
        return text

    def list_tools(self) -> list[Any]:
        assert self.session is not None
        return self._run(self.session.list_tools()).tools

    def close(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
