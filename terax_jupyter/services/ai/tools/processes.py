"""The agent's shell commands: one-shot runs and per-session background processes, no orphans."""

from __future__ import annotations

import asyncio
import builtins
import collections
import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import psutil

from terax_jupyter.exceptions import (
    Conflict,
    InvalidRequest,
    NotFound,
    ReadOnlyMode,
    Unavailable,
)
from terax_jupyter.security import Access, check_command
from terax_jupyter.services.secrets.environment import without_keys
from terax_jupyter.services.secrets.manager import KNOWN_KEYS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from terax_jupyter.security import CheckedPath, SecurityLayer
    from terax_jupyter.security.redact import Redactor

DEFAULT_LOG_CAP = 4 * 1024 * 1024
DEFAULT_MAX_PER_SESSION = 8
DEFAULT_GRACE = 3.0
# How long a finished command's output pipe may stay open (held by something it started in
# the background) before that leftover is stopped.
LINGER = 1.0
_CHUNK = 64 * 1024

# Variables the agent's commands never see, whatever their value looks like.
_SECRET_EXACT = frozenset({"JUPYTER_TOKEN", "JUPYTERHUB_API_TOKEN", *KNOWN_KEYS})
_SECRET_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_PAT")
_SECRET_PARTS = ("SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY")
# A non-interactive command must not stop to page output or ask for a password (stdin is
# /dev/null); TERAX_AGENT lets scripts and tools know who runs them.
_AGENT_ENV = {"TERAX_AGENT": "1", "PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return (
        upper in _SECRET_EXACT
        or upper.endswith(_SECRET_SUFFIXES)
        or any(part in upper for part in _SECRET_PARTS)
    )


def agent_environment(
    redactor: Redactor | None = None, *, extra_names: Iterable[str] = ()
) -> dict[str, str]:
    """The server's environment minus anything secret, plus ``TERAX_AGENT=1``.

    A variable goes when its name is a known key name or looks secret (``*_API_KEY``,
    ``*_TOKEN``, ``*SECRET*``, ...), when it is in ``extra_names``, or when the redactor would
    change its value (a known key under another name, a URL with a password in it).
    """
    env = {}
    # The terminals' rule (provider key variables go), then the agent's own on top of it.
    for name, value in without_keys(os.environ, {*_SECRET_EXACT, *extra_names}).items():
        if is_secret_name(name):
            continue
        if redactor is not None and redactor.redact(value) != value:
            continue
        env[name] = value
    env.update(_AGENT_ENV)
    return env


def bash_executable() -> str:
    if os.name == "nt":
        raise Unavailable("Agent shell commands need bash; this server runs on Windows.")
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    found = shutil.which("bash")
    if found is None:
        raise Unavailable("bash is not installed on the server.", reason="bash_missing")
    return found


