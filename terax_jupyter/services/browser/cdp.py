"""A Chrome DevTools Protocol client over the browser's DevTools pipe: calls, events, failure.

The browser is started with ``--remote-debugging-pipe`` (``launcher.py``): it reads our calls
on its file descriptor 3 and writes its answers and events on 4, each message a JSON object
ended by a NUL byte. A pipe is reachable only by the processes that hold its ends (this server
and the browser), so unlike a DevTools port on 127.0.0.1 no other local user can drive it.

``CdpPipe`` is our two ends of it. ``CdpConnection`` speaks over one; pages are flat sessions on
it (``Target.attachToTarget`` with ``flatten``), addressed by ``session_id``. The pipe is read
from the event loop (``add_reader``): an answer resolves the future of its call, an event goes to

- listeners (``add_listener``): plain callbacks run in the reader, for events that must be
  answered, never dropped (``Fetch.requestPaused``); they must not block;
- subscriptions (``subscribe``): bounded queues for consumers that may fall behind; when one is
  full its oldest event is dropped and counted, so a flood of console or network events can
  never grow memory;
- waiters (``event_waiter``/``wait_for_event``): one-shot futures with a predicate.

Several connections may share one pipe (sessions sharing a browser): call ids are unique per
pipe, so an answer reaches the call that asked, and every event reaches every connection. When
the browser ends (crashed, killed, closed) its end of the pipe closes: every pending call of
every connection fails at once with ``BrowserError``, subscriptions end with that error after
their buffered events, and waiters fail too; no call hangs. ``close`` leaves a connection (not
the browser); ``reconnect`` joins the same pipe again for new sessions, but a pipe whose browser
is gone cannot be reopened: start a new browser.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import logging
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import BrowserError, Timeout

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["ANY_SESSION", "CdpConnection", "CdpEvent", "CdpPipe", "Subscription"]

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a full-page screenshot in base64 fits
MAX_OUTGOING_BYTES = 16 * 1024 * 1024  # calls the browser has not read yet
READ_CHUNK = 1024 * 1024
DEFAULT_TIMEOUT = 30.0
DEFAULT_QUEUE = 256

ANY_SESSION: Any = object()  # match events of every session and of the browser itself

# The browser writes an answer as {"id":N,...}: enough to fail the call whose answer was too big.
_ANSWER_ID = re.compile(rb'\A\{\s*"id"\s*:\s*(\d{1,18})\b')


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


class CdpPipe:
    """Our ends of a browser's DevTools pipe: ``write_fd`` feeds the browser's fd 3,
    ``read_fd`` reads its fd 4; NUL-terminated JSON both ways.

    A pipe is bound to no event loop until a connection joins it; it is then read in that loop
    (and keeps being read there, messages nobody waits for being dropped, until another loop
    takes it over: one whose previous loop is closed or stopped). The launcher owns it and
    ``close``s it with the browser.
    """

    def __init__(
        self, read_fd: int, write_fd: int, *, max_message: int = MAX_MESSAGE_BYTES
    ) -> None:
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.max_message = max_message
        self._ids = itertools.count(1)
        self._incoming = bytearray()  # the message being received, up to its NUL
        self._skipping = False  # dropping the rest of a message that was too big
        self._outgoing = bytearray()  # what the browser has not read yet
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connections: list[CdpConnection] = []
        self._lost: str | None = None
        self._fds_closed = False

    @property
    def lost(self) -> str | None:
        """Why the pipe is unusable (the browser closed its end, or we closed ours), or None."""
        return self._lost

    def next_id(self) -> int:
        return next(self._ids)

    # --- joining -----------------------------------------------------------------------

    def attach(self, connection: CdpConnection) -> None:
        """Let ``connection`` (in the running loop) receive from this pipe."""
        if self._lost is not None:
            raise BrowserError(self._lost)
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._move_to(loop)
        if connection not in self._connections:
            self._connections.append(connection)

    def detach(self, connection: CdpConnection) -> None:
        with contextlib.suppress(ValueError):
            self._connections.remove(connection)

    def _move_to(self, loop: asyncio.AbstractEventLoop) -> None:
        old = self._loop
        if old is not None and not old.is_closed() and old.is_running():
            # Running in another thread: two loops must never read the same pipe.
            raise BrowserError(
                "this browser is driven from another event loop; use it from that loop"
            )
        stale, self._connections = self._connections, []
        for connection in stale:  # their loop is gone: nothing can await them any more
            connection._abandon("the event loop of this browser connection ended")
        if old is not None and not old.is_closed():
            old.remove_reader(self.read_fd)
            old.remove_writer(self.write_fd)
        self._loop = loop
        loop.add_reader(self.read_fd, self._on_readable)
        if self._outgoing:
            loop.add_writer(self.write_fd, self._on_writable)

    # --- writing -----------------------------------------------------------------------

    def write(self, message: dict[str, Any]) -> None:
        """Queue one message for the browser (from the loop the pipe is read in)."""
        if self._lost is not None:
            raise BrowserError(self._lost)
        data = json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\0"
        if self._outgoing:
            if len(self._outgoing) + len(data) > MAX_OUTGOING_BYTES:
                raise BrowserError("the browser stopped reading its DevTools pipe")
            self._outgoing += data
            return
        try:
            written = os.write(self.write_fd, data)
        except BlockingIOError:
            written = 0
        except OSError as error:
            self._lose(f"the browser's DevTools pipe is closed ({error.strerror or error})")
            raise BrowserError(self._lost or "the browser's DevTools pipe is closed") from None
        if written < len(data):
            self._outgoing += data[written:]
            assert self._loop is not None
            self._loop.add_writer(self.write_fd, self._on_writable)

    def _on_writable(self) -> None:
        try:
            written = os.write(self.write_fd, self._outgoing)
        except BlockingIOError:
            return
        except OSError as error:
            self._lose(f"the browser's DevTools pipe is closed ({error.strerror or error})")
            return
        del self._outgoing[:written]
        if not self._outgoing and self._loop is not None:
            self._loop.remove_writer(self.write_fd)

    # --- reading -----------------------------------------------------------------------

    def _on_readable(self) -> None:
        try:
            chunk = os.read(self.read_fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError as error:
            self._lose(f"reading the browser's DevTools pipe failed ({error.strerror or error})")
            return
        if not chunk:
            self._lose("the browser closed its DevTools pipe (it exited or crashed)")
            return
        self._feed(chunk)

    def _feed(self, chunk: bytes) -> None:
        """Take bytes read from the browser: deliver each message completed by a NUL."""
        start = 0
        while self._lost is None:
            end = chunk.find(b"\0", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not self._skipping:
                if len(self._incoming) + len(piece) > self.max_message:
                    self._too_big(bytes(self._incoming[:64]) or piece[:64])
                else:
                    self._incoming += piece
            if end < 0:
                return
            start = end + 1
            if self._skipping:
                self._skipping = False
                continue
            raw, self._incoming = bytes(self._incoming), bytearray()
            self._deliver(raw)

    def _too_big(self, head: bytes) -> None:
        """Drop a message over ``max_message`` (memory stays bounded) and fail its call."""
        self._skipping = True
        self._incoming = bytearray()
        found = _ANSWER_ID.match(head)
        limit = _size(self.max_message)
        log.warning("CDP: a message over %s from the browser was dropped", limit)
        if found is not None:
            call_id = int(found.group(1))
            for connection in list(self._connections):
                connection._fail_call(call_id, f"the browser's answer was over {limit}")

    def _deliver(self, raw: bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            log.warning("CDP: a message that is not JSON was ignored")
            return
        if not isinstance(message, dict):
            return
        for connection in list(self._connections):
            try:
                connection._receive(message)
            except Exception as error:  # a bug must not leave this connection's calls hanging
                log.exception("CDP: handling a browser message failed")
                self.detach(connection)
                connection._lose(f"the browser connection failed: {error}")

    # --- the end -----------------------------------------------------------------------

    def _lose(self, reason: str) -> None:
        """Fail every connection on this pipe, all at once; stop reading it."""
        if self._lost is None:
            self._lost = reason
        self._unregister()
        connections, self._connections = self._connections, []
        gone = self._loop is not None and self._loop.is_closed()
        for connection in connections:
            if gone:
                connection._abandon(self._lost)
            else:
                connection._lose(self._lost)

    def _unregister(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        loop.remove_reader(self.read_fd)
        loop.remove_writer(self.write_fd)

    def close(self) -> None:
        """Fail what waits on the pipe and close our ends (the browser sees end of file)."""
        loop = self._loop
        if (
            loop is not None
            and not loop.is_closed()
            and loop.is_running()
            and _running_loop() is not loop
        ):
            # Read in a loop of another thread: close it there, where it is read.
            loop.call_soon_threadsafe(self.close)
            return
        self._lose("the browser connection was closed")
        if not self._fds_closed:
            self._fds_closed = True
            for fd in (self.read_fd, self.write_fd):
                with contextlib.suppress(OSError):
                    os.close(fd)


def _size(count: int) -> str:
    for unit, size in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if count >= size:
            return f"{count // size} {unit}"
    return f"{count} bytes"


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class CdpConnection:
    """One client of a browser's DevTools pipe. ``await CdpConnection.connect(pipe)``."""

    def __init__(self, pipe: CdpPipe, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.pipe = pipe
        self.timeout = timeout
        self._pending: dict[int, tuple[str, str | None, asyncio.Future[dict[str, Any]]]] = {}
        self._subscriptions: list[Subscription] = []
        self._listeners: list[_Listener] = []
        self._waiters: list[_Waiter] = []
        self._lost: str | None = "not connected"

    @classmethod
    async def connect(cls, pipe: CdpPipe, *, timeout: float = DEFAULT_TIMEOUT) -> CdpConnection:
        connection = cls(pipe, timeout=timeout)
        connection._open()
        return connection

    @property
    def closed(self) -> bool:
        """Whether this connection is gone (closed by us, or the browser's pipe closed)."""
        return self._lost is not None

    @property
    def close_reason(self) -> str | None:
        return self._lost

    def _open(self) -> None:
        try:
            self.pipe.attach(self)
        except BrowserError as error:
            raise BrowserError(f"cannot connect to the browser: {error.message}") from None
        self._lost = None

    async def reconnect(self) -> None:
        """Join the pipe again after a ``close``. Sessions attached before are gone for this
        connection; attach again. ``BrowserError`` if the browser itself is gone."""
        await self.close()
        self._open()

    async def close(self) -> None:
        """Leave the pipe; pending calls fail with BrowserError. Safe to call twice."""
        self.pipe.detach(self)
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
        if self._lost is not None:
            raise BrowserError(f"{method}: {self._lost}")
        call_id = self.pipe.next_id()
        message: dict[str, Any] = {"id": call_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = (method, session_id, future)
        limit = self.timeout if timeout is None else timeout
        try:
            try:
                self.pipe.write(message)
            except BrowserError as error:
                raise BrowserError(f"{method}: {self._lost or error.message}") from None
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

    # --- receiving ------------------------------------------------------------------------

    def _receive(self, message: dict[str, Any]) -> None:
        """One message from the pipe (run by its reader)."""
        if self._lost is not None:
            return
        if "id" in message:
            self._answer(message)
        elif "method" in message:
            self._dispatch(message)

    def _fail_call(self, call_id: int, reason: str) -> None:
        entry = self._pending.get(call_id)
        if entry is not None and not entry[2].done():
            entry[2].set_exception(BrowserError(f"{entry[0]}: {reason}"))

    def _answer(self, message: dict[str, Any]) -> None:
        entry = self._pending.get(message["id"]) if isinstance(message["id"], int) else None
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

    def _abandon(self, reason: str) -> None:
        """Drop everything of a connection whose event loop is closed (its futures can no
        longer be resolved: that loop would refuse the callbacks)."""
        if self._lost is None:
            self._lost = reason
        self._pending, self._subscriptions, self._waiters = {}, [], []
        self._listeners.clear()

    def _lose(self, reason: str) -> None:
        """Fail everything that waits on this connection, all at once."""
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
