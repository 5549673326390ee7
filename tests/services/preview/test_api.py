"""Dev servers found in real terminal sessions: the stream's offer, the list, the preview."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import time
from typing import TYPE_CHECKING, Any

import psutil
import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.base import SETTINGS_KEY
from terax_jupyter.pytest_plugin import error_of
from tests.services.pty.helpers import wait_for

from .conftest import free_port

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from terax_jupyter.services.pty.manager import PtyManager
    from terax_jupyter.services.pty.session import PtySession

    Api = Callable[..., Awaitable[Any]]

pytestmark = [pytest.mark.every_base_url, pytest.mark.usefixtures("server_shell_home")]

PYTHON = shlex.quote(sys.executable)
# Listens on a port and says nothing about it.
QUIET_SERVER = (
    "import socket, sys, time; s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); "
    "s.listen(); print('ready'); time.sleep(60)"
)


@pytest.fixture
def pty(jp_serverapp: Any) -> PtyManager:
    return jp_serverapp.web_app.settings[SETTINGS_KEY].pty  # type: ignore[no-any-return]


class Stream:
    """The control messages of a session's stream, read in the background."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.controls: list[dict[str, Any]] = []
        self.output = bytearray()
        self._task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        while (message := await self.ws.read_message()) is not None:
            if isinstance(message, bytes):
                self.output += message
            else:
                self.controls.append(json.loads(message))

    def servers(self, event: str = "detected") -> list[dict[str, Any]]:
        return [c for c in self.controls if c.get("type") == "server" and c["event"] == event]

    def signal(self, name: str) -> None:
        self.ws.write_message(json.dumps({"type": "signal", "name": name}))

    def close(self) -> None:
        self.ws.close()
        self._task.cancel()


async def shell_with_stream(
    api: Api, pty: PtyManager, jp_ws_fetch: Any
) -> tuple[PtySession, Stream]:
    described = await api("pty/sessions", method="POST", body={"shell": "bash"})
    session = pty.get(described["id"])
    await wait_for(lambda: session.phase == "input", 15, "prompt")
    stream = Stream(await jp_ws_fetch("terax", "api", "pty", session.id, "stream"))
    await wait_for(lambda: stream.controls, 10, "attached")
    return session, stream


def run(session: PtySession, command: str) -> None:
    session.write(command.encode() + b"\r")


async def test_a_dev_server_is_offered_listed_previewed_and_gone(
    terax_api: Api,
    pty: PtyManager,
    jp_ws_fetch: Any,
    jp_root_dir: Path,
    jp_base_url: str,
    jp_fetch: Any,
) -> None:
    (jp_root_dir / "index.html").write_text("<h1>Hello from the dev server</h1>\n")
    port = free_port()
    session, stream = await shell_with_stream(terax_api, pty, jp_ws_fetch)
    started = time.time()
    run(session, f"{PYTHON} -m http.server {port} --bind 127.0.0.1")
    await wait_for(lambda: stream.servers(), 15, "the server's URL")
    offer = stream.servers()[0]
    assert offer["port"] == port
    assert offer["url"] == f"http://127.0.0.1:{port}/"
    assert offer["sources"] == ["output"]
    assert offer["first_seen"] >= started - 1
    # The listing looks at the session's processes: the listening one is named.
    listed: list[dict[str, Any]] = []

    async def listening() -> bool:
        listed[:] = (await terax_api("preview/servers"))["servers"]
        return bool(listed) and listed[0]["listening"] is True

    deadline = time.monotonic() + 15
    while not await listening():
        assert time.monotonic() < deadline, listed
        await asyncio.sleep(0.2)
    server = listed[0]
    assert server["port"] == port
    assert server["url"] == f"http://127.0.0.1:{port}/"  # as printed
    assert server["sources"] == ["listening", "output"]
    assert server["session_id"] == session.id
    assert server["proxy_path"] == f"{jp_base_url}terax/proxy/{port}/"
    assert server["process"].startswith("python")
    shell = psutil.Process(session.process.pid)
    assert server["pid"] in {p.pid for p in shell.children(recursive=True)}
    assert (await terax_api("preview/servers", params={"session": session.id}))["servers"] == listed
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("preview/servers", params={"session": "0123456789ab"})
    assert (caught.value.code, error_of(caught.value)["reason"]) == (404, "not_found")
    # The preview shows the page the dev server serves.
    page = await jp_fetch("terax", "proxy", f"{port}/")
    assert b"Hello from the dev server" in page.body
    # Offered once, however often it is seen.
    assert len(stream.servers()) == 1
    # Stopped, it goes.
    stream.signal("INT")
    await wait_for(lambda: stream.servers("gone"), 15, "the server to go")
    assert stream.servers("gone") == [{"type": "server", "event": "gone", "port": port}]
    assert (await terax_api("preview/servers"))["servers"] == []
    stream.close()


