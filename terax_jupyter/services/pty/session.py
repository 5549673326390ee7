"""PtySession: one shell on a PTY, its clients, flow control, blocks and scrollback.

Output path: the backend reads whatever the PTY has (up to 256 KiB per wake-up), the
scanner reports the sequences in it, the bytes go into the scrollback ring and a
coalescing buffer, and one binary frame goes to every client: at once after a quiet
spell (an echo, a prompt), else a few milliseconds after the previous frame (or once
64 KiB have gathered). Each client's bytes in flight are counted until its socket takes
them; while a pacing client holds more than ``high_water`` the PTY is not read, so the
program blocks on write as it would in a real terminal, until the client drains below
``low_water``. A client that stays behind while another keeps up stops pacing; past
``client_cap`` its output is skipped, and it gets an SGR reset and a notice when it
catches up.

A client that attaches gets the scrollback replayed from the ring itself, in chunks of
``REPLAY_CHUNK``, each read only once the client's transport took the one before: a
client costs the server a chunk or two however large the ring is and however slowly it
reads. Output and control messages that arrive meanwhile wait in order behind the replay
(counted against ``client_cap`` like any output in flight); ``replayed`` marks its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import secrets
import signal
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote

from terax_jupyter.exceptions import Conflict
from terax_jupyter.services.pty import text as terminal_text
from terax_jupyter.services.pty.agents import AgentDetector
from terax_jupyter.services.pty.blocks import BlockIndex
from terax_jupyter.services.pty.scrollback import Scrollback
from terax_jupyter.services.pty.sequences import (
    Sequence,
    SequenceScanner,
    query_safe_end,
    without_queries,
)

try:
    import termios
except ImportError:  # Windows: ConPTY has no termios
    termios = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeAlias

    from terax_jupyter.services.pty.backend import PtyProcess
    from terax_jupyter.services.pty.wire import (
        AgentDetails,
        AgentState,
        Notice,
        Phase,
        ServerChange,
        ServerMessage,
        SessionRecord,
    )


class ServerWatch(Protocol):
    """What a session tells the finder of the dev servers it starts (the web preview's
    detector: the app passes its factory in, so terminals do not import the preview)."""

    def feed(self, data: bytes) -> None: ...

    def command_started(self) -> None: ...

    def command_ended(self) -> None: ...

    def close(self) -> None: ...


if TYPE_CHECKING:
    # ``factory(emit, pid)``: the ServerWatch of one session; ``emit`` gets its events.
    ServerWatchFactory: TypeAlias = Callable[
        [Callable[[ServerChange], None], int | None], ServerWatch
    ]


class _NoServers:
    """The ServerWatch of a session nobody asked to find servers for."""

    def feed(self, data: bytes) -> None:
        pass

    def command_started(self) -> None:
        pass

    def command_ended(self) -> None:
        pass

    def close(self) -> None:
        pass


class PtyClient(Protocol):
    """What a session needs from an attached client (the WebSocket, or a test)."""

    def send_output(self, data: bytes) -> asyncio.Future[Any] | None:
        """Send bytes; the future resolves once the transport took them (None: gone)."""

    def send_control(self, message: ServerMessage) -> asyncio.Future[Any] | None:
        """Send a JSON message; a future that resolves once the transport took it, or None
        (not tracked)."""


@dataclass
class FlowLimits:
    high_water: int = 256 * 1024
    low_water: int = 64 * 1024
    client_cap: int = 4 * 1024 * 1024
    coalesce_delay: float = 0.004
    coalesce_bytes: int = 64 * 1024
    lag_grace: float = 2.0


# The scrollback goes to an attaching client in chunks of this size, read from the ring
# one at a time: a replay never copies the whole ring, per client or at all.
REPLAY_CHUNK = 64 * 1024
# Replay chunks handed to a client's transport and not yet taken by it; the next one is
# read only when one was taken. With the chunk size, what one attaching client can hold
# of the server's memory, however slowly it reads.
REPLAY_IN_FLIGHT = 2
REPLAY_WINDOW = REPLAY_IN_FLIGHT * REPLAY_CHUNK
# A full-screen program asked to repaint sees the terminal one column narrower this long
# (seconds): long enough for it to read the size in between, short enough not to be seen.
REPAINT_NUDGE = 0.15
# Control messages that may wait behind a replay, or sit unsent in a client's transport;
# past that a client that does not read gets no more of them (it is skipped for output
# too), so a program printing titles in a loop cannot fill the server's memory.
MAX_QUEUED_CONTROLS = 1024
# Frames and messages that may wait behind one client's replay (their bytes also count
# against ``client_cap``); past it the client's output is skipped as for any laggard.
MAX_BACKLOG = 4096


class _Replay:
    """Where an attaching client's scrollback replay stands, and what waits behind it."""

    __slots__ = ("backlog", "end", "in_transport", "offset", "skip_line", "started", "suffix")

    def __init__(self, offset: int, end: int, suffix: bytes, skip_line: bool) -> None:
        self.offset = offset  # stream offset of the next byte to replay
        self.end = end  # the replay stops here (where a full-screen program took over)
        self.suffix = suffix
        self.skip_line = skip_line  # the ring's first line may begin inside a sequence
        self.started = False  # the SGR reset went out
        self.in_transport = 0  # chunks handed to the transport and not yet taken
        self.backlog: deque[bytes | ServerMessage] = deque()


