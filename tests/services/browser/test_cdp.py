"""CdpConnection against a scripted DevTools endpoint: answers, errors, events, bounded
queues, and a socket that goes away."""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

import pytest
from websockets.asyncio.server import serve

from terax_jupyter.exceptions import BrowserError, Timeout
from terax_jupyter.services.browser.cdp import CdpConnection, CdpEvent, Subscription

if TYPE_CHECKING:
    from websockets.asyncio.server import Server, ServerConnection


class FakeBrowser:
    """Answers ``Echo``, fails ``Fail``, ignores ``Silent``, sends the events listed in
    ``Emit``'s params, and drops the socket on ``Drop``."""

    def __init__(self) -> None:
        self.connections = 0

    async def handle(self, socket: ServerConnection) -> None:
        self.connections += 1
        async for raw in socket:
            message = json.loads(raw)
            method, params = message["method"], message.get("params", {})
            reply: dict[str, Any] = {"id": message["id"]}
            if "sessionId" in message:
                reply["sessionId"] = message["sessionId"]
            if method == "Silent":
                continue
            if method == "Drop":
                await socket.close()
                return
            if method == "Fail":
                reply["error"] = {"code": -32601, "message": "it failed", "data": "details"}
            elif method == "Emit":
                for event in params["events"]:
                    await socket.send(json.dumps(event))
                reply["result"] = {}
            else:
                reply["result"] = {"echo": params}
            await socket.send(json.dumps(reply))


async def open_fake() -> tuple[Server, str, FakeBrowser]:
    """A fake endpoint (pytest-jupyter runs async tests, not async fixtures)."""
    fake = FakeBrowser()
    server = await serve(fake.handle, "127.0.0.1", 0)
    port = next(iter(server.sockets)).getsockname()[1]
    return server, f"ws://127.0.0.1:{port}/devtools/browser/fake", fake


def event(method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"method": method, "params": params}
    if session is not None:
        message["sessionId"] = session
    return message


async def test_send_returns_the_result_and_a_protocol_error_is_a_browser_error() -> None:
    server, url, _fake = await open_fake()
    connection = await CdpConnection.connect(url)
    try:
        assert await connection.send("Echo", {"a": 1}) == {"echo": {"a": 1}}
        assert await connection.send("Echo", session_id="S1") == {"echo": {}}
        with pytest.raises(BrowserError, match=r"Fail failed: it failed \(details\)"):
            await connection.send("Fail")
        with pytest.raises(Timeout, match=r"did not answer Silent within 0\.2 s"):
            await connection.send("Silent", timeout=0.2)
        assert await connection.send("Echo", {"after": True}) == {"echo": {"after": True}}
    finally:
        await connection.close()
        server.close()
        await server.wait_closed()


async def test_a_lost_socket_fails_every_pending_call_at_once() -> None:
    server, url, _fake = await open_fake()
    connection = await CdpConnection.connect(url, timeout=30)
    try:
        events = connection.subscribe("Page.loadEventFired")
        waiter = connection.event_waiter("Page.frameNavigated")
        pending = [asyncio.create_task(connection.send("Silent")) for _ in range(3)]
        await asyncio.sleep(0.05)
        started = time.monotonic()
        with pytest.raises(BrowserError):
            await connection.send("Drop")
        results = await asyncio.gather(*pending, return_exceptions=True)
        assert time.monotonic() - started < 2
        assert all(isinstance(r, BrowserError) for r in results)
        assert "connection" in str(results[0])
        with pytest.raises(BrowserError):
            await waiter
        with pytest.raises(BrowserError):
            await events.get()
        assert connection.closed
        with pytest.raises(BrowserError, match="Echo"):
            await connection.send("Echo")

        await connection.reconnect()
        assert not connection.closed
        assert await connection.send("Echo", {"back": 1}) == {"echo": {"back": 1}}
    finally:
        await connection.close()
        server.close()
        await server.wait_closed()


async def test_events_reach_the_subscribers_of_their_session_only() -> None:
    server, url, _fake = await open_fake()
    connection = await CdpConnection.connect(url)
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
        server.close()
        await server.wait_closed()


async def test_wait_for_event_matches_a_predicate_and_times_out() -> None:
    server, url, _fake = await open_fake()
    connection = await CdpConnection.connect(url)
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
        server.close()
        await server.wait_closed()


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


async def test_connecting_to_nothing_is_a_browser_error() -> None:
    with pytest.raises(BrowserError, match="cannot connect to the browser"):
        await CdpConnection.connect("ws://127.0.0.1:9/devtools/browser/none", timeout=2)
