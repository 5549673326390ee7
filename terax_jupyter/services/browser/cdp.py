"""A Chrome DevTools Protocol client over one WebSocket: calls, events, and failure.

One ``CdpConnection`` speaks to the browser endpoint; pages are flat sessions on it
(``Target.attachToTarget`` with ``flatten``), addressed by ``session_id``. A reader task owns the
socket's receiving side: an answer resolves the future of its call, an event goes to

- listeners (``add_listener``): plain callbacks run in the reader, for events that must be
  answered, never dropped (``Fetch.requestPaused``); they must not block;
- subscriptions (``subscribe``): bounded queues for consumers that may fall behind; when one is
  full its oldest event is dropped and counted, so a flood of console or network events can
  never grow memory;
- waiters (``event_waiter``/``wait_for_event``): one-shot futures with a predicate.

When the socket closes (the browser crashed, was killed, or closed) every pending call fails at
once with ``BrowserError``, subscriptions end with that error after their buffered events, and
waiters fail too; no call hangs. Sessions die with the socket that attached them, so
``reconnect`` opens a fresh socket to the same browser for new sessions; it does not revive old
ones.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from terax_jupyter.exceptions import BrowserError, Timeout

if TYPE_CHECKING:
    from collections.abc import Callable

    from websockets.asyncio.client import ClientConnection

__all__ = ["ANY_SESSION", "CdpConnection", "CdpEvent", "Subscription"]

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a full-page screenshot in base64 fits
DEFAULT_TIMEOUT = 30.0
DEFAULT_QUEUE = 256

ANY_SESSION: Any = object()  # match events of every session and of the browser itself


@dataclass(frozen=True)
class CdpEvent:
    method: str
    params: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None


def _matches(wanted_method: str | None, wanted_session: Any, event: CdpEvent) -> bool:
    if wanted_method is not None and wanted_method != event.method:
        return False
    return wanted_session is ANY_SESSION or wanted_session == event.session_id


class Subscription:
    """A bounded queue of matching events; iterate it with ``async for`` or ``await get()``.

    When full, the oldest event is dropped and ``dropped`` counts it. Iteration stops after
    ``close()``; if the connection was lost it raises ``BrowserError`` once the buffered events
    are read. Meant for one consumer.
    """

    def __init__(
        self,
        method: str | None,
        session_id: Any = ANY_SESSION,
        *,
        maxsize: int = DEFAULT_QUEUE,
        on_close: Callable[[Subscription], None] | None = None,
    ) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.method = method
        self.session_id = session_id
        self.maxsize = maxsize
        self.dropped = 0
        self._events: collections.deque[CdpEvent] = collections.deque()
        self._ready = asyncio.Event()
        self._closed = False
        self._error: BrowserError | None = None
        self._on_close = on_close

    def __len__(self) -> int:
        return len(self._events)

    @property
    def closed(self) -> bool:
        return self._closed

    def matches(self, event: CdpEvent) -> bool:
        return _matches(self.method, self.session_id, event)

    def put(self, event: CdpEvent) -> None:
        if self._closed:
            return
        if len(self._events) >= self.maxsize:
            self._events.popleft()
            self.dropped += 1
        self._events.append(event)
        self._ready.set()

    async def get(self, timeout: float | None = None) -> CdpEvent:
        """The next event; ``Timeout`` after ``timeout`` seconds, ``BrowserError`` if the
        connection was lost, ``StopAsyncIteration`` once closed and drained."""
        try:
            await asyncio.wait_for(self._filled(), timeout)
        except asyncio.TimeoutError:
            raise Timeout(f"no {self.method or 'event'} within {timeout:g} s") from None
        return self._events.popleft()

    async def _filled(self) -> None:
        while not self._events:
            if self._error is not None:
                raise self._error
            if self._closed:
                raise StopAsyncIteration
            self._ready.clear()
            await self._ready.wait()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> CdpEvent:
        return await self.get()

    def close(self, error: BrowserError | None = None) -> None:
        """Stop receiving; buffered events can still be read (then iteration ends)."""
        if self._closed:
            return
        self._closed = True
        self._error = error
        self._ready.set()
        if self._on_close is not None:
            self._on_close(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _Listener:
    method: str | None
    session_id: Any
    callback: Callable[[CdpEvent], None]


@dataclass
class _Waiter:
    method: str
    session_id: Any
    predicate: Callable[[dict[str, Any]], bool] | None
    future: asyncio.Future[CdpEvent]


class CdpConnection:
    """The DevTools WebSocket of one browser. ``await CdpConnection.connect(url)``."""

    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.url = url
        self.timeout = timeout
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, str | None, asyncio.Future[dict[str, Any]]]] = {}
        self._subscriptions: list[Subscription] = []
        self._listeners: list[_Listener] = []
        self._waiters: list[_Waiter] = []
        self._lost: str | None = "not connected"
        self._closing = False

    @classmethod
    async def connect(cls, url: str, *, timeout: float = DEFAULT_TIMEOUT) -> CdpConnection:
        connection = cls(url, timeout=timeout)
        await connection._open()
        return connection

    @property
    def closed(self) -> bool:
        """Whether the socket is gone (closed by us, or lost)."""
        return self._lost is not None

    @property
    def close_reason(self) -> str | None:
        return self._lost

    async def _open(self) -> None:
        try:
            self._socket = await connect(
                self.url,
                max_size=MAX_MESSAGE_BYTES,
                compression=None,
                proxy=None,  # loopback: never through a proxy from the environment
                open_timeout=self.timeout,
                ping_interval=None,  # a busy renderer must not get the socket closed
                close_timeout=2,
            )
        except (OSError, InvalidHandshake, InvalidURI, asyncio.TimeoutError) as error:
            raise BrowserError(f"cannot connect to the browser at {self.url}: {error}") from None
        self._lost = None
        self._closing = False
        self._reader = asyncio.create_task(self._read(self._socket), name="terax-cdp-reader")

    async def reconnect(self) -> None:
        """A fresh socket to the same browser after a drop (or a close). Sessions attached
        over the old socket are gone; attach again."""
        await self.close()
        await self._open()

    async def close(self) -> None:
        """Close the socket; pending calls fail with BrowserError. Safe to call twice."""
        self._closing = True
        socket, reader = self._socket, self._reader
        self._socket = self._reader = None
        if socket is not None:
            with contextlib.suppress(Exception):
                await socket.close()
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        self._lose("the browser connection was closed")

    # --- calls -----------------------------------------------------------------------------

    async def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Call ``method`` and return its result; ``BrowserError`` for a protocol error or a
        lost connection, ``Timeout`` if no answer came within ``timeout`` seconds."""
        if self._lost is not None or self._socket is None:
            raise BrowserError(f"{method}: {self._lost or 'not connected'}")
        call_id = next(self._ids)
        message: dict[str, Any] = {"id": call_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = (method, session_id, future)
        limit = self.timeout if timeout is None else timeout
        try:
            try:
                await self._socket.send(json.dumps(message))
            except ConnectionClosed:
                reason = self._lost or "the browser connection closed"
                raise BrowserError(f"{method}: {reason}") from None
            return await asyncio.wait_for(future, limit)
        except asyncio.TimeoutError:
            raise Timeout(f"the browser did not answer {method} within {limit:g} s") from None
        finally:
            self._pending.pop(call_id, None)

    def fail_session(self, session_id: str, reason: str) -> None:
        """Fail the pending calls of one session now (its target crashed or went away: the
        browser may never answer them)."""
        for call_id, (method, session, future) in list(self._pending.items()):
            if session == session_id and not future.done():
                future.set_exception(BrowserError(f"{method}: {reason}"))
                self._pending.pop(call_id, None)

    # --- events ----------------------------------------------------------------------------

    def subscribe(
        self,
        method: str | None,
        session_id: Any = ANY_SESSION,
        *,
        maxsize: int = DEFAULT_QUEUE,
    ) -> Subscription:
        """A bounded queue of ``method`` events (all events for None) of one session (None:
        the browser itself; the default ``ANY_SESSION``: every session)."""
        subscription = Subscription(
            method, session_id, maxsize=maxsize, on_close=self._forget_subscription
        )
        if self._lost is not None:
            subscription.close(BrowserError(self._lost))
        else:
            self._subscriptions.append(subscription)
        return subscription

    def _forget_subscription(self, subscription: Subscription) -> None:
        with contextlib.suppress(ValueError):
            self._subscriptions.remove(subscription)

    def add_listener(
        self,
        method: str | None,
        callback: Callable[[CdpEvent], None],
        session_id: Any = ANY_SESSION,
    ) -> Callable[[], None]:
        """Call ``callback`` (in the reader: it must not block) for every matching event;
        returns the function that removes it."""
        listener = _Listener(method, session_id, callback)
        self._listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return remove

    def event_waiter(
        self,
        method: str,
        predicate: Callable[[dict[str, Any]], bool] | None = None,
        *,
        session_id: Any = ANY_SESSION,
    ) -> asyncio.Future[CdpEvent]:
        """A future for the next matching event, registered now: make it before the call that
        causes the event, then await it (with a timeout)."""
        future: asyncio.Future[CdpEvent] = asyncio.get_running_loop().create_future()
        if self._lost is not None:
            future.set_exception(BrowserError(f"waiting for {method}: {self._lost}"))
            return future
        waiter = _Waiter(method, session_id, predicate, future)
        self._waiters.append(waiter)
        future.add_done_callback(lambda _f: self._forget_waiter(waiter))
        return future

    def _forget_waiter(self, waiter: _Waiter) -> None:
        with contextlib.suppress(ValueError):
            self._waiters.remove(waiter)

    async def wait_for_event(
        self,
        method: str,
        predicate: Callable[[dict[str, Any]], bool] | None = None,
        *,
        session_id: Any = ANY_SESSION,
        timeout: float | None = None,
    ) -> CdpEvent:
        """The next matching event from now on; ``Timeout`` if none came in time."""
        future = self.event_waiter(method, predicate, session_id=session_id)
        limit = self.timeout if timeout is None else timeout
        try:
            return await asyncio.wait_for(future, limit)
        except asyncio.TimeoutError:
            raise Timeout(f"no {method} event within {limit:g} s") from None
        finally:
            future.cancel()

    # --- the reader ------------------------------------------------------------------------

    async def _read(self, socket: ClientConnection) -> None:
        reason = "the browser closed the connection"
        try:
            async for raw in socket:
                try:
                    message = json.loads(raw)
                except ValueError:
                    log.warning("CDP: a message that is not JSON was ignored")
                    continue
                if not isinstance(message, dict):
                    continue
                if "id" in message:
                    self._answer(message)
                elif "method" in message:
                    self._dispatch(message)
        except ConnectionClosed as closed:
            reason = f"the browser connection was lost ({closed})"
        except asyncio.CancelledError:
            reason = "the browser connection was closed"
            raise
        except Exception as error:  # a bug in a listener must not leave calls hanging
            log.exception("CDP reader failed")
            reason = f"the browser connection failed: {error}"
        finally:
            if not self._closing:
                self._lose(reason)

    def _answer(self, message: dict[str, Any]) -> None:
        entry = self._pending.get(message["id"])
        if entry is None:
            return  # the caller timed out and left
        method, _session, future = entry
        if future.done():
            return
        error = message.get("error")
        if error is not None:
            text = error.get("message", "unknown error") if isinstance(error, dict) else error
            data = error.get("data") if isinstance(error, dict) else None
            detail = f" ({data})" if data else ""
            future.set_exception(BrowserError(f"{method} failed: {text}{detail}"))
        else:
            future.set_result(message.get("result") or {})

    def _dispatch(self, message: dict[str, Any]) -> None:
        event = CdpEvent(message["method"], message.get("params") or {}, message.get("sessionId"))
        for listener in list(self._listeners):
            if _matches(listener.method, listener.session_id, event):
                try:
                    listener.callback(event)
                except Exception:
                    log.exception("CDP listener for %s failed", event.method)
        for subscription in list(self._subscriptions):
            if subscription.matches(event):
                subscription.put(event)
        for waiter in list(self._waiters):
            if waiter.future.done() or not _matches(waiter.method, waiter.session_id, event):
                continue
            try:
                hit = waiter.predicate is None or waiter.predicate(event.params)
            except Exception as error:
                waiter.future.set_exception(
                    BrowserError(f"checking {event.method} failed: {error}")
                )
                continue
            if hit:
                waiter.future.set_result(event)

    def _lose(self, reason: str) -> None:
        """Fail everything that waits on this socket, all at once."""
        if self._lost is None:
            self._lost = reason
        error_text = self._lost
        pending, self._pending = self._pending, {}
        for method, _session, future in pending.values():
            if not future.done():
                future.set_exception(BrowserError(f"{method}: {error_text}"))
        subscriptions, self._subscriptions = self._subscriptions, []
        for subscription in subscriptions:
            subscription.close(BrowserError(error_text))
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.future.done():
                waiter.future.set_exception(
                    BrowserError(f"waiting for {waiter.method}: {error_text}")
                )
        self._listeners.clear()
