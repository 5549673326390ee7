"""What views of a terminal cost the server: a bounded replay per attach, a cap per session,
and nothing kept once a view has gone."""

from __future__ import annotations

import asyncio
import gc
import re
import tracemalloc
import weakref
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.base import CONNECTIONS_KEY, SETTINGS_KEY
from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.pty.scrollback import Scrollback
from terax_jupyter.services.pty.sequences import without_queries
from terax_jupyter.services.pty.session import (
    MAX_QUEUED_CONTROLS,
    REPLAY_CHUNK,
    REPLAY_WINDOW,
    SGR_RESET,
)
from terax_jupyter.services.pty.stream import PtyStreamWebSocket

from .helpers import Recorder, at_prompt, wait_for

if TYPE_CHECKING:
    from terax_jupyter.services.pty.manager import PtyManager
    from terax_jupyter.services.pty.session import PtySession

pytestmark = pytest.mark.usefixtures("server_shell_home")

MIB = 1024 * 1024
QUERIES = (
    b"\x1b[c",
    b"\x1b]11;?\x1b\\",
    b"\x1b[>c",
    b"\x1bP$qm\x1b\\",
    b"\x1b[6n",
    b"\x1b[?2026$p",
    b"\x1b]10;?\x07",
    b"\x1b[5n",
)


@pytest.fixture
def pty(jp_serverapp: Any) -> PtyManager:
    return jp_serverapp.web_app.settings[SETTINGS_KEY].pty  # type: ignore[no-any-return]


async def started(manager: PtyManager) -> PtySession:
    session = await manager.create(shell="bash")
    await at_prompt(session)
    return session


