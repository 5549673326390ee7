"""Helpers for the terminal tests: a recording client, waiting, rc files, process checks."""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.services.pty.session import PtySession

SHELLS = ("bash", "zsh", "fish")
PROMPT = "MYPROMPT"

# Each shell's own startup files set a marker and a prompt; the integration must keep both.
RC_FILES = {
    ".bashrc": "export TERAX_TEST_MARKER=bashrc\nPS1='MYPROMPT-bash[$?]\\$ '\n",
    ".zshrc": "export TERAX_TEST_MARKER=zshrc\nPS1='MYPROMPT-zsh[%?]%# '\n",
    ".config/fish/config.fish": (
        "set -gx TERAX_TEST_MARKER fishrc\n"
        'function fish_prompt; echo -n "MYPROMPT-fish[$status]> "; end\n'
        "function fish_greeting; end\n"
        "if status is-login; set -gx TERAX_TEST_LOGIN fish-login; end\n"
    ),
    # Login files: read only by login shells.
    ".profile": 'export TERAX_TEST_LOGIN=profile\n. "$HOME/.bashrc"\n',
    ".zprofile": "export TERAX_TEST_LOGIN=zprofile\n",
}


def write_rc_files(home: Path, extra: dict[str, str] | None = None) -> None:
    for name, text in {**RC_FILES, **(extra or {})}.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    # fish would otherwise generate completions in the background on its first start.
    completions = home / ".local" / "share" / "fish" / "generated_completions"
    completions.mkdir(parents=True, exist_ok=True)


class Recorder:
    """A PtyClient that keeps what it gets; ``hold()`` stops it taking bytes until ``release()``."""

    def __init__(self) -> None:
        self.output = bytearray()
        self.frames: list[bytes] = []
        self.controls: list[dict[str, Any]] = []
        # The scrollback replay of the last attach, once its ``replayed`` mark came.
        self.replay: bytes | None = None
        self._attach_frame = 0
        self._held: list[tuple[asyncio.Future[None], bytes]] | None = None

    def send_output(self, data: bytes) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._held is not None:
            self._held.append((future, data))
        else:
            self._take(future, data)
        return future

    def send_control(self, message: dict[str, Any]) -> None:
        self.controls.append(message)
        if message.get("type") == "attached":
            self.replay, self._attach_frame = None, len(self.frames)
        elif message.get("type") == "replayed":
            self.replay = b"".join(self.frames[self._attach_frame :])

    async def replayed(self, timeout: float = 10.0) -> bytes:
        """The replay of the last attach, once it is complete."""
        await wait_for(lambda: self.replay is not None, timeout, "the replay")
        assert self.replay is not None
        return self.replay

    def hold(self) -> None:
        if self._held is None:
            self._held = []

    def take_until(self, held: int) -> None:
        """Take the oldest held frames until at most ``held`` bytes wait; keep holding."""
        while self._held and self.held_bytes > held:
            future, data = self._held.pop(0)
            self._take(future, data)

    def release(self) -> None:
        held, self._held = self._held or [], None
        for future, data in held:
            self._take(future, data)

    @property
    def held_bytes(self) -> int:
        return sum(len(data) for _, data in self._held or [])

    @property
    def held_frames(self) -> int:
        return len(self._held or [])

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [message for message in self.controls if message.get("type") == kind]

    def text(self) -> str:
        return self.output.decode("utf-8", "replace")

    def _take(self, future: asyncio.Future[None], data: bytes) -> None:
        self.output += data
        self.frames.append(data)
        future.set_result(None)


async def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, message: str = "") -> Any:
    """Poll until ``predicate()`` is truthy; fail with ``message`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting: {message or predicate}")
        await asyncio.sleep(0.01)


async def at_prompt(session: PtySession, timeout: float = 15.0) -> None:
    """Wait until an integrated shell shows its prompt."""
    await wait_for(
        lambda: session.integrated and session.phase in ("prompt", "input"),
        timeout,
        f"{session.shell} prompt",
    )


def scrollback_text(session: PtySession) -> str:
    return bytes(session.scrollback.read()[0]).decode("utf-8", "replace")


# -- processes ------------------------------------------------------------------------------------


# Writes ``total`` bytes of lines as fast as the terminal takes them; its progress goes to a file.
PRODUCER = """
import os, sys
total, progress = int(sys.argv[1]), os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT, 0o600)
block = (b"y" * 1023 + b"\\n") * 64
written = 0
while written < total:
    written += os.write(1, block)
    os.pwrite(progress, b"%20d" % written, 0)
"""


def progress(path: Path) -> int:
    """What the producer has written so far."""
    try:
        return int(path.read_text() or 0)
    except (FileNotFoundError, ValueError):
        return 0


async def stalled(path: Path, quiet: float = 0.4) -> int:
    """Wait until the producer's progress stops moving for ``quiet`` seconds; return it."""
    last = -1
    while True:
        now = progress(path)
        if now == last:
            return now
        last = now
        await asyncio.sleep(quiet)


def process_state(pid: int) -> str | None:
    """The state letter in /proc/<pid>/stat (``Z``: zombie), or None when there is no such pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b") ", 1)[1][:1].decode()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b") ", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def session_members(sid: int) -> list[int]:
    """Live (non-zombie) processes whose session id is ``sid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            if os.getsid(pid) != sid:
                continue
        except OSError:
            continue
        if process_state(pid) not in (None, "Z"):
            found.append(pid)
    return found


def zombie_children() -> list[int]:
    """Zombies whose parent is this (the server's) process: children nobody reaped."""
    me = os.getpid()
    return [
        int(name)
        for name in os.listdir("/proc")
        if name.isdigit() and process_state(int(name)) == "Z" and parent_of(int(name)) == me
    ]


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def alive(pid: int) -> bool:
    return process_state(pid) not in (None, "Z")