class _Attached:
    __slots__ = (
        "acks",
        "behind_since",
        "client",
        "controls_unsent",
        "dropped",
        "dropping",
        "lagging",
        "pending",
        "replay",
    )

    def __init__(self, client: PtyClient, acks: bool = False) -> None:
        self.client = client
        # A client that acknowledges what it has shown holds its bytes until it says so; a
        # browser reads its socket eagerly, so the transport alone cannot tell.
        self.acks = acks
        self.pending = 0
        self.dropping = False
        self.dropped = 0
        self.lagging = False
        self.behind_since: float | None = None
        self.replay: _Replay | None = None
        self.controls_unsent = 0


DA1_REPLY = b"\x1b[?1;2c"
DA2_REPLY = b"\x1b[>0;276;0c"
SGR_RESET = b"\x1b[0m"
# The run API's barrier key (``sync``): a function key no terminal sends, bound by the shell
# integrations to empty the line editor and print a ``133;P;k=s`` mark.
SYNC_KEY = b"\x1b[9871~"


@dataclass
class LineWatch:
    """A line typed for someone (the run API), until the shell shows what became of it."""

    future: asyncio.Future[tuple[str, int]]
    started: bool = False  # its command started (a C mark)


class PtySession:
    """A shell session: lives on when clients leave, until closed or its shell exits."""

    def __init__(
        self,
        session_id: str,
        process: PtyProcess,
        *,
        name: str,
        cwd: str,
        shell: str,
        shell_path: str = "",
        columns: int,
        rows: int,
        scrollback_bytes: int,
        limits: FlowLimits,
        nonce: str,
        integration: bool = False,
        agent_idle_after: float = 3.0,
        on_command: Callable[[str], None] | None = None,
        on_finished: Callable[[PtySession], None] | None = None,
        server_watch: ServerWatchFactory | None = None,
    ) -> None:
        self.id = session_id
        self.name = name
        self.shell = shell
        self.shell_path = shell_path  # the shell's program (shell is its kind)
        self.process = process
        self.cwd = cwd
        self.initial_cwd = cwd
        self.columns, self.rows = columns, rows
        self.nonce = nonce
        self.limits = limits
        self.created_at = time.time()
        self.last_activity = time.monotonic()
        self.title = ""
        self.phase: Phase = "starting"  # prompt, input, running once integration speaks
        self.alt_screen = False
        self.alt_screen_offset = 0
        self.exit_code: int | None = None
        self.exited = False
        self.integration = integration  # started with Terax's hooks
        self.integrated = False  # and they have spoken
        self.scrollback = Scrollback(scrollback_bytes)
        self.blocks = BlockIndex()
        self.agent = AgentDetector(self._agent_event, agent_idle_after)
        # Dev servers it starts (printed URLs, listening ports), for the web preview.
        self.servers: ServerWatch = (
            server_watch(self._server_event, process.pid) if server_watch else _NoServers()
        )
        self._on_command = on_command
        self._on_finished = on_finished
        self._exit_task: asyncio.Task[None] | None = None
        self._scanner = SequenceScanner()
        self._attached: list[_Attached] = []
        self._out: list[bytes] = []
        self._out_size = 0
        self._flush_handle: asyncio.TimerHandle | None = None
        self._last_flush = 0.0
        self._lag_timer: asyncio.TimerHandle | None = None
        self._paused = False
        self._exited_event = asyncio.Event()
        self._integrated_event = asyncio.Event()
        self._sequence_end = 0  # stream offset just after the last sequence handled
        self._listeners: list[Any] = []
        self._line_watch: LineWatch | None = None
        self.line_claimed = False  # a run prepares its line (the barrier, an interrupt)
        # The run API's barrier (``sync``): resolved once the shell has read everything typed
        # before it. bash redraws its prompt after the barrier's key, so there the end of that
        # prompt (B) is the point.
        self._sync: asyncio.Future[None] | None = None
        self._sync_redraw = False
        self.continuation = False  # the shell shows a continuation prompt (an unclosed quote)
        self._repaint_handle: asyncio.TimerHandle | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> None:
        self.process.start_reading(self._ingest, self._eof)

    async def wait_exit(self, timeout: float | None = None) -> int | None:
        await asyncio.wait_for(self._exited_event.wait(), timeout)
        return self.exit_code

    async def wait_integrated(self, timeout: float) -> bool:
        """Wait for the shell's first mark (or its exit); whether the integration spoke."""
        waits = [asyncio.ensure_future(self._integrated_event.wait())]
        waits.append(asyncio.ensure_future(self._exited_event.wait()))
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
        return self.integrated

    def _eof(self) -> None:
        self._flush()
        self._exit_task = asyncio.ensure_future(self._collect_exit())

    async def _collect_exit(self) -> None:
        for _ in range(200):
            code = self.process.poll_exit()
            if code is not None:
                break
            await asyncio.sleep(0.01)
        self.mark_exited(self.process.poll_exit())

    def mark_exited(self, code: int | None) -> None:
        """The shell is gone: end its running command, tell the clients, wake who waits."""
        if self._exited_event.is_set():
            return
        self.exit_code = code
        self.exited = True
        # The last command ends with the shell, with its status (``exit 3``: 3).
        self._end_block(code, self.scrollback.end)
        self.agent.command_ended(None)
        self.servers.close()
        self.broadcast({"type": "exit", "code": self.exit_code})
        self._exited_event.set()
        self._synced()
        self._maybe_finished()

    def _maybe_finished(self) -> None:
        """The shell has exited and no view shows it any more: the session can go."""
        if self.exited and not self._attached and self._on_finished is not None:
            on_finished, self._on_finished = self._on_finished, None
            on_finished(self)

    # -- clients ---------------------------------------------------------------------

    def attach(
        self,
        client: PtyClient,
        columns: int | None = None,
        rows: int | None = None,
        *,
        acks: bool = False,
    ) -> None:
        """Add a client: a hello, the scrollback replay, then live output.

        With ``acks`` the client's bytes count as in flight until it ``acknowledge``s them.
        """
        self._flush()
        _quietly(client.send_control)(
            {"type": "attached", "session": self.describe(), "nonce": self.nonce}
        )
        attached = _Attached(client, acks)
        attached.replay = self._plan_replay()
        self._attached.append(attached)
        if columns and rows:
            self.resize(columns, rows)
        if self.alt_screen:
            # A full-screen program is running: ask it to repaint instead of replaying it.
            self._ask_for_repaint()
        if self.exited:
            self._control(attached, {"type": "exit", "code": self.exit_code})
        self._pump_replay(attached)

    def _ask_for_repaint(self) -> None:
        """Make a full-screen program draw its whole screen again.

        A SIGWINCH at an unchanged size is not enough: curses programs that compare sizes
        (or refresh only what changed) draw nothing. One column less, then the real size a
        moment later, is a change they all redraw on.
        """
        if self._repaint_handle is not None:
            return  # one is under way; it ends at the size of that moment
        if self.columns <= 2:
            self.process.signal_foreground(signal.SIGWINCH)
            return
        self.process.resize(self.columns - 1, self.rows)
        self._repaint_handle = asyncio.get_running_loop().call_later(
            REPAINT_NUDGE, self._end_repaint
        )

    def _end_repaint(self) -> None:
        self._repaint_handle = None
        if not self.exited:
            self.process.resize(self.columns, self.rows)

    def acknowledge(self, client: PtyClient, size: int) -> None:
        """An acknowledging client has processed ``size`` more bytes of output."""
        for attached in self._attached:
            if attached.client is client and attached.acks and size > 0:
                self._delivered(attached, min(size, attached.pending))

    def detach(self, client: PtyClient) -> None:
        for attached in self._attached:
            if attached.client is client:
                # What waited behind its replay goes with it; its callbacks find it gone.
                attached.replay = None
        self._attached = [a for a in self._attached if a.client is not client]
        self._apply_backpressure()
        self._maybe_finished()

    @property
    def client_count(self) -> int:
        return len(self._attached)

    # -- the replay ------------------------------------------------------------------

    def _plan_replay(self) -> _Replay:
        """The scrollback as it stands; a full-screen program's output is not replayed."""
        start = self.scrollback.start
        end = self.alt_screen_offset if self.alt_screen else self.scrollback.end
        suffix = b"\x1b[?1049h" if self.alt_screen else b""
        # The ring's first line may begin inside an escape sequence: start after it.
        return _Replay(start, max(start, end), suffix, skip_line=start > 0)

    def _pump_replay(self, attached: _Attached) -> None:
        """Send replay chunks while the client's transport keeps up; finish at the end."""
        replay = attached.replay
        while attached.replay is replay and replay is not None:
            if replay.in_transport >= REPLAY_IN_FLIGHT:
                return  # the next chunk is read when the transport took this one
            chunk = self._next_replay_chunk(attached, replay)
            if chunk is None:
                self._finish_replay(attached, replay)
                return
            if chunk:
                self._send_replay(attached, replay, chunk)

    def _next_replay_chunk(self, attached: _Attached, replay: _Replay) -> bytes | None:
        """The next bytes to replay (maybe none yet), or None when the replay is done."""
        if replay.offset < self.scrollback.start:
            # The ring moved on past what this client had still to see.
            skipped = self.scrollback.start - replay.offset
            replay.offset, replay.skip_line = self.scrollback.start, True
            self._control(attached, _skipped_notice(skipped, "of the scrollback"))
        if replay.offset >= replay.end:
            return None
        data, _ = self.scrollback.slice(
            replay.offset, min(REPLAY_CHUNK, replay.end - replay.offset)
        )
        if not data:
            return None
        if replay.skip_line:
            newline = data.find(b"\n")
            if newline == -1:
                replay.offset += len(data)
                return b""
            replay.offset += newline + 1
            replay.skip_line = False
            return b""
        if replay.offset + len(data) < replay.end:
            data = data[: query_safe_end(data)]
        replay.offset += len(data)
        return without_queries(data)

    def _send_replay(self, attached: _Attached, replay: _Replay, data: bytes) -> None:
        if not replay.started:
            replay.started = True
            data = SGR_RESET + data
        future = self._transport(attached, data)
        if future is None:
            return
        size = len(data)
        replay.in_transport += 1
        attached.pending += size
        future.add_done_callback(
            functools.partial(self._replay_sent, attached=attached, replay=replay, size=size)
        )

    def _replay_sent(
        self, future: asyncio.Future[Any], attached: _Attached, replay: _Replay, size: int
    ) -> None:
        _retrieve(future)
        replay.in_transport -= 1
        if not attached.acks:
            self._delivered(attached, size)
        if attached.replay is replay and attached in self._attached:
            self._pump_replay(attached)

    def _finish_replay(self, attached: _Attached, replay: _Replay) -> None:
        """The replay is out: what waited behind it follows, in the order it came."""
        if replay.suffix:
            self._send_replay(attached, replay, replay.suffix)
        attached.replay = None
        if attached not in self._attached:
            return
        backlog, replay.backlog = replay.backlog, deque()
        with contextlib.suppress(Exception):
            _quietly(attached.client.send_control)({"type": "replayed"})
        while backlog and attached in self._attached:
            item = backlog.popleft()
            if isinstance(item, bytes):
                self._transmit(attached, item, counted=True)
            else:
                self._control(attached, item)
        self._apply_backpressure()

    # -- input -----------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        if self.exited or not data:
            return
        self.last_activity = time.monotonic()
        if b"\x03" in data and self._interrupt_flushes_output():
            # The line discipline discards queued output on an interrupt; so do we, so the
            # prompt shows at once instead of after the flood already read.
            self._out.clear()
            self._out_size = 0
        self.process.write(data)

    def resize(self, columns: int, rows: int) -> None:
        columns, rows = max(2, min(columns, 1000)), max(1, min(rows, 500))
        if (columns, rows) != (self.columns, self.rows):
            self.columns, self.rows = columns, rows
            self.process.resize(columns, rows)
            # Views that do not size the terminal themselves (a notebook's) follow it.
            self.broadcast({"type": "size", "columns": columns, "rows": rows})

    def _interrupt_flushes_output(self) -> bool:
        fd = getattr(self.process, "fd", None)
        if fd is None or termios is None:
            return False
        try:
            local_modes = termios.tcgetattr(fd)[3]
        except (termios.error, OSError):
            return False
        return bool(local_modes & termios.ISIG) and not local_modes & termios.NOFLSH

    # -- output ----------------------------------------------------------------------

    def _ingest(self, data: bytes) -> None:
        now = time.monotonic()
        self.last_activity = now
        sequences = self._scanner.feed(data)
        if not sequences:
            self._emit_output(data)
        else:
            position = 0
            for sequence in sequences:
                if sequence.end > position:
                    self._emit_output(data[position : sequence.end])
                    position = sequence.end
                self._handle(sequence)
            if position < len(data):
                self._emit_output(data[position:])
        if self._out and self._flush_handle is None:
            # Output after a quiet spell (an echo, a prompt) goes at once; while it keeps
            # coming, one frame per coalesce_delay at most, unless coalesce_bytes fill first.
            wait = self._last_flush + self.limits.coalesce_delay - now
            if wait <= 0:
                self._flush()
            else:
                self._flush_handle = asyncio.get_running_loop().call_later(wait, self._flush)
        if self.agent.agent is not None:
            self.agent.output()
        # After the output went out: a client sees a server's URL before the offer to open it.
        self.servers.feed(data)

    def _emit_output(self, data: bytes) -> None:
        self.scrollback.append(data)
        if not self._attached:
            return
        self._out.append(data)
        self._out_size += len(data)
        if self._out_size >= self.limits.coalesce_bytes:
            self._flush()

    def _flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not self._out:
            return
        data = self._out[0] if len(self._out) == 1 else b"".join(self._out)
        self._out.clear()
        self._out_size = 0
        self._last_flush = time.monotonic()
        for attached in list(self._attached):
            self._send(attached, data)
        self._apply_backpressure()

    def _send(self, attached: _Attached, data: bytes, *, capped: bool = True) -> None:
        if attached.dropping:
            attached.dropped += len(data)
            return
        if capped and attached.pending + len(data) > self.limits.client_cap:
            attached.dropping = True
            attached.dropped += len(data)
            return
        if attached.replay is not None:
            if len(attached.replay.backlog) >= MAX_BACKLOG:
                # Many small frames: their count, not only their bytes, is bounded.
                attached.dropping = True
                attached.dropped += len(data)
                return
            # Behind the replay: the same bytes object every client got, not a copy.
            attached.replay.backlog.append(data)
            attached.pending += len(data)
            return
        self._transmit(attached, data)

    def _transmit(self, attached: _Attached, data: bytes, *, counted: bool = False) -> None:
        """Hand output to the client; its bytes count as in flight until taken (or acked)."""
        future = self._transport(attached, data)
        if future is None:
            return
        size = len(data)
        if not counted:
            attached.pending += size
        if not attached.acks:
            future.add_done_callback(functools.partial(self._taken, attached=attached, size=size))
        else:
            future.add_done_callback(_retrieve)

    def _transport(self, attached: _Attached, data: bytes) -> asyncio.Future[Any] | None:
        """``send_output``, or None after dropping a client that is gone."""
        try:
            future = attached.client.send_output(data)
        except Exception:
            future = None
        if future is None:
            attached.replay = None
            self._attached = [a for a in self._attached if a is not attached]
        return future

    def _taken(self, future: asyncio.Future[Any], attached: _Attached, size: int) -> None:
        _retrieve(future)
        self._delivered(attached, size)

    def _control(self, attached: _Attached, message: ServerMessage) -> None:
        """A control message, in order with the output: behind a replay if one runs."""
        replay = attached.replay
        if replay is not None:
            if len(replay.backlog) < MAX_BACKLOG:
                replay.backlog.append(message)
            return
        if attached.controls_unsent >= MAX_QUEUED_CONTROLS:
            return  # a client that has not read its last thousand messages
        future = attached.client.send_control(message)
        if future is not None:
            attached.controls_unsent += 1
            future.add_done_callback(functools.partial(self._control_sent, attached=attached))

    @staticmethod
    def _control_sent(future: asyncio.Future[Any], attached: _Attached) -> None:
        _retrieve(future)
        attached.controls_unsent -= 1

    def _delivered(self, attached: _Attached, size: int) -> None:
        attached.pending -= size
        if attached.dropping and attached.pending <= self.limits.low_water:
            attached.dropping = False
            skipped, attached.dropped = attached.dropped, 0
            self._send(attached, SGR_RESET)
            self._control(attached, _skipped_notice(skipped, "of output"))
        self._apply_backpressure()

    def _apply_backpressure(self) -> None:
        now = time.monotonic()
        limits = self.limits
        keeping_up = any(a.pending <= limits.low_water for a in self._attached)
        for attached in self._attached:
            if attached.pending > limits.low_water:
                # Behind: it holds back a resume (or will cause a pause). One client stuck
                # behind must not stall the others: after a grace it stops pacing the
                # program (and is skipped ahead once over its cap). A client whose socket
                # took a little and then stopped sits between the marks: it counts too.
                attached.behind_since = attached.behind_since or now
                if keeping_up and now - attached.behind_since >= limits.lag_grace:
                    attached.lagging = True
            else:
                attached.behind_since = None
                attached.lagging = False
        pacing = [a for a in self._attached if not a.lagging and not a.dropping]
        if not self._paused and any(a.pending >= limits.high_water for a in pacing):
            self._paused = True
            self.process.pause_reading()
        elif self._paused and all(a.pending <= limits.low_water for a in pacing):
            self._paused = False
            self.process.resume_reading()
        if self._paused and len(self._attached) > 1 and self._lag_timer is None:
            self._lag_timer = asyncio.get_running_loop().call_later(
                limits.lag_grace, self._lag_check
            )

    def _lag_check(self) -> None:
        self._lag_timer = None
        self._apply_backpressure()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def queued_bytes(self) -> int:
        """Output held for clients: gathered for the next frame, or sent but not yet taken."""
        return self._out_size + sum(a.pending for a in self._attached)

    # -- sequences -------------------------------------------------------------------

    def _handle(self, sequence: Sequence) -> None:
        # The output up to the sequence's end is in the scrollback already.
        start = self.scrollback.end - (sequence.end - sequence.start)
        output_since = max(self.scrollback.end - sequence.end, self._sequence_end)
        self._sequence_end = self.scrollback.end
        kind = sequence.kind
        if kind == "mark":
            self._mark(sequence)
        elif kind == "cwd":
            # A running program may print anything; only the shell's prompt says where it is.
            if self.phase != "running" and sequence.value != self.cwd:
                self.cwd = sequence.value
                self.broadcast({"type": "cwd", "cwd": self.cwd})
        elif kind == "title":
            self.title = sequence.value
            self.broadcast({"type": "title", "title": self.title})
        elif kind == "notify":
            if start > output_since:
                self.agent.output()  # it printed, then asked, in one read: working came first
            self.agent.notified(sequence.value)
            self.broadcast({"type": "notify", "message": sequence.value})
        elif kind == "alt_screen":
            on = sequence.value == "on"
            if on and not self.alt_screen:
                self.alt_screen_offset = self.scrollback.end - (sequence.end - sequence.start)
            self.alt_screen = on
            self.broadcast({"type": "alt_screen", "active": on})
        elif kind == "query" and not self._attached:
            # Nobody's terminal will answer; shells that wait for one must not hang.
            reply = {"da1": DA1_REPLY, "da2": DA2_REPLY, "dsr": b"\x1b[0n"}.get(sequence.value)
            if sequence.value == "cpr":
                reply = f"\x1b[{self.rows};1R".encode()
            if reply:
                self.process.write(reply)

    def _mark(self, sequence: Sequence) -> None:
        if not secrets.compare_digest(sequence.params.get("nonce", ""), self.nonce):
            return  # printed by a program, not by the shell integration
        self.integrated = True
        self._integrated_event.set()
        letter = sequence.value
        at = self.scrollback.end - (sequence.end - sequence.start)
        if letter == "A":
            if self.phase == "running":
                self._end_block(None, at)
            self._settle_line("not_run", at)
            self.continuation = False
            self.phase = "prompt"
            self.broadcast({"type": "prompt"})
        elif letter == "P" and sequence.params.get("k") == "c":
            self.continuation = True
            self._settle_line("incomplete", at)
        elif letter == "P" and sequence.params.get("k") == "s":
            if sequence.params.get("redraw") == "1":
                self._sync_redraw = True
            else:
                self._synced()
        elif letter == "B":
            if self._sync_redraw:
                self._synced()
            self.phase = "input"
            self.broadcast({"type": "input"})
        elif letter == "C":
            command = unquote(sequence.params.get("cmdline_url", ""))
            self.phase = "running"
            if self._line_watch is not None:
                self._line_watch.started = True
            block = self.blocks.start(command, self.cwd, self.scrollback.end)
            self.broadcast({"type": "block", "event": "start", "block": block.to_dict()})
            self.agent.command_started(command)
            self.servers.command_started()
            if self._on_command is not None:
                self._on_command(command)
        elif letter == "D":
            code_text = sequence.params.get("0", "")
            digits = code_text.removeprefix("-")
            code = int(code_text) if digits.isascii() and digits.isdigit() else None
            self._end_block(code, self.scrollback.end - (sequence.end - sequence.start))
            self.phase = "prompt"

    def _end_block(self, code: int | None, offset: int) -> None:
        self._settle_line("ended", offset)
        block = self.blocks.end(code, offset)
        if block is not None:
            self.broadcast({"type": "block", "event": "end", "block": block.to_dict()})
            self.agent.command_ended(code)
            self.servers.command_ended()
        self._notify_listeners()

    def _agent_event(self, agent: str, state: AgentState, details: AgentDetails) -> None:
        self.broadcast({"type": "agent", "agent": agent, "state": state, **details})

    def _server_event(self, change: ServerChange) -> None:
        self.broadcast({"type": "server", **change})

    def broadcast(self, message: ServerMessage) -> None:
        self._flush()
        for attached in list(self._attached):
            with contextlib.suppress(Exception):
                self._control(attached, message)

    # -- waiting for a command (notebooks, tests) -----------------------------------

    def block_ended(self) -> asyncio.Future[None]:
        """A future that resolves at the next block end (or the shell's exit)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._listeners.append(future)
        return future

    def sync(self) -> asyncio.Future[None]:
        """Type the barrier key: resolves once the shell has read all that was typed before
        and emptied its line editor, so the next prompt without a command answers what is
        typed after it. Needs the shell integration; resolves at the shell's exit too."""
        if self._sync is None or self._sync.done():
            self._sync = asyncio.get_running_loop().create_future()
            self._sync_redraw = False
            self.write(SYNC_KEY)
        return self._sync

    def _synced(self) -> None:
        self._sync_redraw = False
        if self._sync is not None and not self._sync.done():
            self._sync.set_result(None)

    def watch_line(self) -> asyncio.Future[tuple[str, int]]:
        """What becomes of the line about to be typed: a future of (outcome, stream offset).

        "ended": its command ran and ended, or the shell exited; "not_run": a prompt came back
        and nothing ran (a syntax error, an interrupt); "incomplete": the shell asks for the
        rest of the line (an unclosed quote or block). One line is watched at a time.
        """
        if self._line_watch is not None and not self._line_watch.future.done():
            raise Conflict("Another command is being typed in this terminal.", reason="busy")
        self._line_watch = LineWatch(asyncio.get_running_loop().create_future())
        return self._line_watch.future

    @property
    def line_watched(self) -> bool:
        """A line typed for someone is being prepared or is still on its way."""
        pending = self._line_watch is not None and not self._line_watch.future.done()
        return self.line_claimed or pending

    def _settle_line(self, outcome: str, offset: int) -> None:
        watch = self._line_watch
        if watch is None or watch.future.done():
            return
        if outcome != "ended" and watch.started:
            return  # the command runs: only its end settles it
        self._line_watch = None
        watch.future.set_result((outcome, offset))

    def _notify_listeners(self) -> None:
        listeners, self._listeners = self._listeners, []
        for future in listeners:
            if not future.done():
                future.set_result(None)

    # -- text ------------------------------------------------------------------------

    async def block_text(self, block_id: int, *, rendered: bool) -> dict[str, Any] | None:
        block = self.blocks.get(block_id)
        if block is None:
            return None
        end = block.output_end if block.output_end is not None else self.scrollback.end
        data, start = self.scrollback.read(block.output_start, end)
        text = await self._as_text(data, rendered)
        return {
            "block": block.to_dict(),
            "text": text,
            "truncated": start > block.output_start
            or (rendered and len(data) > terminal_text.RENDER_LIMIT),
            "format": "rendered" if rendered else "plain",
        }

    async def last_lines(self, count: int, *, rendered: bool) -> str:
        data, _ = self.scrollback.read()
        # Lines are rarely longer than a few hundred bytes; read a generous window.
        window = data[-max(count * 512, 64 * 1024) :]
        return terminal_text.last_lines(await self._as_text(window, rendered), count)

    async def _as_text(self, data: bytes, rendered: bool) -> str:
        if rendered:
            # The emulator is slow Python: keep it off the loop that moves every terminal's bytes.
            return await asyncio.to_thread(terminal_text.render, data, self.columns)
        if len(data) > 64 * 1024:
            return await asyncio.to_thread(terminal_text.strip, data)
        return terminal_text.strip(data)

    def describe(self) -> SessionRecord:
        return {
            "id": self.id,
            "name": self.name,
            "shell": self.shell,
            "cwd": self.cwd,
            "title": self.title,
            "pid": self.process.pid,
            "columns": self.columns,
            "rows": self.rows,
            "created_at": self.created_at,
            "clients": len(self._attached),
            "phase": self.phase,
            "integrated": self.integrated,
            "alt_screen": self.alt_screen,
            "exited": self.exited,
            "exit_code": self.exit_code,
            "agent": {"name": self.agent.agent, "state": self.agent.state}
            if self.agent.agent
            else None,
            "blocks": len(self.blocks.all()),
        }


def new_nonce() -> str:
    return secrets.token_hex(8)


def _skipped_notice(skipped: int, what: str) -> Notice:
    return {
        "type": "notice",
        "kind": "skipped",
        "bytes": skipped,
        "message": f"{skipped} bytes {what} were skipped: this view fell behind.",
    }


def _quietly(
    send: Callable[[ServerMessage], asyncio.Future[Any] | None],
) -> Callable[[ServerMessage], None]:
    """``send``, with the error of the future it returns (a closed socket) marked as seen."""

    def call(message: ServerMessage) -> None:
        future = send(message)
        if future is not None:
            future.add_done_callback(_retrieve)

    return call


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a transport future's error as seen: a closed socket is not worth a log line."""
    if not future.cancelled():
        future.exception()
