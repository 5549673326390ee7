"""``terax.terminal()``: a Terax terminal session driven from a cell.

``run()`` types a command at the prompt and waits for its block to end (the shell's OSC 133
marks, on the server), so it returns the command's own exit code and output, not a guess.
The session is the same the Lab terminal tab shows: open it there (``Terminal.id``) and
watch the commands run, or pass ``session=`` to drive a tab already open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from terax_jupyter.client.api import TeraxAPIError, segment
from terax_jupyter.notebook import background
from terax_jupyter.notebook.results import code_span, fenced

if TYPE_CHECKING:
    from terax_jupyter.notebook.connection import Connection

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0  # the server's bound for one command
SETTLE_TIMEOUT = 5.0  # how long an interrupted command gets to end its block


@dataclass(frozen=True)
class CommandResult:
    """A command's block: what ran, where, how it ended and what it printed."""

    command: str
    exit_code: int | None
    output: str
    duration: float | None  # seconds, from the shell's marks
    block_id: int
    session_id: str
    cwd: str | None = None
    truncated: bool = False  # the start of the output left the scrollback

    @classmethod
    def from_json(cls, session_id: str, answer: dict[str, Any]) -> CommandResult:
        block = answer["block"]
        duration = block.get("duration_ms")
        return cls(
            command=block.get("command", ""),
            exit_code=block.get("exit_code"),
            output=answer.get("text", ""),
            duration=None if duration is None else duration / 1000,
            block_id=int(block["id"]),
            session_id=session_id,
            cwd=block.get("cwd"),
            truncated=bool(answer.get("truncated")),
        )

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def check(self) -> CommandResult:
        """This result, or CommandFailed when the command did not exit 0."""
        if not self.ok:
            raise CommandFailed(self)
        return self

    def __str__(self) -> str:
        return self.output

    def _repr_markdown_(self) -> str:
        # Output is data: a fence it cannot close keeps its HTML and images from rendering.
        took = "" if self.duration is None else f" in {self.duration:.2f} s"
        return (
            f"{code_span('$ ' + self.command)} exited **{self.exit_code}**{took}\n\n"
            f"{fenced(self.output.rstrip(), '')}"
        )


class CommandFailed(Exception):
    """``CommandResult.check()`` of a command that did not exit 0."""

    def __init__(self, result: CommandResult) -> None:
        super().__init__(f"{result.command!r} exited {result.exit_code}")
        self.result = result


class CommandTimeout(TimeoutError):
    """The command did not end in time. ``result`` is its block as it stood (after the
    interrupt, when one was sent); ``interrupted`` says whether Ctrl-C was sent."""

    def __init__(self, message: str, result: CommandResult | None, interrupted: bool) -> None:
        super().__init__(message)
        self.result = result
        self.interrupted = interrupted