def incomplete_tail(data: bytes) -> int:
    """How many bytes at the end of ``data`` are the start of a character cut in two."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return 0
        if byte >= 0xC0:
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return back if need > back else 0
    return 0


def decode_output(data: bytes, *, cut_start: bool = False, cut_end: bool = False) -> str:
    """UTF-8 with replacement, without a stray replacement character where a cap cut a
    character in two."""
    if cut_start:
        skip = 0
        while skip < min(3, len(data)) and 0x80 <= data[skip] < 0xC0:
            skip += 1
        data = data[skip:]
    if cut_end:
        data = data[: len(data) - incomplete_tail(data)]
    return data.decode("utf-8", "replace")


# -- output buffers ---------------------------------------------------------------------------


class HeadTail:
    """Keeps the first ``head`` and the last ``tail`` bytes of a stream and counts the rest."""

    def __init__(self, head: int, tail: int) -> None:
        self.head_cap = head
        self.tail_cap = tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def write(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.tail_cap
            if excess > 0:
                del self.tail[:excess]

    @property
    def elided(self) -> int:
        return self.total - len(self.head) - len(self.tail)


class OutputRing:
    """The last ``cap`` bytes of a stream; offsets count from the stream's first byte."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self.total = 0
        self._lock = threading.Lock()

    def write(self, chunk: bytes) -> None:
        with self._lock:
            self._chunks.append(chunk)
            self._size += len(chunk)
            self.total += len(chunk)
            while self._size > self.cap:
                first = self._chunks.popleft()
                excess = self._size - self.cap
                if len(first) > excess:
                    self._chunks.appendleft(first[excess:])
                    self._size -= excess
                else:
                    self._size -= len(first)

    def read(
        self,
        *,
        offset: int | None = None,
        tail_lines: int | None = None,
        max_bytes: int | None = None,
    ) -> tuple[bytes, int, int, int]:
        """``(data, start, end, dropped)``: bytes ``start..end`` of the stream, and how many
        bytes from where the caller asked for (offset, else the stream's start) are gone."""
        with self._lock:
            data = b"".join(self._chunks)
            total = self.total
        ring_start = total - len(data)
        if tail_lines is not None:
            position = len(data) - 1 if data.endswith(b"\n") else len(data)
            found = 0
            while found < tail_lines and position > 0:
                position = data.rfind(b"\n", 0, position)
                if position < 0:
                    break
                found += 1
            cut = position + 1 if found == tail_lines and position >= 0 else 0
            if max_bytes is not None:
                cut = max(cut, len(data) - max_bytes)
            return data[cut:], ring_start + cut, total, ring_start if cut == 0 else 0
        wanted = 0 if offset is None else offset
        start = min(max(wanted, ring_start), total)
        end = total if max_bytes is None else min(total, start + max_bytes)
        piece = data[start - ring_start : end - ring_start]
        return piece, start, end, max(0, ring_start - wanted)


# -- stopping a command and everything it started --------------------------------------------


def _members(popens: Iterable[subprocess.Popen[bytes]]) -> dict[int, set[int]]:
    """Per leader pid: every process of its session or group and every descendant.

    Linux does not reuse a pid while a session or group still carries it; so a reaped
    leader whose pid is taken again has no members left, and the new owner is not ours.
    """
    found: dict[int, set[int]] = {}
    for popen in popens:
        found[popen.pid] = set()
        if popen.poll() is None:
            with contextlib.suppress(psutil.Error):
                children = psutil.Process(popen.pid).children(recursive=True)
                found[popen.pid].update(child.pid for child in children)
        elif psutil.pid_exists(popen.pid):
            del found[popen.pid]
    wanted = set(found)
    if wanted:
        for process in psutil.process_iter():
            with contextlib.suppress(OSError, psutil.Error):
                ids = {os.getsid(process.pid), os.getpgid(process.pid)}
                for leader in wanted & ids:
                    found[leader].add(process.pid)
    for leader, members in found.items():
        members.discard(leader)
    return {popen.pid: found.get(popen.pid, set()) for popen in popens}


def _signal_all(popen: subprocess.Popen[bytes], members: set[int], signum: int) -> None:
    # A reaped leader's id may be reused, but not while its group still has members.
    if members or popen.poll() is None:
        with contextlib.suppress(OSError):
            os.killpg(popen.pid, signum)
    for pid in members:
        with contextlib.suppress(OSError):
            os.kill(pid, signum)
            if signum == signal.SIGTERM:
                # A stopped process would not act on SIGTERM until continued.
                os.kill(pid, signal.SIGCONT)


def stop_processes(popens: list[subprocess.Popen[bytes]], grace: float) -> None:
    """SIGTERM to each process's group, session and descendants; SIGKILL to what is left
    after ``grace`` seconds. Our own children are reaped through Popen (their exit code
    stays readable); the others through psutil."""
    members = _members(popens)
    for popen in popens:
        _signal_all(popen, members[popen.pid], signal.SIGTERM)
        with contextlib.suppress(OSError):
            popen.send_signal(signal.SIGTERM)
    others: list[psutil.Process] = []
    for pids in members.values():
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                others.append(psutil.Process(pid))
    deadline = time.monotonic() + grace
    for popen in popens:
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=max(0.0, deadline - time.monotonic()))
    alive = _wait_gone(others, deadline)
    # Anything new that appeared while we waited is caught by the group and a second scan.
    late = _members(popens)
    for popen in popens:
        mine = {p.pid for p in alive if p.pid in members[popen.pid]}
        _signal_all(popen, mine | late[popen.pid], signal.SIGKILL)
        with contextlib.suppress(OSError):
            popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=5)
    _wait_gone(alive, time.monotonic() + 2)


