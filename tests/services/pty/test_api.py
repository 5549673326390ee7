"""The terminal API over HTTP and the stream WebSocket, through a real server and real shells."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import shlex
import shutil
import struct
import sys
import termios
import time
from typing import TYPE_CHECKING, Any

import psutil
import pytest
from jupyter_server.auth.authorizer import Authorizer
from tornado.httpclient import HTTPClientError

from terax_jupyter.base import SETTINGS_KEY
from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.pty.session import SGR_RESET

from .helpers import PRODUCER, alive, session_members, stalled, wait_for

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from terax_jupyter.services.pty.manager import PtyManager
    from terax_jupyter.services.pty.session import PtySession

    Api = Callable[..., Awaitable[Any]]

pytestmark = [pytest.mark.every_base_url, pytest.mark.usefixtures("server_shell_home")]

PYTHON = shlex.quote(sys.executable)


@pytest.fixture
def pty(jp_serverapp: Any) -> PtyManager:
    return jp_serverapp.web_app.settings[SETTINGS_KEY].pty  # type: ignore[no-any-return]


async def failure(api: Api, path: str, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as caught:
        await api(path, **kwargs)
    body = error_of(caught.value)
    assert set(body) == {"message", "reason"}
    return caught.value.code, body["reason"]


async def new_session(api: Api, pty: PtyManager, **body: Any) -> PtySession:
    described = await api("pty/sessions", method="POST", body={"shell": "bash", **body})
    session = pty.get(described["id"])
    await wait_for(lambda: session.phase == "input", 15, "prompt")
    return session


class Stream:
    """A stream client: reads only when asked, so it can fall behind or stop like a browser tab."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.output = bytearray()
        self.frames: list[bytes] = []
        self.controls: list[dict[str, Any]] = []
        self.replay: bytes | None = None  # the frames before ``replayed``

    async def read(self, timeout: float = 10) -> bytes | dict[str, Any] | None:
        message = await asyncio.wait_for(self.ws.read_message(), timeout)
        if isinstance(message, bytes):
            self.output += message
            self.frames.append(message)
            return message
        if message is None:
            return None
        control: dict[str, Any] = json.loads(message)
        self.controls.append(control)
        if control.get("type") == "replayed":
            self.replay = b"".join(self.frames)
        return control

    async def until(self, predicate: Callable[[], Any], timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert await self.read(max(0.01, deadline - time.monotonic())) is not None, "closed"

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [c for c in self.controls if c.get("type") == kind]

    def send(self, data: bytes) -> None:
        self.ws.write_message(data, binary=True)

    def control(self, message: dict[str, Any]) -> None:
        self.ws.write_message(json.dumps(message))


async def open_stream(jp_ws_fetch: Any, session_id: str, **params: str) -> Stream:
    stream = Stream(await jp_ws_fetch("terax", "api", "pty", session_id, "stream", params=params))
    await stream.until(lambda: stream.events("attached"))
    return stream


def foreground_program(terminal: int) -> str:
    try:
        with open(f"/proc/{os.tcgetpgrp(terminal)}/comm") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def received_by_kernel(ws: Any) -> int:
    """Bytes the client's kernel (and its WebSocket reader) hold that it has not read yet."""
    sock = ws.stream.socket
    waiting = struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
    return int(waiting) + len(getattr(ws.stream, "_read_buffer", b""))


# -- sessions -------------------------------------------------------------------------------------


async def test_create_list_get_rename_close(
    terax_api: Api, pty: PtyManager, jp_root_dir: Path, jp_fetch: Any
) -> None:
    (jp_root_dir / "work").mkdir()
    created = await terax_api(
        "pty/sessions",
        method="POST",
        body={"shell": "zsh", "name": "build", "cwd": "work", "columns": 100, "rows": 30},
    )
    assert created["name"] == "build"
    assert (created["shell"], created["cwd"]) == ("zsh", str(jp_root_dir / "work"))
    assert (created["columns"], created["rows"], created["clients"]) == (100, 30, 0)
    assert created["exited"] is False
    assert created["exit_code"] is None
    default = await terax_api("pty/sessions", method="POST")
    assert default["cwd"] == str(jp_root_dir)
    assert default["name"] == "Terminal 1"
    listed = (await terax_api("pty/sessions"))["sessions"]
    assert [s["id"] for s in listed] == [created["id"], default["id"]]
    got = await terax_api(f"pty/sessions/{created['id']}")
    assert got["id"] == created["id"]
    assert got["pid"] == created["pid"]
    renamed = await terax_api(
        f"pty/sessions/{created['id']}", method="PATCH", body={"name": "tests ✓"}
    )
    assert renamed["name"] == "tests ✓"
    for body, reason in (
        ({"name": ""}, "invalid_parameter"),
        ({"name": "  \x07 "}, "invalid_parameter"),
        ({"name": "x" * 101}, "invalid_parameter"),
        ({"name": 5}, "invalid_parameter"),
        ({}, "missing_parameter"),
    ):
        assert await failure(
            terax_api, f"pty/sessions/{created['id']}", method="PATCH", body=body
        ) == (400, reason)
    pid = created["pid"]
    await wait_for(lambda: pty.get(created["id"]).integrated, 15, "prompt")
    closed = await jp_fetch("terax", "api", "pty", "sessions", created["id"], method="DELETE")
    assert (closed.code, closed.body) == (204, b"")
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    assert session_members(pid) == []
    for method in ("GET", "DELETE"):
        assert await failure(terax_api, f"pty/sessions/{created['id']}", method=method) == (
            404,
            "not_found",
        )
    assert [s["id"] for s in (await terax_api("pty/sessions"))["sessions"]] == [default["id"]]


async def test_create_refusals(terax_api: Api, jp_root_dir: Path) -> None:
    (jp_root_dir / ".git").mkdir()
    (jp_root_dir / "file.txt").write_text("x")
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"cwd": ".git"}, 403, "path_denied"),
        ({"cwd": "/etc"}, 403, "path_denied"),
        ({"cwd": "/usr"}, 403, "outside_workspace"),
        ({"cwd": "../.."}, 403, "outside_workspace"),
        ({"cwd": "missing"}, 404, "not_found"),
        ({"cwd": "file.txt"}, 400, "not_a_directory"),
        ({"shell": "tcsh-not-here"}, 400, "unknown_shell"),
        ({"shell": "/bin/sh -c id"}, 400, "unknown_shell"),
        ({"shell": 3}, 400, "invalid_parameter"),
        ({"columns": 0}, 400, "invalid_parameter"),
        ({"rows": 501}, 400, "invalid_parameter"),
        ({"columns": True}, 400, "invalid_parameter"),
    ]
    for body, status, reason in cases:
        assert await failure(terax_api, "pty/sessions", method="POST", body=body) == (
            status,
            reason,
        ), body
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("pty/sessions", method="POST", body={"shell": "nope"})
    message = error_of(caught.value)["message"]
    assert "bash" in message
    assert "zsh" in message
    assert "fish" in message
    assert (await terax_api("pty/sessions"))["sessions"] == []


