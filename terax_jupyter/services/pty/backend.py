"""PTY backends: spawn a shell on a pseudo-terminal and move bytes without blocking the loop.

POSIX uses ptyprocess and the event loop's reader on the master descriptor: no
thread per session. Windows uses pywinpty with one reader thread per session,
since ConPTY offers no descriptor to poll.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import errno
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

READ_SIZE = 65536
# Bytes one readiness callback may read before it yields to other work on the loop.
READ_BUDGET = 256 * 1024
EXIT_POLL_SECONDS = 0.5  # how often a shell's exit is polled where there is no pidfd
KILL_WAIT = 2.0  # seconds a closed session waits for its SIGKILLed processes to be gone


class PtyProcess(abc.ABC):
    """A running program on a pseudo-terminal. Subclasses implement the platform parts."""

    pid: int
    exit_code: int | None = None

    @abc.abstractmethod
    def start_reading(
        self, on_data: Callable[[bytes], None], on_eof: Callable[[], None]
    ) -> None: ...

    @abc.abstractmethod
    def pause_reading(self) -> None: ...

    @abc.abstractmethod
    def resume_reading(self) -> None: ...

    @abc.abstractmethod
    def write(self, data: bytes) -> None: ...

    @abc.abstractmethod
    def resize(self, columns: int, rows: int) -> None: ...

    @abc.abstractmethod
    def signal_foreground(self, signum: int) -> None: ...

    @abc.abstractmethod
    def terminate(self, grace: float) -> int | None:
        """End the program and everything it started; blocking (call from a thread)."""

    @abc.abstractmethod
    def poll_exit(self) -> int | None: ...


class PtyBackend:
    """Spawns shells. A traitlets ``Type`` on the manager lets an admin swap it."""

    def spawn(
        self, argv: list[str], cwd: str, env: dict[str, str], columns: int, rows: int
    ) -> PtyProcess:
        if sys.platform == "win32":
            return WindowsPty.spawn(argv, cwd, env, columns, rows)
        return PosixPty.spawn(argv, cwd, env, columns, rows)


class PosixPty(PtyProcess):
    def __init__(self, process: Any) -> None:
        self._process = process
        self.pid = process.pid
        self.fd: int = process.fd
        os.set_blocking(self.fd, False)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_data: Callable[[bytes], None] | None = None
        self._on_eof: Callable[[], None] | None = None
        self._reading = False
        self._closed = False
        self._unwritten = bytearray()
        self._pidfd: int | None = None

    @classmethod
    def spawn(
        cls, argv: list[str], cwd: str, env: dict[str, str], columns: int, rows: int
    ) -> PosixPty:
        from ptyprocess import PtyProcess as Spawner

        process = Spawner.spawn(
            argv, cwd=cwd, env=env, dimensions=(rows, columns), preexec_fn=_default_signals
        )
        return cls(process)

    def start_reading(self, on_data: Callable[[bytes], None], on_eof: Callable[[], None]) -> None:
        self._loop = asyncio.get_running_loop()
        self._on_data, self._on_eof = on_data, on_eof
        self.resume_reading()
        self._watch_exit()

    def _watch_exit(self) -> None:
        """End of the shell, seen by its pid, not only by the terminal's end of file: a
        background job (``sleep 600 &`` then ``exit``) keeps the terminal open after the
        shell is gone, so EOF never comes. A pidfd is readable once the process exited;
        where there is none (before Linux 5.3), the exit is polled."""
        assert self._loop is not None
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            self._loop.call_later(EXIT_POLL_SECONDS, self._poll_exited)
            return
        self._loop.add_reader(self._pidfd, self._shell_exited)

    def _poll_exited(self) -> None:
        if self._closed or self._loop is None or self._loop.is_closed():
            return
        if self.poll_exit() is not None:
            self._shell_exited()
        else:
            self._loop.call_later(EXIT_POLL_SECONDS, self._poll_exited)

    def _shell_exited(self) -> None:
        """The shell is gone: what it wrote last is read, then the end is reported as if
        the terminal had closed (whatever still holds it open is ended with the session)."""
        self._stop_watching()
        if self._closed:
            return
        self._readable()  # its last output (the read stops where nothing more is there)
        if not self._closed:
            self.pause_reading()
            self._closed = True
            if self._on_eof is not None:
                self._on_eof()

    def _stop_watching(self) -> None:
        if self._pidfd is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self._pidfd)
        with contextlib.suppress(OSError):
            os.close(self._pidfd)
        self._pidfd = None

    def pause_reading(self) -> None:
        if self._reading and self._loop is not None and not self._closed:
            self._loop.remove_reader(self.fd)
            self._reading = False

    def resume_reading(self) -> None:
        if not self._reading and self._loop is not None and not self._closed:
            self._loop.add_reader(self.fd, self._readable)
            self._reading = True

    def _readable(self) -> None:
        chunks = []
        total = 0
        eof = False
        while total < READ_BUDGET:
            try:
                data = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                break
            except OSError:
                # EIO: every slave descriptor is closed, the program is gone.
                eof = True
                break
            if not data:
                eof = True
                break
            chunks.append(data)
            total += len(data)
        if chunks and self._on_data is not None:
            self._on_data(chunks[0] if len(chunks) == 1 else b"".join(chunks))
        if eof:
            self.pause_reading()
            self._closed = True
            self._stop_watching()
            if self._on_eof is not None:
                self._on_eof()

    def write(self, data: bytes) -> None:
        if self._closed:
            return
        if self._unwritten:
            self._unwritten += data
            return
        written = self._write_some(data)
        if written < len(data):
            self._unwritten += data[written:]
            if self._loop is not None:
                self._loop.add_writer(self.fd, self._writable)

    def _writable(self) -> None:
        written = self._write_some(bytes(self._unwritten))
        del self._unwritten[:written]
        if not self._unwritten and self._loop is not None:
            self._loop.remove_writer(self.fd)

    def _write_some(self, data: bytes) -> int:
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0
        except OSError as error:
            if error.errno in (errno.EIO, errno.EBADF):
                return len(data)  # the program is gone; the input goes nowhere
            raise

    def resize(self, columns: int, rows: int) -> None:
        if not self._closed:
            with contextlib.suppress(OSError):
                self._process.setwinsize(rows, columns)

    def signal_foreground(self, signum: int) -> None:
        with contextlib.suppress(OSError):
            os.killpg(os.tcgetpgrp(self.fd), signum)

    def poll_exit(self) -> int | None:
        if self.exit_code is None:
            with contextlib.suppress(Exception):
                if not self._process.isalive():
                    status = self._process.exitstatus
                    signalled = self._process.signalstatus
                    self.exit_code = status if status is not None else 128 + (signalled or 0)
        return self.exit_code

    def terminate(self, grace: float) -> int | None:
        """SIGHUP to the shell's process group and every process of its session, then SIGKILL."""
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(Exception):
                self._loop.call_soon_threadsafe(self._detach)
        targets = _session_processes(self.pid)
        for pid in targets:
            for signum in (signal.SIGHUP, signal.SIGCONT):
                with contextlib.suppress(OSError):
                    os.kill(pid, signum)
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGHUP)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(self._alive(pid) for pid in targets):
            time.sleep(0.02)
        # What forked during the grace is killed too. A SIGKILL is delivered, not awaited:
        # wait (bounded) until each target is gone, so a closed session has no process left.
        targets = sorted(set(targets) | set(_session_processes(self.pid)))
        for pid in targets:
            if self._alive(pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + KILL_WAIT
        while time.monotonic() < deadline and any(
            _alive(pid) for pid in targets if pid != self.pid
        ):
            time.sleep(0.01)
        with contextlib.suppress(Exception):
            self._process.close(force=True)
        self._closed = True
        for _ in range(100):
            if self.poll_exit() is not None:
                break
            time.sleep(0.01)
        return self.exit_code

    def _alive(self, pid: int) -> bool:
        if pid == self.pid:
            # Our own child: ptyprocess reaps it and keeps its status.
            return self.poll_exit() is None
        return _alive(pid)

    def _detach(self) -> None:
        if self._loop is None:
            return
        self._stop_watching()
        with contextlib.suppress(Exception):
            self._loop.remove_reader(self.fd)
        with contextlib.suppress(Exception):
            self._loop.remove_writer(self.fd)
        self._reading = False


# Python ignores SIGPIPE and SIGXFSZ, and the server handles SIGINT and SIGTERM. An
# ignored signal stays ignored across exec and a shell cannot trap it again, so without
# this `yes | head -1` would print "Broken pipe" instead of ending quietly.
_RESET_NAMES = "SIGPIPE SIGXFSZ SIGINT SIGQUIT SIGTERM SIGHUP SIGCHLD SIGTSTP SIGTTIN SIGTTOU"
_RESET_SIGNALS = tuple(
    getattr(signal, name) for name in _RESET_NAMES.split() if hasattr(signal, name)
)


def _default_signals() -> None:
    """In the child, before exec: every signal at its default and none blocked."""
    for signum in _RESET_SIGNALS:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, signal.SIG_DFL)
    with contextlib.suppress(OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_SETMASK, set())