def ring_with_queries(session: PtySession) -> bytes:
    """A ring whose device queries sit across replay chunk boundaries (and inside chunks)."""
    data = bytearray()
    for index in range(1, 6):
        # Queries that begin 1 to 4 bytes before a chunk boundary are split by a naive cut.
        filler = index * REPLAY_CHUNK - len(data) - index
        data += b"".join(b"%07d\n" % (n % 10**7) for n in range(filler // 8))
        data += b"x" * (filler % 8)
        data += QUERIES[index % len(QUERIES)] + b"line\n"
    data += b"tail\n"
    ring = Scrollback(session.scrollback.capacity)
    ring.append(bytes(data))
    session.scrollback = ring
    return bytes(data)


# -- the replay, chunk by chunk -------------------------------------------------------------------


async def test_a_slow_view_holds_a_window_of_the_replay_not_the_ring(
    make_manager: Any,
) -> None:
    manager = make_manager()
    session = await started(manager)
    ring = ring_with_queries(session)
    client = Recorder()
    client.hold()  # its transport takes nothing until released
    session.attach(client)
    await asyncio.sleep(0.2)
    assert 0 < client.held_bytes <= REPLAY_WINDOW + len(SGR_RESET)
    # Taken a little at a time, it gets the rest, a window at a time.
    while client.replay is None:
        client.take_until(0)
        await asyncio.sleep(0.01)
        assert client.held_bytes <= REPLAY_WINDOW + len(SGR_RESET)
    client.release()
    replay = client.replay
    assert replay.startswith(SGR_RESET)
    assert replay[len(SGR_RESET) :] == without_queries(ring)
    for query in QUERIES:
        assert query not in replay, query
    assert len(client.frames) > len(ring) // REPLAY_CHUNK


async def test_output_during_a_replay_follows_it_in_order(make_manager: Any) -> None:
    manager = make_manager()
    session = await started(manager)
    ring_with_queries(session)
    client = Recorder()
    client.hold()
    session.attach(client)
    session.write(b"echo LIVE-$((40+2))\r")
    await wait_for(lambda: b"LIVE-42" in session.scrollback.read()[0], 10, "live output")
    session.resize(101, 31)  # a control message, queued behind the replay too
    await asyncio.sleep(0.1)
    assert b"LIVE-42" not in client.output
    assert {"type": "size", "columns": 101, "rows": 31} not in client.controls
    client.release()
    await client.replayed()
    await wait_for(lambda: b"LIVE-42" in client.output, 10, "the queued output")
    assert b"LIVE-42" not in client.replay
    kinds = [c["type"] for c in client.controls]
    assert kinds.index("replayed") < kinds.index("size")
    assert client.output.index(b"tail\n") < client.output.index(b"LIVE-42")


async def test_a_ring_that_moves_on_during_a_replay_skips_ahead(make_manager: Any) -> None:
    # Limits high enough that the held view neither pauses the program nor is skipped.
    manager = make_manager(scrollback_bytes=256 * 1024, high_water=64 * MIB, client_cap=64 * MIB)
    session = await started(manager)
    session.scrollback.append(b"".join(b"old-%06d\n" % n for n in range(25_000)))
    client = Recorder()
    client.hold()
    session.attach(client)
    # More output than the ring holds, while the view has taken nothing.
    session.write(b"seq -f 'new-%06g' 1 40000\r")
    await wait_for(lambda: b"new-040000" in session.scrollback.read()[0], 20, "the output")
    assert session.scrollback.start > 25_000 * 11  # the old lines are gone from the ring
    client.release()
    replay = await client.replayed()
    assert any(c.get("kind") == "skipped" for c in client.events("notice"))
    assert b"new-" not in replay  # what came after the attach is live output, not replay
    await wait_for(lambda: b"new-040000" in client.output, 10, "the live output")
    live = bytes(client.output[len(replay) :])
    lines = re.findall(rb"new-\d{6}\r\n", live)
    assert lines == [b"new-%06d\r\n" % n for n in range(1, 40_001)]


async def test_a_view_that_leaves_mid_replay_leaves_nothing_behind(make_manager: Any) -> None:
    manager = make_manager()
    session = await started(manager)
    ring_with_queries(session)
    client = Recorder()
    client.hold()
    session.attach(client)
    session.write(b"echo GONE\r")
    await asyncio.sleep(0.2)
    session.detach(client)
    assert session.client_count == 0
    assert session.queued_bytes == 0
    client.release()  # its transport finishing late must not bring it back
    await asyncio.sleep(0.1)
    assert session.client_count == 0
    assert client.replay is None


async def test_a_view_that_reads_nothing_gets_a_bounded_number_of_messages(
    make_manager: Any,
) -> None:
    """A program that sets its title in a loop: a view whose socket takes nothing gets at
    most MAX_QUEUED_CONTROLS messages queued on the server, not one per title."""
    manager = make_manager()
    session = await started(manager)

    class Stuck(Recorder):
        def send_control(self, message: dict[str, Any]) -> asyncio.Future[None]:
            super().send_control(message)
            return asyncio.get_running_loop().create_future()  # never taken

    stuck, reader = Stuck(), Recorder()
    session.attach(stuck)
    session.attach(reader)
    await stuck.replayed()
    await reader.replayed()
    for index in range(3 * MAX_QUEUED_CONTROLS):
        session.broadcast({"type": "title", "title": f"step {index}"})
    assert len(stuck.events("title")) == MAX_QUEUED_CONTROLS
    assert len(reader.events("title")) == 3 * MAX_QUEUED_CONTROLS  # a reader misses nothing


# -- through the server ---------------------------------------------------------------------------


async def _open(jp_ws_fetch: Any, session_id: str) -> Any:
    return await jp_ws_fetch("terax", "api", "pty", session_id, "stream")


async def test_a_terminal_refuses_views_past_its_cap_with_a_reason(
    pty: PtyManager, jp_ws_fetch: Any, jp_fetch: Any
) -> None:
    assert pty.max_clients_per_session == 16
    session = await started(pty)
    other = await started(pty)
    views = [await _open(jp_ws_fetch, session.id) for _ in range(16)]
    await wait_for(lambda: session.client_count == 16, 10, "16 views")
    for attempt in (lambda: _open(jp_ws_fetch, session.id),
                    lambda: jp_fetch("terax", "api", "pty", session.id, "stream")):  # fmt: skip
        with pytest.raises(HTTPClientError) as caught:
            await attempt()
        assert caught.value.code == 503
        body = error_of(caught.value)
        assert body["reason"] == "too_many_connections"
        assert "16 views" in body["message"]
        assert "PtyManager.max_clients_per_session" in body["message"]
    assert session.client_count == 16
    # Another terminal is not affected, and a view that leaves makes room.
    views.append(await _open(jp_ws_fetch, other.id))
    views.pop(0).close()
    await wait_for(lambda: session.client_count == 15, 10, "a view to leave")
    views.append(await _open(jp_ws_fetch, session.id))
    await wait_for(lambda: session.client_count == 16, 10, "the new view")
    for view in views:
        view.close()
    await wait_for(lambda: session.client_count == 0, 10, "every view to leave")


async def test_many_views_of_one_terminal_cost_a_window_each_and_nothing_after(
    pty: PtyManager, jp_serverapp: Any, jp_ws_fetch: Any
) -> None:
    """N views that do not read, of a terminal with a few MiB of scrollback: while they are
    attached each holds a bounded part of the replay; once they close, nothing of them is
    left (not the handlers, not their buffers)."""
    count = 100
    pty.max_clients_per_session = 0
    jp_serverapp.web_app.settings[CONNECTIONS_KEY].per_user = 0
    session = await started(pty)
    await pty.run(session.id, "head -c 3000000 /dev/zero | tr '\\0' x | fold -w 99", timeout=60)
    assert len(session.scrollback) > 3_000_000
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        views = [await _open(jp_ws_fetch, session.id) for _ in range(count)]
        await wait_for(lambda: session.client_count == count, 30, "every view")
        await asyncio.sleep(1.0)  # each replay has gone as far as its view's socket takes
        attached = tracemalloc.get_traced_memory()[0] - baseline
        # Whole replays would be 3 MB each; the kernel's socket buffers are not traced.
        assert attached < count * 512 * 1024, f"{attached // MIB} MiB for {count} views"
        handlers = [
            weakref.ref(o)
            for o in gc.get_objects()
            if isinstance(o, PtyStreamWebSocket) and o.session is session
        ]
        assert len(handlers) == count
        for view in views:
            view.close()
        await wait_for(lambda: session.client_count == 0, 30, "every view to leave")
        del views

        def handlers_left() -> int:
            gc.collect()
            return sum(handler() is not None for handler in handlers)

        # Well within Jupyter's 30 s keep-alive timer, which used to hold each one.
        await wait_for(lambda: handlers_left() == 0, 10, "the closed handlers to be freed")
        after = tracemalloc.get_traced_memory()[0] - baseline
        assert after < 16 * MIB, f"{after // MIB} MiB still held after every view left"
    finally:
        tracemalloc.stop()
    # A view that reads gets the whole scrollback, chunk by chunk, then live output.
    reader = await _open(jp_ws_fetch, session.id)
    frames: list[bytes] = []
    while True:
        message = await asyncio.wait_for(reader.read_message(), 30)
        assert message is not None
        if isinstance(message, bytes):
            frames.append(message)
        elif '"replayed"' in message:
            break
    assert max(len(frame) for frame in frames) <= REPLAY_CHUNK + len(SGR_RESET)
    ring = session.scrollback.read()[0]
    assert b"".join(frames) == SGR_RESET + without_queries(ring)
    reader.close()