@pytest.mark.parametrize("terax_config", [{"PtyManager": {"max_sessions": 1}}])
async def test_too_many_sessions(terax_api: Api) -> None:
    await terax_api("pty/sessions", method="POST")
    assert await failure(terax_api, "pty/sessions", method="POST") == (413, "too_large")


async def test_run_blocks_text_and_lines(terax_api: Api, pty: PtyManager) -> None:
    session = await new_session(terax_api, pty)
    base = f"pty/sessions/{session.id}"
    result = await terax_api(
        f"{base}/run", method="POST", body={"command": "printf 'ab\\033[1Dc\\n'; echo ✓ done"}
    )
    assert result["block"]["exit_code"] == 0
    assert result["text"] == "abc\n✓ done\n"
    failed = await terax_api(f"{base}/run", method="POST", body={"command": "false", "timeout": 5})
    assert failed["block"]["exit_code"] == 1
    blocks = (await terax_api(f"{base}/blocks"))["blocks"]
    assert [(b["id"], b["exit_code"], b["running"]) for b in blocks] == [
        (1, 0, False),
        (2, 1, False),
    ]
    rendered = await terax_api(f"{base}/blocks/1", params={"format": "rendered"})
    assert rendered["text"] == "ac\n✓ done"
    plain = await terax_api(f"{base}/blocks/1")
    assert (plain["text"], plain["format"]) == ("abc\n✓ done\n", "plain")
    for block in ("3", "0", "-1", "abc", "1e3", "99999999999999"):
        assert await failure(terax_api, f"{base}/blocks/{block}") == (404, "not_found"), block
    assert await failure(terax_api, f"{base}/blocks/1", params={"format": "html"}) == (
        400,
        "invalid_parameter",
    )
    await wait_for(lambda: session.phase == "input", 5, "prompt")
    lines = await terax_api(f"{base}/lines", params={"count": "2"})
    assert lines["count"] == 2
    assert lines["text"].splitlines() == ["MYPROMPT-bash[0]# false", "MYPROMPT-bash[1]#"]
    for count in ("0", "10001", "x"):
        status, _ = await failure(terax_api, f"{base}/lines", params={"count": count})
        assert status == 400


