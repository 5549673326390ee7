"""Find the dev servers a terminal session starts: loopback URLs it prints, ports it listens on.

The output scan sits on the PTY's hot path: a read without a colon costs one memchr; one
with a colon, a regex search for ``://`` followed by how a loopback host begins, in at most
its last ``SCAN_TAIL`` bytes (a flood's middle is no server banner). Only a bounded slice
around each candidate (at most ``MAX_HITS`` a read) is cleaned of escape sequences and
matched. A URL cut by the end of a read is carried (at most ``MAX_URL`` bytes) and
completed by the next one, or taken as it is after a short quiet spell. Listening ports
come from the session's processes (``ports.listening_ports``, on a worker thread): shortly
after a command starts or ends, after a URL shows, then at a widening interval while a
command runs, and on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from terax_jupyter.services.preview.ports import listening_ports

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.services.pty.wire import DetectedServerInfo, ServerChange

# A URL longer than this (escape sequences included) is not a dev server's address line.
MAX_URL = 512
# Candidate URLs looked at per read: a flood of local URLs costs no more than this.
MAX_HITS = 16
# Servers remembered per session.
MAX_SERVERS = 32
LOWEST_PORT = 1024

# Of a large read, only the last part is scanned.
SCAN_TAIL = 8 * 1024

_SCHEME_TAIL = 5  # len(b"https")
_EDGE = _SCHEME_TAIL + 3  # kept from the previous read: a scheme and "://" cut by its end
_LOOPBACK_URL = re.compile(
    rb"(https?)://(localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\]):(\d{1,5})"
    rb"(/[^\s\"'<>`\\^{}|\x00-\x1f\x7f]*)?",
    re.IGNORECASE,
)
# OSC (hyperlinks, titles) ends a URL; CSI (colours: Vite prints the port in bold) does not.
_OSC = re.compile(rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_CSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78MDEH])")
_PARTIAL_ESCAPE = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[()])?")
# A "://" followed by how the hosts the scan wants begin (localhost, 127.x.y.z, 0.0.0.0, [::1],
# [::], or a colour sequence around the host alone), or cut by the end of the read. Any other
# "://" is passed over inside the regex engine.
_CANDIDATE = re.compile(rb"://(?:[lL10\[\x1b]|\Z)")
_END = re.compile(rb"[\s\"'<>`\x00-\x1f\x7f]")
_TRAILING = ".,;:!?)]}'\""


class UrlScanner:
    """Feed output chunks in order; get ``(port, url)`` for each loopback URL completed."""

    def __init__(self) -> None:
        self._carry = b""
        self._previous = b""  # the last read: its end may hold a scheme and "://" cut short

    @property
    def pending(self) -> bool:
        """A URL may be cut at the end of the last chunk (``flush`` takes it as it is)."""
        return bool(self._carry)

    def feed(self, data: bytes) -> list[tuple[int, str]]:
        if len(data) > SCAN_TAIL:
            # A flood: only its freshest part can be a server's banner (printed, then quiet).
            data = data[-SCAN_TAIL:]
            self._carry = self._previous = b""
        if self._carry:
            window, start = self._carry + data, 0
            self._carry = b""
        elif b":" in data or data.startswith(b"/"):
            # (Most output has no colon: one memchr. A "://" cut by the read boundary leaves
            # this read starting with "/".)
            edge = self._previous[-_EDGE:]
            # (The regex engine finds "://" faster than bytes.find.)
            if _CANDIDATE.search(data) is None and b"://" not in edge[-2:] + data[:2]:
                self._keep(data)
                return []
            window, start = edge + data, max(0, len(edge) - 2)
        else:
            self._keep(data)
            return []
        self._previous = window
        return self._scan(window, start, final=False)

    def flush(self) -> list[tuple[int, str]]:
        carry, self._carry = self._carry, b""
        return self._scan(carry, 0, final=True) if carry else []

    def _keep(self, data: bytes) -> None:
        # A reference, not a copy; a read shorter than the edge adds to the last one's end.
        self._previous = data if len(data) >= _EDGE else self._previous[-_EDGE:] + data

    def _scan(self, window: bytes, start: int, *, final: bool) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        candidate = _CANDIDATE.search(window, start)
        looked = 0
        while candidate is not None and looked < MAX_HITS:
            looked += 1
            position = candidate.start()
            before = window[max(0, position - _SCHEME_TAIL) : position].lower()
            scheme = 5 if before.endswith(b"https") else 4 if before.endswith(b"http") else 0
            if scheme:
                begin = position - scheme
                raw = window[begin : position + 3 + MAX_URL]
                text = _CSI.sub(b"", _OSC.sub(b" ", raw))
                end = _END.search(text, scheme + 3)
                at_end = begin + len(raw) == len(window)
                # Cut off: no end yet, or an escape sequence the read ended in the middle of.
                cut = end is None or _PARTIAL_ESCAPE.fullmatch(text, end.start()) is not None
                if cut and at_end and not final:
                    self._carry = window[begin:]  # completed (or given up) on the next read
                    break
                if end is not None or at_end:  # else longer than MAX_URL: no server's address
                    url = _loopback_url(text if end is None else text[: end.start()])
                    if url is not None:
                        found.append(url)
            candidate = _CANDIDATE.search(window, position + 3)
        return found


def _loopback_url(text: bytes) -> tuple[int, str] | None:
    match = _LOOPBACK_URL.match(text)
    if match is None:
        return None
    port = int(match.group(3))
    if not 0 < port <= 65535:
        return None
    url = match.group(0).decode("ascii", "replace").rstrip(_TRAILING)
    return port, url


@dataclass
class DetectedServer:
    port: int
    url: str
    first_seen: float
    sources: set[str] = field(default_factory=set)
    pid: int | None = None
    process: str | None = None
    listening: bool | None = None  # None: not seen among the session's listening ports

    def to_dict(self) -> DetectedServerInfo:
        return {
            "port": self.port,
            "url": self.url,
            "first_seen": self.first_seen,
            "sources": sorted(self.sources),
            "pid": self.pid,
            "process": self.process,
            "listening": self.listening,
        }


class ServerDetector:
    """A session's dev servers. ``emit`` gets ``{"event": "detected", ...}`` once per new
    server and ``{"event": "gone", "port"}`` when a server seen listening stops."""

    def __init__(
        self,
        emit: Callable[[ServerChange], None],
        pid: int | None,
        *,
        accept: Callable[[int], bool] | None = None,
        settle: float = 1.0,
        intervals: tuple[float, ...] = (2.0, 3.0, 5.0, 8.0),
        flush_after: float = 1.0,
        scan: Callable[[int], dict[int, tuple[int, str]]] = listening_ports,
    ) -> None:
        self._emit = emit
        self._pid = pid
        self._accept = accept
        self._settle = settle
        self._intervals = intervals
        self._flush_after = flush_after
        self._scan_ports = scan
        self.servers: dict[int, DetectedServer] = {}
        self._scanner = UrlScanner()
        self._running = False
        self._step = 0
        self._due: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._flush_timer: asyncio.TimerHandle | None = None
        self._polling: asyncio.Future[None] | None = None
        self._last_poll = float("-inf")
        self._closed = False

    # -- events of the session -----------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Output from the PTY (the hot path: cheap unless it holds ``://``)."""
        found = self._scanner.feed(data)
        if found:
            self._found_urls(found)
        if self._scanner.pending:
            self._schedule_flush()
        elif self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None

    def command_started(self) -> None:
        self._running = True
        self._step = 0
        self._schedule(self._settle)

    def command_ended(self) -> None:
        # A server started in the background is up by now, or one just stopped.
        self._running = False
        self._schedule(self._settle)

    def close(self) -> None:
        self._closed = True
        for timer in (self._timer, self._flush_timer):
            if timer is not None:
                timer.cancel()
        self._timer = self._flush_timer = None

    # -- polling ---------------------------------------------------------------------

    async def poll(self, max_age: float = 0.0) -> None:
        """Look at the listening ports now (unless a look ended less than ``max_age`` ago)."""
        if self._closed or self._pid is None:
            return
        if self._polling is None:
            if time.monotonic() - self._last_poll < max_age:
                return
            self._polling = asyncio.ensure_future(self._poll_once())
        await asyncio.shield(self._polling)

    async def _poll_once(self) -> None:
        assert self._pid is not None
        try:
            found = await asyncio.to_thread(self._scan_ports, self._pid)
        finally:
            self._last_poll = time.monotonic()
            self._polling = None
        if not self._closed:
            self._update(found)

    def _schedule(self, delay: float) -> None:
        if self._closed or self._pid is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        due = loop.time() + delay
        if self._timer is not None and self._due is not None and self._due <= due:
            return  # a look comes sooner anyway
        if self._timer is not None:
            self._timer.cancel()
        self._due = due
        self._timer = loop.call_at(due, self._tick)

    def _tick(self) -> None:
        self._timer = self._due = None
        task = asyncio.ensure_future(self._tick_poll())
        task.add_done_callback(_ignore_result)

    async def _tick_poll(self) -> None:
        await self.poll()
        if self._running:
            self._schedule(self._intervals[min(self._step, len(self._intervals) - 1)])
            self._step += 1

    def _schedule_flush(self) -> None:
        """Take a cut URL as it is once the output has been quiet for ``flush_after``."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        if self._closed:
            return
        with contextlib.suppress(RuntimeError):
            loop = asyncio.get_running_loop()
            self._flush_timer = loop.call_later(self._flush_after, self._flush)

    def _flush(self) -> None:
        self._flush_timer = None
        found = self._scanner.flush()
        if found:
            self._found_urls(found)

    # -- bookkeeping -----------------------------------------------------------------

    def _found_urls(self, found: list[tuple[int, str]]) -> None:
        added = False
        for port, url in found:
            server = self.servers.get(port)
            if server is not None:
                if "output" not in server.sources:
                    server.url = url  # as printed, rather than the one made up for its port
                server.sources.add("output")
                continue
            added |= self._add(port, url, "output")
        if added:
            # Which process listens there, if it is one of this session's.
            self._schedule(self._settle)

    def _update(self, found: dict[int, tuple[int, str]]) -> None:
        for port, (pid, name) in sorted(found.items()):
            server = self.servers.get(port)
            if server is None:
                if not self._add(port, f"http://localhost:{port}/", "listening", pid, name):
                    continue
                server = self.servers[port]
            server.sources.add("listening")
            server.pid, server.process, server.listening = pid, name, True
        for port, server in list(self.servers.items()):
            if port not in found and server.listening:
                del self.servers[port]
                self._emit({"event": "gone", "port": port})

    def _add(
        self, port: int, url: str, source: str, pid: int | None = None, name: str | None = None
    ) -> bool:
        if port < LOWEST_PORT or len(self.servers) >= MAX_SERVERS:
            return False
        if self._accept is not None and not self._accept(port):
            return False
        server = DetectedServer(
            port,
            url,
            time.time(),
            {source},
            pid,
            name,
            True if source == "listening" else None,
        )
        self.servers[port] = server
        self._emit({"event": "detected", **server.to_dict()})
        return True


def _ignore_result(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
