"""The MCP tests' parts: a live ``jupyter server`` with Terax (isolated home, config, data and
runtime folders, a small git repository as its root, under JupyterHub's ``/user/alice/``
prefix), and an MCP client session with a stdio server subprocess, usable from sync tests."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import terax_jupyter
from terax_jupyter.client.api import SyncTeraxClient, TeraxAPIError

if TYPE_CHECKING:
    from mcp_types import CallToolResult

PROJECT = str(Path(terax_jupyter.__file__).resolve().parents[1])
BASE_URL = "/user/alice/"
READY_TIMEOUT = 60.0
FILES = {
    "src/app.py": "def main():\n    print('hello terax')\n",
    "README.md": "# Demo\n\nA demo project for the MCP tests.\n",
    "notes/todo.txt": "".join(f"item {n}\n" for n in range(1, 31)),
    ".env": "API_TOKEN=never-read-me\n",
}


@dataclass
class LiveTerax:
    url: str  # the base URL, with the prefix and a trailing slash
    token: str
    root: Path
    home: Path
    runtime_dir: Path
    process: subprocess.Popen[bytes]
    log: Path

    def environment(self, **extra: str) -> dict[str, str]:
        """A subprocess environment that sees only this server's Jupyter folders."""
        return environment_for(self.home, self.runtime_dir, **extra)

    def api(self) -> SyncTeraxClient:
        return SyncTeraxClient(self.url, self.token)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def environment_for(home: Path, runtime_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "TERAX"))}
    env.update(
        HOME=str(home),
        PYTHONPATH=PROJECT,
        JUPYTER_NO_CONFIG="1",
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(runtime_dir),
        JUPYTER_PATH=str(home / "share"),
    )
    env.update(extra)
    return env


def _git(root: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Terax", "-c", "user.email=terax@example.invalid", *arguments],
        cwd=root,
        check=True,
        capture_output=True,
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_live_terax(home: Path, config: dict[str, Any] | None = None) -> LiveTerax:
    """A Terax server over a small git repository in ``home``/project, ready to answer;
    ``config`` is more server configuration (``{"AiManager": {...}}``)."""
    root = home / "project"
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "src", "README.md", "notes")
    _git(root, "commit", "-q", "-m", "start")
    port, token = _free_port(), secrets.token_hex(16)
    url = f"http://127.0.0.1:{port}{BASE_URL}"
    arguments = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--ServerApp.jpserver_extensions={'terax_jupyter': True}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.base_url={BASE_URL}",
        "--ServerApp.open_browser=False",
        "--allow-root",
        "--TeraxApp.allow_user_roots=False",
        "--SecretsManager.backend=file",
    ]
    if config:
        config_file = home / "terax_config.json"
        config_file.write_text(json.dumps(config))
        arguments.append(f"--config={config_file}")
    log = home / "server.log"
    environment = environment_for(home, home / "runtime")
    with log.open("wb") as output:
        process = subprocess.Popen(
            arguments,
            cwd=root,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
        )
    server = LiveTerax(url, token, root, home, home / "runtime", process, log)
    try:
        _wait_until_ready(server)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_until_ready(server: LiveTerax) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    with SyncTeraxClient(server.url, server.token, timeout=5) as client:
        while True:
            if server.process.poll() is not None:
                raise RuntimeError(f"the server exited:\n{server.log_tail()}")
            try:
                client.get("info")
                # The runtime file is written once the server listens; discovery reads it.
                if any(server.runtime_dir.glob("jpserver-*.json")):
                    return
            except TeraxAPIError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{server.log_tail()}")
            time.sleep(0.2)


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