def _wait_gone(processes: list[psutil.Process], deadline: float) -> list[psutil.Process]:
    """The processes still alive at ``deadline`` (or sooner, once none is). A zombie counts
    as gone: it is not our child, and an init that does not reap (some containers) would
    otherwise keep it "running" forever."""

    def alive(process: psutil.Process) -> bool:
        try:
            return process.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    remaining = [p for p in processes if alive(p)]
    while remaining and time.monotonic() < deadline:
        time.sleep(0.02)
        remaining = [p for p in remaining if alive(p)]
    return remaining


def _spawn(command: str, cwd: str, env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    executable = bash_executable()
    try:
        return _popen(executable, command, cwd, env)
    except OSError as error:
        raise Unavailable(
            f"The command could not be started: {error.strerror or error}.",
            reason="spawn_failed",
        ) from None


def _popen(
    executable: str, command: str, cwd: str, env: Mapping[str, str]
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [executable, "-c", command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env=dict(env),
        # Its own session and group: no terminal to prompt on, and one signal reaches all.
        start_new_session=True,
        close_fds=True,
    )


def _pump(popen: subprocess.Popen[bytes], sink: HeadTail | OutputRing) -> threading.Thread:
    stream = popen.stdout
    assert stream is not None
    fd = stream.fileno()

    def read() -> None:
        try:
            while chunk := os.read(fd, _CHUNK):
                sink.write(chunk)
        except OSError:
            pass
        finally:
            stream.close()
        # Reap it now rather than leave a zombie until someone asks for its state.
        with contextlib.suppress(Exception):
            popen.wait()

    thread = threading.Thread(target=read, name=f"terax-output-{popen.pid}", daemon=True)
    thread.start()
    return thread


def exit_status(returncode: int | None) -> int | None:
    """Shell convention: a process ended by signal N exits 128 + N."""
    if returncode is None:
        return None
    return 128 - returncode if returncode < 0 else returncode


def check_cwd(security: SecurityLayer, path: str | None) -> CheckedPath:
    """The folder a command runs in: the server root by default, checked for reading."""
    checked = security.paths.check(path or security.roots.server_root, Access.READ)
    if not os.path.isdir(checked.path):
        shown = security.paths.display(checked.path) or "."
        if os.path.exists(checked.path):
            raise InvalidRequest(f"{shown} is not a folder.", reason="not_a_directory")
        raise NotFound(f"No folder {shown}.", reason="cwd_not_found")
    return checked


def _check_runnable(security: SecurityLayer, command: str, cwd: CheckedPath) -> CheckedPath:
    """Everything checked again at the moment of use: the command, the folder, the mode."""
    if security.paths.read_only:
        raise ReadOnlyMode("The server is read-only: the agent cannot run commands.")
    security.policy.require("terminals")
    check_command(command)
    return check_cwd(security, cwd.path)


# -- one-shot commands ------------------------------------------------------------------------


@dataclass
class CommandOutcome:
    head: bytes
    tail: bytes
    total: int
    elided: int
    exit_code: int | None
    timed_out: bool
    leftovers_stopped: bool
    duration_ms: float


async def run_command(
    security: SecurityLayer,
    command: str,
    cwd: CheckedPath,
    *,
    timeout: float,
    env: Mapping[str, str],
    head_bytes: int,
    tail_bytes: int,
    grace: float = 2.0,
) -> CommandOutcome:
    """Run ``bash -c command`` to its end or ``timeout``; keep the head and tail of its output.

    On timeout or cancellation the command and everything it started are stopped. When the
    command ends but something it started still holds its output open, that is stopped
    too (after ``LINGER``): long-running work belongs in a background process.
    """
    checked = _check_runnable(security, command, cwd)
    capture = HeadTail(head_bytes, tail_bytes)
    started = time.monotonic()
    popen = _spawn(command, checked.path, env)
    reader = _pump(popen, capture)

    def wait() -> CommandOutcome:
        timed_out = False
        try:
            popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            stop_processes([popen], grace)
        reader.join(LINGER)
        leftovers = reader.is_alive()
        if leftovers:
            stop_processes([popen], grace)
            reader.join(5)
        return CommandOutcome(
            head=bytes(capture.head),
            tail=bytes(capture.tail),
            total=capture.total,
            elided=capture.elided,
            exit_code=exit_status(popen.returncode),
            timed_out=timed_out,
            leftovers_stopped=leftovers and not timed_out,
            duration_ms=(time.monotonic() - started) * 1000,
        )

    try:
        return await asyncio.to_thread(wait)
    except asyncio.CancelledError:
        # The waiting thread cannot be cancelled; ending the processes ends it.
        await asyncio.to_thread(stop_processes, [popen], grace)
        raise


# -- background processes ---------------------------------------------------------------------


@dataclass
class _Background:
    id: str
    session_id: str
    command: str
    cwd: str
    popen: subprocess.Popen[bytes]
    ring: OutputRing
    started_at: float
    reader: threading.Thread = field(repr=False)

    @property
    def running(self) -> bool:
        return self.popen.poll() is None


class ProcessRegistry:
    """Background commands the agent started, per AI session.

    Each keeps its output in a ring of ``log_cap`` bytes (older bytes are counted as
    dropped). A session runs at most ``max_per_session`` at once. Closing a session, or the
    server (``close_all``), stops every process and what it started.
    """

    def __init__(
        self,
        security: SecurityLayer,
        *,
        log_cap: int = DEFAULT_LOG_CAP,
        max_per_session: int = DEFAULT_MAX_PER_SESSION,
        grace: float = DEFAULT_GRACE,
        secret_names: Iterable[str] = (),
        command_guard: Callable[[str], object] | None = None,
    ) -> None:
        self.security = security
        self.log_cap = log_cap
        self.max_per_session = max_per_session
        self.grace = grace
        self.secret_names = tuple(secret_names)
        self.command_guard = command_guard
        self._processes: dict[str, _Background] = {}
        self._lock = threading.Lock()

    def environment(self) -> dict[str, str]:
        """What the agent's commands see (see ``agent_environment``)."""
        return agent_environment(self.security.redactor, extra_names=self.secret_names)

    def check_command(self, command: str) -> str:
        """``command`` if the command guard and the key-store guard (commands that name
        where the server keeps keys) let it through, else ``CommandDenied``."""
        check_command(command)
        if self.command_guard is not None:
            self.command_guard(command)
        return command

    def start(self, session_id: str, command: str, cwd: CheckedPath) -> dict[str, Any]:
        """Start ``bash -c command`` in ``cwd``: ``{id, pid, command, cwd, started_at}``."""
        checked = _check_runnable(self.security, command, cwd)
        with self._lock:
            running = [p for p in self._processes.values() if p.session_id == session_id]
            if sum(p.running for p in running) >= self.max_per_session:
                raise Conflict(
                    f"This session already runs {self.max_per_session} background processes; "
                    "stop one with bash_kill first.",
                    reason="too_many_processes",
                )
            # The administrator's limit counts the agent's processes of every session.
            self.security.policy.check_limit(
                "background_processes", sum(p.running for p in self._processes.values())
            )
            self._forget_old(session_id)
            ring = OutputRing(self.log_cap)
            popen = _spawn(command, checked.path, self.environment())
            entry = _Background(
                id=uuid.uuid4().hex,
                session_id=session_id,
                command=command,
                cwd=self.security.paths.display(checked.path) or ".",
                popen=popen,
                ring=ring,
                started_at=time.time(),
                reader=_pump(popen, ring),
            )
            self._processes[entry.id] = entry
        return self._info(entry, brief=True)

    def logs(
        self,
        process_id: str,
        *,
        offset: int | None = None,
        tail_lines: int | None = None,
        max_bytes: int | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """``{text, offset, next_offset, dropped, running, exit_code}``: bytes from ``offset``
        (default: the start), or the last ``tail_lines`` lines; redacted."""
        if offset is not None and tail_lines is not None:
            raise InvalidRequest("Give offset or tail_lines, not both.", reason="invalid_request")
        for name, value in (("offset", offset), ("tail_lines", tail_lines)):
            if value is not None and (not isinstance(value, int) or value < 0):
                raise InvalidRequest(f"'{name}' must be 0 or more.", reason="invalid_request")
        entry = self._get(process_id, session_id)
        # Read the state first: a process seen as ended has written all its output.
        exit_code = exit_status(entry.popen.poll())
        if exit_code is not None:
            entry.reader.join(0.2)
        data, start, end, dropped = entry.ring.read(
            offset=offset, tail_lines=tail_lines, max_bytes=max_bytes
        )
        if end < entry.ring.total or entry.running:
            # A character cut at the end is read whole next time, from next_offset.
            trimmed = incomplete_tail(data)
            data, end = data[: len(data) - trimmed], end - trimmed
        text = decode_output(data, cut_start=start > 0)
        return {
            "text": self.security.redactor.redact(text),
            "offset": start,
            "next_offset": end,
            "dropped": dropped,
            "running": exit_code is None,
            "exit_code": exit_code,
        }

    def list(self, session_id: str) -> builtins.list[dict[str, Any]]:
        with self._lock:
            entries = [p for p in self._processes.values() if p.session_id == session_id]
        return [self._info(entry) for entry in sorted(entries, key=lambda p: p.started_at)]

    def get(self, process_id: str, *, session_id: str | None = None) -> dict[str, Any]:
        return self._info(self._get(process_id, session_id))

    def kill(self, process_id: str, *, session_id: str | None = None) -> dict[str, Any]:
        """Stop a process and everything it started (SIGTERM, SIGKILL after the grace)."""
        entry = self._get(process_id, session_id)
        was_running = entry.running
        stop_processes([entry.popen], self.grace)
        return {**self._info(entry), "was_running": was_running}

    def close_session(self, session_id: str) -> int:
        """Stop and forget every process of a session; returns how many were running."""
        with self._lock:
            entries = [p for p in self._processes.values() if p.session_id == session_id]
            for entry in entries:
                del self._processes[entry.id]
        return self._stop(entries)

    def close_all(self) -> int:
        """Stop and forget every process (server shutdown); returns how many were running."""
        with self._lock:
            entries = list(self._processes.values())
            self._processes.clear()
        return self._stop(entries)

    def _stop(self, entries: builtins.list[_Background]) -> int:
        running = sum(entry.running for entry in entries)
        if entries:
            # Ended ones too: something they started may still run in their group.
            stop_processes([entry.popen for entry in entries], self.grace)
        return running

    def _get(self, process_id: str, session_id: str | None) -> _Background:
        with self._lock:
            entry = self._processes.get(process_id) if isinstance(process_id, str) else None
        # Another session's process does not exist, as far as this one can tell.
        if entry is None or (session_id is not None and entry.session_id != session_id):
            raise NotFound(f"No background process {process_id}.", reason="process_not_found")
        return entry

    def _forget_old(self, session_id: str) -> None:
        """Keep at most ``max_per_session`` ended processes per session (their logs)."""
        ended = sorted(
            (p for p in self._processes.values() if p.session_id == session_id and not p.running),
            key=lambda p: p.started_at,
        )
        for entry in ended[: max(0, len(ended) - self.max_per_session)]:
            del self._processes[entry.id]

    def _info(self, entry: _Background, *, brief: bool = False) -> dict[str, Any]:
        info: dict[str, Any] = {
            "id": entry.id,
            "pid": entry.popen.pid,
            "command": self.security.redactor.redact(entry.command),
            "cwd": entry.cwd,
            "started_at": entry.started_at,
        }
        if not brief:
            exit_code = exit_status(entry.popen.poll())
            info.update(
                running=exit_code is None, exit_code=exit_code, output_bytes=entry.ring.total
            )
        return info