def _session_processes(leader: int) -> list[int]:
    """The shell and every process in its session (jobs in their own groups included)."""
    found = {leader}
    try:
        import psutil

        with contextlib.suppress(psutil.Error):
            found.update(child.pid for child in psutil.Process(leader).children(recursive=True))
        for process in psutil.process_iter(["pid"]):
            with contextlib.suppress(OSError, psutil.Error):
                if os.getsid(process.pid) == leader:
                    found.add(process.pid)
    except ImportError:
        pass
    return sorted(found)


def _alive(pid: int) -> bool:
    """Whether another process (not our child) still runs; a zombie counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().split(b") ", 1)[-1][:1] != b"Z"
    except OSError:
        return True


class WindowsPty(PtyProcess):
    """ConPTY through pywinpty; reads on one thread that honours pause and resume."""

    def __init__(self, process: Any) -> None:
        self._process = process
        self.pid = process.pid
        self._resume = threading.Event()
        self._resume.set()
        self._closed = False

    @classmethod
    def spawn(
        cls, argv: list[str], cwd: str, env: dict[str, str], columns: int, rows: int
    ) -> WindowsPty:
        from winpty import PtyProcess as Spawner

        process = Spawner.spawn(argv, cwd=cwd, env=env, dimensions=(rows, columns))
        return cls(process)

    def start_reading(self, on_data: Callable[[bytes], None], on_eof: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()

        def pump() -> None:
            while not self._closed:
                self._resume.wait()
                try:
                    text = self._process.read(READ_SIZE)
                except EOFError:
                    break
                if text:
                    loop.call_soon_threadsafe(on_data, text.encode("utf-8", "surrogateescape"))
            loop.call_soon_threadsafe(on_eof)

        threading.Thread(target=pump, name=f"terax-pty-{self.pid}", daemon=True).start()

    def pause_reading(self) -> None:
        self._resume.clear()

    def resume_reading(self) -> None:
        self._resume.set()

    def write(self, data: bytes) -> None:
        if not self._closed:
            self._process.write(data.decode("utf-8", "replace"))

    def resize(self, columns: int, rows: int) -> None:
        with contextlib.suppress(Exception):
            self._process.setwinsize(rows, columns)

    def signal_foreground(self, signum: int) -> None:
        if signum == signal.SIGINT:
            self.write(b"\x03")

    def poll_exit(self) -> int | None:
        if self.exit_code is None and not self._process.isalive():
            self.exit_code = self._process.exitstatus
        return self.exit_code

    def terminate(self, grace: float) -> int | None:
        self._closed = True
        self._resume.set()
        with contextlib.suppress(Exception):
            self._process.terminate(force=True)
        return self.poll_exit()
