"""CdpConnection over a pipe to a scripted browser: answers, errors, events, bounded queues,
NUL framing, shared pipes, event loops taking over, and a browser that goes away."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from typing import Any

import pytest

from terax_jupyter.exceptions import BrowserError, Timeout
from terax_jupyter.services.browser.cdp import CdpConnection, CdpEvent, CdpPipe, Subscription


class FakeBrowser:
    """The other ends of a ``CdpPipe``, served by a thread as Chromium does on fds 3 and 4:
    answers ``Echo``, fails ``Fail``, ignores ``Silent``, sends the events listed in
    ``Emit``'s params, answers ``Big`` with ``size`` bytes, writes ``Raw``'s pieces as they are,
    and closes its ends on ``Drop``."""

    def __init__(self, *, max_message: int | None = None) -> None:
        self._reads, we_write = os.pipe()
        we_read, self._writes = os.pipe()
        extra = {} if max_message is None else {"max_message": max_message}
        self.pipe = CdpPipe(we_read, we_write, **extra)
        self.received: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        buffer = b""
        try:
            while True:
                chunk = os.read(self._reads, 65536)
                if not chunk:
                    return
                buffer += chunk
                while b"\0" in buffer:
                    raw, buffer = buffer.split(b"\0", 1)
                    if not self._handle(json.loads(raw)):
                        return
        finally:
            for fd in (self._reads, self._writes):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._writes, json.dumps(message).encode() + b"\0")

    def _handle(self, message: dict[str, Any]) -> bool:
        self.received.append(message)
        method, params = message["method"], message.get("params", {})
        reply: dict[str, Any] = {"id": message["id"]}
        if "sessionId" in message:
            reply["sessionId"] = message["sessionId"]
        if method == "Silent":
            return True
        if method == "Drop":
            return False
        if method == "Fail":
            reply["error"] = {"code": -32601, "message": "it failed", "data": "details"}
        elif method == "Emit":
            for event in params["events"]:
                self._send(event)
            reply["result"] = {}
        elif method == "Big":
            reply["result"] = {"data": "x" * params["size"]}
        elif method == "Raw":
            for piece in params["pieces"]:  # separate writes, read separately
                os.write(self._writes, piece.encode("latin-1"))
                time.sleep(0.05)
            reply["result"] = {}
        else:
            reply["result"] = {"echo": params}
        self._send(reply)
        return True

    def stop(self) -> None:
        self.pipe.close()  # the thread sees end of file and ends
        self._thread.join(5)


def event(method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"method": method, "params": params}
    if session is not None:
        message["sessionId"] = session
    return message


async def test_send_returns_the_result_and_a_protocol_error_is_a_browser_error() -> None:
    fake = FakeBrowser()
    connection = await CdpConnection.connect(fake.pipe)
    try:
        assert await connection.send("Echo", {"a": 1}) == {"echo": {"a": 1}}
        assert await connection.send("Echo", session_id="S1") == {"echo": {}}
        assert fake.received[1]["sessionId"] == "S1"
        with pytest.raises(BrowserError, match=r"Fail failed: it failed \(details\)"):
            await connection.send("Fail")
        with pytest.raises(Timeout, match=r"did not answer Silent within 0\.2 s"):
            await connection.send("Silent", timeout=0.2)
        assert await connection.send("Echo", {"after": True}) == {"echo": {"after": True}}
    finally:
        await connection.close()
        fake.stop()


async def test_messages_are_framed_by_nul_whatever_the_reads_cut() -> None:
    fake = FakeBrowser()
    connection = await CdpConnection.connect(fake.pipe)
    try:
        # Bigger than a pipe's buffer both ways: written and read in many pieces.
        text = "é\u2028" * 150_000
        assert await connection.send("Echo", {"text": text}) == {"echo": {"text": text}}
        # Two events and half of a third in one write, the rest in the next.
        events = connection.subscribe("Page.loadEventFired")
        first = json.dumps(event("Page.loadEventFired", n=1)) + "\0"
        second = json.dumps(event("Page.loadEventFired", n=2)) + "\0"
        third = json.dumps(event("Page.loadEventFired", n=3))
        await connection.send("Raw", {"pieces": [first + second + third[:10], third[10:] + "\0"]})
        assert [(await events.get(timeout=2)).params["n"] for _ in range(3)] == [1, 2, 3]
        # Not JSON, or not an object: ignored; the pipe goes on.
        await connection.send("Raw", {"pieces": ["not json\0[1, 2]\0"]})
        assert await connection.send("Echo", {"still": 1}) == {"echo": {"still": 1}}
    finally:
        await connection.close()
        fake.stop()


async def test_a_message_over_the_limit_fails_its_call_and_the_next_ones_work() -> None:
    fake = FakeBrowser(max_message=4096)
    connection = await CdpConnection.connect(fake.pipe)
    try:
        with pytest.raises(BrowserError, match="Big: the browser's answer was over 4 KiB"):
            await connection.send("Big", {"size": 20_000}, timeout=5)
        assert await connection.send("Big", {"size": 100}) == {"data": "x" * 100}
    finally:
        await connection.close()
        fake.stop()


async def test_a_closed_pipe_fails_every_pending_call_at_once() -> None:
    fake = FakeBrowser()
    connection = await CdpConnection.connect(fake.pipe, timeout=60)
    try:
        events = connection.subscribe("Page.loadEventFired")
        waiter = connection.event_waiter("Page.frameNavigated")
        pending = [asyncio.create_task(connection.send("Silent")) for _ in range(3)]
        await asyncio.sleep(0.05)
        with pytest.raises(BrowserError, match="closed its DevTools pipe"):
            await asyncio.wait_for(connection.send("Drop"), 10)
        results = await asyncio.wait_for(asyncio.gather(*pending, return_exceptions=True), 10)
        assert all(isinstance(r, BrowserError) for r in results)
        assert "Silent: the browser closed its DevTools pipe" in str(results[0])
        with pytest.raises(BrowserError):
            await waiter
        with pytest.raises(BrowserError):
            await events.get()
        assert connection.closed
        assert fake.pipe.lost is not None
        with pytest.raises(BrowserError, match="Echo"):
            await connection.send("Echo")
        # A pipe whose browser is gone cannot be joined again.
        with pytest.raises(BrowserError, match="cannot connect to the browser"):
            await connection.reconnect()
        with pytest.raises(BrowserError, match="cannot connect to the browser"):
            await CdpConnection.connect(fake.pipe)
    finally:
        await connection.close()
        fake.stop()


async def test_a_closed_connection_can_rejoin_and_shares_the_pipe_with_others() -> None:
    fake = FakeBrowser()
    first = await CdpConnection.connect(fake.pipe)
    second = await CdpConnection.connect(fake.pipe)
    try:
        # Concurrent calls on both: each answer reaches the call that asked.
        calls = [first.send("Echo", {"n": n}) for n in range(20)]
        calls += [second.send("Echo", {"n": 100 + n}) for n in range(20)]
        answers = await asyncio.gather(*calls)
        assert [a["echo"]["n"] for a in answers] == [*range(20), *range(100, 120)]
        heard = second.subscribe("Target.targetCreated")
        await first.send("Emit", {"events": [event("Target.targetCreated", n=1)]})
        assert (await heard.get(timeout=2)).params == {"n": 1}  # events reach every one

        await first.close()
        with pytest.raises(BrowserError, match="Echo: the browser connection was closed"):
            await first.send("Echo")
        assert await second.send("Echo", {"on": 1}) == {"echo": {"on": 1}}
        await first.reconnect()
        assert not first.closed
        assert await first.send("Echo", {"back": 1}) == {"echo": {"back": 1}}
    finally:
        await first.close()
        await second.close()
        fake.stop()


async def test_events_reach_the_subscribers_of_their_session_only() -> None:
    fake = FakeBrowser()
    connection = await CdpConnection.connect(fake.pipe)
    try:
        of_a = connection.subscribe("Page.loadEventFired", "A")
        of_any = connection.subscribe("Page.loadEventFired")
        browser_level = connection.subscribe(None, None)
        heard: list[CdpEvent] = []
        remove = connection.add_listener("Target.targetCreated", heard.append)
        await connection.send(
            "Emit",
            {
                "events": [
                    event("Page.loadEventFired", "A", n=1),
                    event("Page.loadEventFired", "B", n=2),
                    event("Target.targetCreated", None, n=3),
                ]
            },
        )
        assert (await of_a.get(timeout=1)).params == {"n": 1}
        assert [(await of_any.get(timeout=1)).params["n"] for _ in range(2)] == [1, 2]
        first = await browser_level.get(timeout=1)
        assert (first.method, first.session_id) == ("Target.targetCreated", None)
        assert [e.params for e in heard] == [{"n": 3}]
        with pytest.raises(Timeout):
            await of_a.get(timeout=0.1)
        remove()
        of_a.close()
        await connection.send("Emit", {"events": [event("Target.targetCreated", None, n=4)]})
        assert len(heard) == 1
        assert [e async for e in of_a] == []  # closed: iteration ends
    finally:
        await connection.close()
        fake.stop()


async def test_wait_for_event_matches_a_predicate_and_times_out() -> None:
    fake = FakeBrowser()
    connection = await CdpConnection.connect(fake.pipe)
    try:
        waiting = asyncio.create_task(
            connection.wait_for_event(
                "Page.lifecycleEvent", lambda p: p["name"] == "load", timeout=2
            )
        )
        await asyncio.sleep(0)
        lifecycle = [event("Page.lifecycleEvent", "S", name=n) for n in ("init", "load")]
        await connection.send("Emit", {"events": lifecycle})
        found = await waiting
        assert found.params == {"name": "load"}
        assert found.session_id == "S"
        with pytest.raises(Timeout, match=r"no Page\.lifecycleEvent event within 0\.1 s"):
            await connection.wait_for_event("Page.lifecycleEvent", timeout=0.1)
    finally:
        await connection.close()
        fake.stop()


async def test_a_full_subscription_drops_its_oldest_events_and_counts_them() -> None:
    subscription = Subscription("Network.dataReceived", maxsize=3)
    for n in range(5):
        subscription.put(CdpEvent("Network.dataReceived", {"n": n}))
    assert len(subscription) == 3
    assert subscription.dropped == 2
    assert [(await subscription.get()).params["n"] for _ in range(3)] == [2, 3, 4]
    subscription.put(CdpEvent("Network.dataReceived", {"n": 5}))
    subscription.close()
    subscription.put(CdpEvent("Network.dataReceived", {"n": 6}))  # ignored once closed
    assert [e.params["n"] async for e in subscription] == [5]
    with pytest.raises(ValueError, match="at least 1"):
        Subscription(None, maxsize=0)


def test_a_pipe_moves_to_a_new_loop_once_its_old_one_ended_and_not_before() -> None:
    fake = FakeBrowser()

    async def echo(n: int) -> Any:
        connection = await CdpConnection.connect(fake.pipe)
        return await connection.send("Echo", {"n": n})  # left connected on purpose

    try:
        # Each asyncio.run is a new loop; the connection of the last one is left behind.
        assert asyncio.run(echo(1)) == {"echo": {"n": 1}}
        assert asyncio.run(echo(2)) == {"echo": {"n": 2}}

        # A loop running in another thread holds it: this one is refused, not mixed in.
        held, release = threading.Event(), threading.Event()

        async def hold() -> None:
            await CdpConnection.connect(fake.pipe)
            held.set()
            await asyncio.to_thread(release.wait, 10)

        holder = threading.Thread(target=asyncio.run, args=(hold(),))
        holder.start()
        assert held.wait(10)
        with pytest.raises(BrowserError, match="driven from another event loop"):
            asyncio.run(echo(3))
        release.set()
        holder.join(10)
        assert asyncio.run(echo(4)) == {"echo": {"n": 4}}
    finally:
        fake.stop()


async def test_a_browser_that_never_reads_its_pipe_fails_calls_instead_of_growing() -> None:
    reads, we_write = os.pipe()
    we_read, writes = os.pipe()
    pipe = CdpPipe(we_read, we_write)
    connection = await CdpConnection.connect(pipe)
    try:
        big = "y" * (1024 * 1024)

        async def flood() -> None:
            for _ in range(40):  # 40 MiB: more than the 16 MiB that may wait
                with contextlib.suppress(Timeout):
                    await connection.send("Echo", {"big": big}, timeout=0.01)

        with pytest.raises(BrowserError, match="stopped reading its DevTools pipe"):
            await flood()
    finally:
        await connection.close()
        pipe.close()
        os.close(reads)
        os.close(writes)