class Terminal:
    """One Terax terminal session (a shell on a PTY on the server)."""

    def __init__(self, connection: Connection, session: dict[str, Any]) -> None:
        self.connection = connection
        self.session = session

    def __repr__(self) -> str:
        return f"<terax terminal {self.id} {self.name!r} in {self.session.get('cwd')}>"

    @property
    def id(self) -> str:
        return str(self.session["id"])

    @property
    def name(self) -> str:
        return str(self.session.get("name") or "")

    @property
    def cwd(self) -> str:
        return str(self.session.get("cwd") or "")

    def _path(self, *parts: str) -> str:
        return "/".join(["pty/sessions", segment(self.id), *parts])

    def refresh(self) -> dict[str, Any]:
        self.session = self.connection.call("GET", self._path())
        return self.session

    # -- commands -------------------------------------------------------------------------

    def run(
        self,
        command: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        interrupt_on_timeout: bool = True,
        check: bool = False,
    ) -> CommandResult:
        """Type ``command`` at the prompt and wait for its block to end. Past ``timeout``
        seconds the command gets Ctrl-C (unless ``interrupt_on_timeout=False``) and
        CommandTimeout is raised; a kernel interrupt sends Ctrl-C too. ``check=True``
        raises CommandFailed for a non-zero exit code."""
        future = background.submit(self.run_async(command, timeout, interrupt_on_timeout))
        try:
            result = future.result()
        except KeyboardInterrupt:
            future.cancel()
            with contextlib.suppress(Exception):
                self.interrupt()
            raise
        return result.check() if check else result

    async def run_async(
        self,
        command: str,
        timeout: float = DEFAULT_TIMEOUT,
        interrupt_on_timeout: bool = True,
    ) -> CommandResult:
        """``run`` as a coroutine of the background loop (see ``arun`` for other loops)."""
        if not 0 < timeout <= MAX_TIMEOUT:
            raise ValueError(f"timeout is more than 0 and at most {MAX_TIMEOUT:g} seconds.")
        try:
            answer = await self.connection.request(
                "POST",
                self._path("run"),
                body={"command": command, "timeout": timeout},
                timeout=timeout + 15,
            )
        except TeraxAPIError as error:
            if error.reason != "timeout" or error.status is None:
                raise
            interrupted = False
            if interrupt_on_timeout:
                await self._signal("INT")
                interrupted = True
            partial = await self._last_block(command, settle=SETTLE_TIMEOUT if interrupted else 0)
            raise CommandTimeout(
                f"{command!r} did not finish within {timeout:g} s"
                + ("; it was interrupted (Ctrl-C)." if interrupted else "; it is still running."),
                partial,
                interrupted,
            ) from None
        return CommandResult.from_json(self.id, answer)

    async def arun(self, command: str, **options: Any) -> CommandResult:
        """``run`` for ``await`` in a cell (or any event loop)."""
        return await background.wait(self.run_async(command, **options))

    async def _last_block(self, command: str, *, settle: float) -> CommandResult | None:
        """The newest block of ``command``, once it ended or after ``settle`` seconds."""
        deadline = time.monotonic() + settle
        while True:
            blocks = (await self.connection.request("GET", self._path("blocks")))["blocks"]
            mine = [b for b in blocks if b.get("command") == command]
            if not mine:
                return None
            block = mine[-1]
            if not block.get("running") or time.monotonic() >= deadline:
                answer = await self.connection.request(
                    "GET", self._path("blocks", str(block["id"]))
                )
                return CommandResult.from_json(self.id, answer)
            await asyncio.sleep(0.1)

    # -- the terminal ---------------------------------------------------------------------

    def interrupt(self) -> None:
        """Ctrl-C: SIGINT to the terminal's foreground program."""
        background.run(self._signal("INT"))

    def signal(self, name: str) -> None:
        """A signal to the foreground program: INT, TERM, HUP, QUIT or TSTP."""
        background.run(self._signal(name))

    def send(self, text: str) -> None:
        """Type ``text`` into the terminal (add "\\r" to press Enter)."""
        background.run(self._send({"type": "input", "data": text}))

    async def _signal(self, name: str) -> None:
        await self._send({"type": "signal", "name": name.upper()})

    async def _send(self, message: dict[str, Any]) -> None:
        # The stream WebSocket is the terminal's input; attaching to send one message also
        # replays the scrollback to us, which is dropped with the socket.
        socket = await self.connection.websocket(f"pty/{segment(self.id)}/stream")
        try:
            await socket.send(json.dumps(message))
        finally:
            await socket.close()

    def output(self, lines: int = 50, *, rendered: bool = False) -> str:
        """The terminal's last ``lines`` lines, as text."""
        answer = self.connection.call(
            "GET",
            self._path("lines"),
            params={"count": lines, "format": "rendered" if rendered else "plain"},
        )
        return str(answer["text"])

    def blocks(self) -> list[dict[str, Any]]:
        """The commands this terminal ran (command, cwd, exit code, times)."""
        return list(self.connection.call("GET", self._path("blocks"))["blocks"])

    def view(self, *, rows: int | None = None) -> Any:
        """A live view of this terminal for the cell (xterm.js in a widget): what runs shows
        as it runs, and keys typed there reach the shell. Display it (last line of a cell)."""
        from terax_jupyter.notebook.terminal_view import terminal_widget

        return terminal_widget(self, rows=rows)

    def close(self) -> None:
        """End the shell (and its jobs) and the session."""
        with contextlib.suppress(TeraxAPIError):
            self.connection.call("DELETE", self._path())


def kernel_folder(server_root: str) -> str:
    """The kernel's current folder when the server's root holds it, else the server root
    (empty: the server's default)."""
    try:
        here = os.getcwd()
    except OSError:
        return ""
    root = os.path.normpath(server_root) if server_root else ""
    if root and (here == root or here.startswith(root.rstrip(os.sep) + os.sep)):
        return here
    return ""


def open_terminal(
    connection: Connection,
    *,
    cwd: str | None = None,
    name: str | None = None,
    shell: str | None = None,
    session: str | Terminal | None = None,
) -> Terminal:
    """A new terminal in ``cwd`` (relative to the kernel's folder; by default the kernel's
    folder), or the existing ``session``."""
    if session is not None:
        session_id = session.id if isinstance(session, Terminal) else str(session)
        return Terminal(connection, connection.call("GET", f"pty/sessions/{segment(session_id)}"))
    here = kernel_folder(connection.server_root)
    if cwd is None:
        folder = here
    elif os.path.isabs(cwd) or cwd.startswith("~"):
        folder = os.path.expanduser(cwd)
    else:
        # Relative to the notebook's folder when the server can see it, else to its root.
        folder = os.path.join(here, cwd) if here else cwd
    body: dict[str, Any] = {"cwd": folder}
    if name:
        body["name"] = name
    if shell:
        body["shell"] = shell
    return Terminal(connection, connection.call("POST", "pty/sessions", body=body))