async def test_run_refusals(terax_api: Api, pty: PtyManager) -> None:
    session = await new_session(terax_api, pty)
    run = f"pty/sessions/{session.id}/run"
    for body, reason in (
        ({}, "missing_parameter"),
        ({"command": "   "}, "missing_parameter"),
        ({"command": ["ls"]}, "invalid_parameter"),
        ({"command": "ls", "timeout": 0}, "invalid_parameter"),
        ({"command": "ls", "timeout": "5"}, "invalid_parameter"),
        ({"command": "ls", "timeout": 3601}, "invalid_parameter"),
        ({"command": "ls\nrm x"}, "invalid_parameter"),
    ):
        assert await failure(terax_api, run, method="POST", body=body) == (400, reason), body
    assert await failure(
        terax_api, run, method="POST", body={"command": "sleep 30", "timeout": 0.3}
    ) == (504, "timeout")
    assert await failure(terax_api, run, method="POST", body={"command": "echo x"}) == (
        409,
        "busy",
    )
    assert await failure(
        terax_api, "pty/sessions/0123456789ab/run", method="POST", body={"command": "ls"}
    ) == (404, "not_found")


async def test_run_answers_a_line_the_shell_cannot_run_at_once(
    terax_api: Api, pty: PtyManager
) -> None:
    session = await new_session(terax_api, pty)
    run = f"pty/sessions/{session.id}/run"
    # A timeout far past the test's own: the answer must not wait for it.
    for command, reason in (("echo )", "syntax_error"), ("echo 'open", "incomplete")):
        body = {"command": command, "timeout": 600}
        assert await failure(terax_api, run, method="POST", body=body) == (400, reason)
    result = await terax_api(run, method="POST", body={"command": "echo fine"})
    assert result["text"].strip() == "fine"


@pytest.mark.parametrize(
    "terax_config", [{"PtyManager": {"shell_command": [shutil.which("bash") or "bash", "-i"]}}]
)
async def test_run_needs_the_integration(terax_api: Api, pty: PtyManager) -> None:
    created = await terax_api("pty/sessions", method="POST")
    assert created["shell"] == "bash"
    assert await failure(
        terax_api,
        f"pty/sessions/{created['id']}/run",
        method="POST",
        body={"command": "echo x", "timeout": 2},
    ) == (409, "no_integration")
    assert (await terax_api(f"pty/sessions/{created['id']}"))["integrated"] is False


async def test_history_and_shells(terax_api: Api, pty: PtyManager, jp_home_dir: Path) -> None:
    (jp_home_dir / ".bash_history").write_text(
        "git status\nexport OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx0123\ngit log\n"
    )
    session = await new_session(terax_api, pty)
    await terax_api(
        f"pty/sessions/{session.id}/run", method="POST", body={"command": "git --version"}
    )
    found = await terax_api("pty/history", params={"q": "git ", "limit": "5"})
    assert found["query"] == "git "
    assert [s["command"] for s in found["suggestions"]][:3] == [
        "git --version",
        "git log",
        "git status",
    ]
    everything = await terax_api("pty/history", params={"limit": "200"})
    assert not any("sk-proj" in s["command"] for s in everything["suggestions"])
    for limit in ("0", "201", "many"):
        status, _ = await failure(terax_api, "pty/history", params={"limit": limit})
        assert status == 400
    listed = await terax_api("pty/shells")
    assert {"bash", "zsh", "fish"} <= set(listed["shells"])
    assert listed["default"] in listed["shells"]


