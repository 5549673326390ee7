"""Typing a command for someone (the run API: notebooks, the agent) and seeing what became of it.

The shell's marks tell it apart: the command's block ends (it ran), a prompt comes back with no
command started (bash and zsh on a syntax error), or a continuation prompt asks for the rest of
the line (an unclosed quote or block). fish shows neither of the last two, so its own parser is
asked first. A line editor that may hold text (a half-typed line, what an earlier error left)
is cleared with an interrupt before anything is typed, so the command is never glued to it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import Conflict, InvalidRequest, Timeout
from terax_jupyter.services.pty import shells
from terax_jupyter.services.pty import text as terminal_text

if TYPE_CHECKING:
    from terax_jupyter.services.pty.session import PtySession

# How long an interrupt may take to bring the prompt back (clearing the line editor).
CLEAR_WAIT = 10.0
# The shell's complaint, as much of it as an error message carries.
MAX_COMPLAINT = 600


async def run_line(session: PtySession, command: str, *, timeout: float) -> dict[str, Any]:
    """Type ``command`` at an integrated shell's prompt; its block's text once it ends."""
    if session.line_watched:
        raise Conflict("Another command is being typed in this terminal.", reason="busy")
    problem = await shells.syntax_error(session.shell, session.shell_path, command)
    if problem:
        raise InvalidRequest(
            f"fish cannot run this line, so nothing was typed: {problem}", reason="syntax_error"
        )
    if session.line_dirty:
        await _clear_line(session)
    before = len(session.blocks.all())
    start = session.scrollback.end
    watch = session.watch_line()
    session.write(command.encode("utf-8") + b"\r")
    try:
        outcome, end = await asyncio.wait_for(asyncio.shield(watch), timeout)
    except asyncio.TimeoutError:
        raise Timeout(f"The command did not finish within {timeout:g} s.") from None
    if outcome == "not_run":
        complaint = await _complaint(session, start, end, command)
        raise InvalidRequest(
            f"The shell did not run the command: {complaint}", reason="syntax_error"
        )
    if outcome == "incomplete":
        await _clear_line(session)
        raise InvalidRequest(
            "The command line is incomplete (an unclosed quote, bracket or block), so the "
            "shell waited for more; nothing ran and the line was cleared.",
            reason="incomplete",
        )
    blocks = session.blocks.all()
    if len(blocks) <= before:
        if session.exited:
            raise Conflict("The shell exited.", reason="exited")
        raise Conflict("The shell did not report the command.", reason="no_block")
    result = await session.block_text(blocks[-1].id, rendered=False)
    assert result is not None
    return result


async def _clear_line(session: PtySession) -> None:
    """Interrupt what sits in the line editor and wait for the fresh prompt."""
    watch = session.watch_line()
    session.write(b"\x03")
    try:
        await asyncio.wait_for(asyncio.shield(watch), CLEAR_WAIT)
    except asyncio.TimeoutError:
        raise Conflict(
            "The shell's line editor holds text that an interrupt did not clear.",
            reason="busy",
        ) from None
    session.line_dirty = False


async def _complaint(session: PtySession, start: int, end: int, command: str) -> str:
    """What the shell printed between the typed line and its next prompt."""
    data, _ = session.scrollback.read(start, end)
    lines = [line.strip() for line in terminal_text.strip(data).splitlines()]
    said = [line for line in lines if line and not line.endswith(command.strip())]
    text = " ".join(said) or "it printed no reason (a syntax error?)."
    return text[:MAX_COMPLAINT]