async def test_urls_split_across_writes_are_found(
    terax_api: Api, pty: PtyManager, jp_ws_fetch: Any
) -> None:
    session, stream = await shell_with_stream(terax_api, pty, jp_ws_fetch)
    # Cut before the port; in colour, cut inside Vite's bold port; and cut with no end at all
    # (taken as it is after a quiet spell, while the command still runs).
    run(session, "printf 'Local:   http://127.0.0.1:'; sleep 0.4; printf '45671/\\n'")
    run(
        session,
        "printf '  \\033[36mhttp://localhost:\\033[1m456'; sleep 0.4; "
        "printf '72\\033[22m/\\033[39m\\n'",
    )
    run(session, "printf 'see http://localhost:%s' 45673; sleep 5")
    await wait_for(lambda: len(stream.servers()) == 3, 15, "three servers")
    found = {s["port"]: s["url"] for s in stream.servers()}
    assert found == {
        45671: "http://127.0.0.1:45671/",
        45672: "http://localhost:45672/",
        45673: "http://localhost:45673",
    }
    assert session.phase == "running"  # the last one came before its command ended
    listed = (await terax_api("preview/servers", params={"session": session.id}))["servers"]
    assert {s["port"] for s in listed} == {45671, 45672, 45673}
    assert all(s["listening"] is None and s["sources"] == ["output"] for s in listed)
    stream.close()


async def test_a_port_listened_on_quietly_is_found(
    terax_api: Api, pty: PtyManager, jp_ws_fetch: Any
) -> None:
    port = free_port()
    session, stream = await shell_with_stream(terax_api, pty, jp_ws_fetch)
    run(session, f"{PYTHON} -c {shlex.quote(QUIET_SERVER)} {port}")
    await wait_for(lambda: stream.servers(), 15, "the listening port")
    offer = stream.servers()[0]
    assert (offer["port"], offer["url"], offer["sources"]) == (
        port,
        f"http://localhost:{port}/",
        ["listening"],
    )
    assert offer["process"].startswith("python")
    assert offer["listening"] is True
    stream.signal("INT")
    await wait_for(lambda: stream.servers("gone"), 15, "the server to go")
    stream.close()


async def test_ports_the_proxy_refuses_are_not_offered(
    terax_api: Api, pty: PtyManager, jp_ws_fetch: Any, jp_http_port: int
) -> None:
    session, stream = await shell_with_stream(terax_api, pty, jp_ws_fetch)
    run(
        session,
        f"echo http://localhost:80/ http://127.0.0.1:{jp_http_port}/lab "
        "http://example.com:8000/ http://10.0.0.1:8001/ http://localhost:45674/",
    )
    await wait_for(lambda: stream.servers(), 15, "a server")
    await asyncio.sleep(0.5)
    assert [s["port"] for s in stream.servers()] == [45674]
    stream.close()


async def test_servers_need_a_token(jp_fetch: Any) -> None:
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch("terax", "api", "preview", "servers", headers={"Authorization": ""})
    assert caught.value.code == 403