# -- the stream -----------------------------------------------------------------------------------


async def test_stream_round_trip(
    terax_api: Api, pty: PtyManager, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    session = await new_session(terax_api, pty)
    stream = await open_stream(jp_ws_fetch, session.id, columns="120", rows="40")
    hello = stream.events("attached")[0]
    assert hello["session"]["id"] == session.id
    assert hello["nonce"] == session.nonce
    assert (session.columns, session.rows) == (120, 40)
    await stream.until(lambda: b"MYPROMPT-bash" in stream.output)
    stream.send(b"echo strea")
    stream.control({"type": "input", "data": "m-ok; (exit 4)\r"})
    await stream.until(lambda: b"stream-ok" in stream.output.split(b"echo strea")[-1])
    await stream.until(lambda: [e for e in stream.events("block") if e["event"] == "end"])
    [end] = [e for e in stream.events("block") if e["event"] == "end"]
    assert end["block"]["command"] == "echo stream-ok; (exit 4)"
    assert end["block"]["exit_code"] == 4
    stream.control({"type": "resize", "columns": 90, "rows": 20})
    stream.control({"type": "resize", "columns": "90", "rows": 20})  # ignored
    stream.control({"type": "dance"})
    stream.ws.write_message("not json")
    await stream.until(lambda: (session.columns, session.rows) == (90, 20))

    # Every view hears of a new size (a notebook's view follows it), once, after the output.
    def sizes() -> list[tuple[int, int]]:
        return [(e["columns"], e["rows"]) for e in stream.events("size")]

    await stream.until(lambda: (90, 20) in sizes())
    assert sizes()[-1] == (90, 20)
    assert sizes().count((90, 20)) == 1
    stream.send(b"sleep 30\r")
    await stream.until(lambda: len(stream.events("block")) == 3)
    # Once sleep runs as the terminal's foreground job, a signal from the view reaches it.
    terminal = session.process.fd  # type: ignore[attr-defined]
    await wait_for(lambda: foreground_program(terminal) == "sleep", 5, "sleep in the foreground")
    stream.control({"type": "signal", "name": "int"})
    await stream.until(lambda: len(stream.events("block")) == 4)
    assert stream.events("block")[-1]["block"]["exit_code"] == 130
    assert (await terax_api(f"pty/sessions/{session.id}"))["clients"] == 1
    stream.send(b"exit 9\r")
    await stream.until(lambda: stream.events("exit"))
    assert stream.events("exit") == [{"type": "exit", "code": 9}]
    # It stays listed while the view is open, and goes when the view does.
    assert (await terax_api(f"pty/sessions/{session.id}"))["exit_code"] == 9
    stream.ws.close()
    await wait_for(lambda: session.id not in pty.sessions, 5, "forgotten")


async def test_stream_refusals(terax_api: Api, pty: PtyManager, jp_ws_fetch: Any) -> None:
    for session_id in ("0123456789ab", "..", "x" * 300):
        with pytest.raises(HTTPClientError) as caught:
            await jp_ws_fetch("terax", "api", "pty", session_id, "stream")
        assert caught.value.code == 404, session_id


class NoExecute(Authorizer):
    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return action != "execute"


@pytest.mark.parametrize("terax_config", [{"ServerApp": {"authorizer_class": NoExecute}}])
async def test_stream_needs_execute(terax_api: Api, jp_ws_fetch: Any) -> None:
    created = await terax_api("pty/sessions", method="POST")
    with pytest.raises(HTTPClientError) as caught:
        await jp_ws_fetch("terax", "api", "pty", created["id"], "stream")
    assert caught.value.code == 403
    assert (await terax_api(f"pty/sessions/{created['id']}"))["clients"] == 0


async def test_reattach_replays_what_happened_meanwhile(
    terax_api: Api, pty: PtyManager, jp_ws_fetch: Any
) -> None:
    session = await new_session(terax_api, pty)
    first = await open_stream(jp_ws_fetch, session.id)
    first.send(b"printf '\\033[1;32mbefore\\n'\r")
    await first.until(lambda: b"before\r\n" in first.output)
    first.ws.close()
    await wait_for(lambda: session.client_count == 0, 5, "detached")
    await terax_api(
        f"pty/sessions/{session.id}/run",
        method="POST",
        body={"command": "printf '\\033[1;31m%s\\n' while-away"},
    )
    second = await open_stream(jp_ws_fetch, session.id)
    await second.until(lambda: second.replay is not None)
    replay = second.replay
    assert replay is not None
    assert replay.startswith(SGR_RESET)
    assert b"before\r\n" in replay
    assert b"while-away\r\n" in replay
    assert replay.index(b"before") < replay.index(b"while-away")


@pytest.mark.parametrize("jp_base_url", ["/"])
async def test_reattach_to_a_full_screen_program(
    terax_api: Api, pty: PtyManager, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "pager.txt").write_text("".join(f"PAGER-LINE-{i}\n" for i in range(200)))
    session = await new_session(terax_api, pty)
    first = await open_stream(jp_ws_fetch, session.id, columns="80", rows="24")
    first.send(b"less pager.txt\r")
    await first.until(lambda: {"type": "alt_screen", "active": True} in first.controls)
    await first.until(lambda: b"PAGER-LINE-10" in first.output)
    first.ws.close()
    await wait_for(lambda: session.client_count == 0, 5, "detached")
    second = await open_stream(jp_ws_fetch, session.id, columns="80", rows="24")
    await second.until(lambda: second.replay is not None)
    replay = second.replay
    assert replay is not None
    # The replay stops where the program switched screens; the program redraws itself.
    assert replay.startswith(SGR_RESET)
    assert replay.endswith(b"\x1b[?1049h")
    assert b"less pager.txt" in replay
    assert b"PAGER-LINE" not in replay
    await second.until(lambda: b"PAGER-LINE-10" in second.output)
    second.send(b"q")
    await second.until(lambda: {"type": "alt_screen", "active": False} in second.controls)


# -- flow control ---------------------------------------------------------------------------------


@pytest.mark.parametrize("jp_base_url", ["/"])
async def test_a_paused_browser_stalls_the_program(
    terax_api: Api, pty: PtyManager, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "producer.py").write_text(PRODUCER)
    session = await new_session(terax_api, pty)
    stream = await open_stream(jp_ws_fetch, session.id)
    await stream.until(lambda: b"MYPROMPT" in stream.output)
    memory = psutil.Process().memory_info().rss
    stream.send(f"{PYTHON} producer.py 200000000 progress\r".encode())
    # The client reads nothing more: its socket fills, then the session's queue.
    await wait_for(lambda: session.paused, 15, "paused")
    made = await asyncio.wait_for(stalled(jp_root_dir / "progress"), 15)
    assert made < 16 * 1024 * 1024, made  # of 200 MB
    assert session.queued_bytes <= session.limits.high_water + 512 * 1024
    assert psutil.Process().memory_info().rss - memory < 48 * 1024 * 1024
    # Reading again lets it go on.
    await stream.until(lambda: len(stream.output) > made // 2, 15)
    await wait_for(lambda: (jp_root_dir / "progress").read_text().strip() != str(made), 10)
    stream.send(b"\x03")
    await stream.until(lambda: [e for e in stream.events("block") if e["event"] == "end"], 20)


async def read_slowly(
    stream: Stream, rate: float, until: Callable[[], bool], acks: bool, timeout: float = 30
) -> None:
    """Read at about ``rate`` bytes a second (acknowledging what was read) until ``until()``."""
    started, base = time.monotonic(), len(stream.output)
    unacked = 0
    deadline = started + timeout
    while not until():
        before = len(stream.output)
        await stream.read(max(0.01, deadline - time.monotonic()))
        unacked += len(stream.output) - before
        if acks and unacked >= 16 * 1024:
            stream.control({"type": "ack", "bytes": unacked})
            unacked = 0
        ahead = started + (len(stream.output) - base) / rate - time.monotonic()
        if ahead > 0:
            await asyncio.sleep(ahead)
    if acks and unacked:
        stream.control({"type": "ack", "bytes": unacked})


@pytest.mark.parametrize("jp_base_url", ["/"])
@pytest.mark.parametrize("acks", [True, False], ids=["acks", "transport"])
async def test_interrupt_with_a_slow_browser(
    terax_api: Api, pty: PtyManager, jp_ws_fetch: Any, jp_root_dir: Path, acks: bool
) -> None:
    (jp_root_dir / "producer.py").write_text(PRODUCER)
    session = await new_session(terax_api, pty)
    stream = await open_stream(jp_ws_fetch, session.id, **({"acks": "1"} if acks else {}))
    await read_slowly(stream, 5e6, lambda: b"MYPROMPT" in stream.output, acks)
    stream.send(f"{PYTHON} producer.py 500000000 progress\r".encode())
    await read_slowly(stream, 5e6, lambda: len(stream.output) > 3_000_000, acks)
    sent_at = len(stream.output)
    already_here = received_by_kernel(stream.ws)
    stream.send(b"\x03")
    started = time.monotonic()
    await read_slowly(
        stream,
        5e6,
        lambda: (
            any(e["event"] == "end" for e in stream.events("block"))
            and b"MYPROMPT" in stream.output[sent_at:]
        ),
        acks,
    )
    assert stream.events("block")[-1]["block"]["exit_code"] == 130
    after = len(stream.output) - sent_at
    if acks:
        # What the server had let out, and no more, arrives after the Ctrl-C.
        assert after < 1024 * 1024, after
        assert time.monotonic() - started < 2
    else:
        # Without acks the server cannot see what the client's socket buffered (megabytes,
        # as the kernel grows its window); what it sent after that is still small.
        assert after - already_here < 1024 * 1024, (after, already_here)


@pytest.mark.parametrize("jp_base_url", ["/"])
@pytest.mark.parametrize(
    "terax_config", [{"PtyManager": {"lag_grace": 0.3, "client_cap": 1024 * 1024}}]
)
async def test_a_stuck_browser_does_not_hold_up_another(
    terax_api: Api, pty: PtyManager, jp_ws_fetch: Any, jp_root_dir: Path
) -> None:
    (jp_root_dir / "producer.py").write_text(PRODUCER)
    session = await new_session(terax_api, pty)
    stuck = await open_stream(jp_ws_fetch, session.id)
    live = await open_stream(jp_ws_fetch, session.id)
    await stuck.until(lambda: b"MYPROMPT" in stuck.output)
    live.send(f"{PYTHON} producer.py 40000000 progress\r".encode())
    # The live view gets all 40 MB although the other reads nothing at all.
    await live.until(lambda: [e for e in live.events("block") if e["event"] == "end"], timeout=60)
    assert live.events("block")[-1]["block"]["exit_code"] == 0
    assert live.output.count(b"y" * 1023 + b"\r\n") >= 40_000_000 // 1024
    # The stuck one, reading again, is told what it missed.
    await stuck.until(lambda: stuck.events("notice"), timeout=30)
    [notice] = stuck.events("notice")
    assert notice["kind"] == "skipped"
    assert notice["bytes"] > 30_000_000
    assert len(stuck.output) + notice["bytes"] >= 40_000_000
    await stuck.until(lambda: stuck.events("block"))
    assert stuck.events("block")[-1]["block"]["exit_code"] == 0


async def test_close_through_the_api_ends_an_attached_session(
    terax_api: Api, pty: PtyManager, jp_ws_fetch: Any
) -> None:
    session = await new_session(terax_api, pty)
    stream = await open_stream(jp_ws_fetch, session.id)
    stream.send(b"sleep 1000 &\r")
    await stream.until(lambda: len(session_members(session.process.pid)) >= 2)
    members = session_members(session.process.pid)
    await terax_api(f"pty/sessions/{session.id}", method="DELETE")
    await stream.until(lambda: stream.events("closed") and stream.events("exit"))
    assert not any(alive(pid) for pid in members)
