"""The agent's event stream: numbered events per session, a replay ring, bounded subscribers.

Every event a run produces gets the session's next sequence number and lands in a ring, so a
client that reloads asks for the events after the last one it saw (``after=<seq>``); what
is older than the ring it reads back through REST (messages are stored as they stream). A
subscriber that falls ``QUEUE_LIMIT`` events behind is cut off with an ``overflow`` event
rather than buffered without bound; it reconnects with ``after``. The events are declared in
wire.py (``resync``, ``overflow`` and ``deleted`` are the hub's own).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from terax_jupyter.services.ai.wire import AiEvent

RING_SIZE = 4000
QUEUE_LIMIT = 10_000


class Subscription:
    """One listener's queue of events; ``None`` in the queue means the stream has ended."""

    def __init__(self, hub: EventHub, session_id: str) -> None:
        self.hub = hub
        self.session_id = session_id
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.closed = False

    def push(self, event: dict[str, Any]) -> None:
        if self.closed:
            return
        if self.queue.qsize() >= QUEUE_LIMIT:
            self.queue.put_nowait({"type": "overflow", "seq": event["seq"] - 1})
            self.close()
            return
        self.queue.put_nowait(event)

    async def next(self) -> dict[str, Any] | None:
        return await self.queue.get()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)
            self.hub.unsubscribe(self)


class _SessionLog:
    def __init__(self) -> None:
        self.seq = 0
        self.ring: deque[dict[str, Any]] = deque(maxlen=RING_SIZE)
        self.subscribers: set[Subscription] = set()


class EventHub:
    """Numbered events per session, fanned out to subscribers (all on the event loop)."""

    def __init__(self) -> None:
        self._logs: dict[str, _SessionLog] = {}

    def last_seq(self, session_id: str) -> int:
        log = self._logs.get(session_id)
        return log.seq if log else 0

    def publish(
        self, session_id: str, event: AiEvent, *, run_id: str | None = None
    ) -> dict[str, Any]:
        """Number ``event`` (a declaration of wire.py) and hand it to the subscribers. Called
        by ``AgentRuntime.publish`` only, which keeps events in order with their writes."""
        log = self._logs.setdefault(session_id, _SessionLog())
        log.seq += 1
        numbered: dict[str, Any] = {
            **event,
            "seq": log.seq,
            "session_id": session_id,
            "time": time.time(),
        }
        if run_id is not None:
            numbered["run_id"] = run_id
        log.ring.append(numbered)
        for subscriber in list(log.subscribers):
            subscriber.push(numbered)
        return numbered

    def subscribe(self, session_id: str, *, after: int | None = None) -> Subscription:
        """Listen from now on; with ``after``, first replay the ring's later events (or a
        ``resync`` event when some of them have already left the ring)."""
        log = self._logs.setdefault(session_id, _SessionLog())
        subscription = Subscription(self, session_id)
        if after is not None and after < log.seq:
            oldest = log.ring[0]["seq"] if log.ring else log.seq + 1
            if after + 1 < oldest:
                subscription.push({"type": "resync", "seq": log.seq, "session_id": session_id})
            for event in log.ring:
                if event["seq"] > after:
                    subscription.push(event)
        log.subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        log = self._logs.get(subscription.session_id)
        if log is not None:
            log.subscribers.discard(subscription)

    def forget(self, session_id: str) -> None:
        """A deleted session: end its subscribers' streams and drop its ring."""
        log = self._logs.pop(session_id, None)
        if log is None:
            return
        for subscriber in list(log.subscribers):
            subscriber.push({"type": "deleted", "seq": log.seq + 1, "session_id": session_id})
            subscriber.close()
