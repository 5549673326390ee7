"""Typing a command for someone (the run API: notebooks, the agent) and seeing what became of it.

The shell's marks tell it apart: the command's block ends (it ran), a prompt comes back with no
command started (bash and zsh on a syntax error), or a continuation prompt asks for the rest of
the line (an unclosed quote or block). fish shows neither of the last two, so its own parser is
asked first.

Before the line is typed, a barrier key (``PtySession.sync``) goes ahead of it: the shell reads
it in order with whatever was typed before (a half-typed line, Enters typed ahead, a line fish
kept after an error), empties its line editor and prints a mark. Every prompt those earlier
keys bring comes before that mark, so the first prompt after it answers this line and no
other, and the line is never glued to text already there. An interrupt is used only to leave
a continuation prompt, where bash and zsh always draw a fresh prompt.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import Conflict, InvalidRequest, Timeout
from terax_jupyter.services.pty import shells
from terax_jupyter.services.pty import text as terminal_text

if TYPE_CHECKING:
    from terax_jupyter.services.pty.session import PtySession

# How long the shell may take to read the barrier, or to draw a prompt after an interrupt.
CLEAR_WAIT = 10.0
# An interrupt with no prompt after it this long is sent again (until CLEAR_WAIT).
INTERRUPT_AGAIN = 2.0
# The shell's complaint, as much of it as an error message carries.
MAX_COMPLAINT = 600


async def run_line(session: PtySession, command: str, *, timeout: float) -> dict[str, Any]:
    """Type ``command`` at an integrated shell's prompt; its block's text once it ends."""
    if session.line_watched:
        raise Conflict("Another command is being typed in this terminal.", reason="busy")
    session.line_claimed = True
    try:
        problem = await shells.syntax_error(session.shell, session.shell_path, command)
        if problem:
            raise InvalidRequest(
                f"fish cannot run this line, so nothing was typed: {problem}",
                reason="syntax_error",
            )
        if session.continuation:
            await _clear_line(session)
        await _barrier(session)
        before = len(session.blocks.all())
        start = session.scrollback.end
        watch = session.watch_line()
        session.write(command.encode("utf-8") + b"\r")
    finally:
        session.line_claimed = False
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


async def _barrier(session: PtySession) -> None:
    try:
        await asyncio.wait_for(asyncio.shield(session.sync()), CLEAR_WAIT)
    except asyncio.TimeoutError:
        raise Conflict(
            f"The shell did not come back to its prompt within {CLEAR_WAIT:g} s.",
            reason="busy",
        ) from None
    if session.exited:
        raise Conflict("The shell exited.", reason="exited")


async def _clear_line(session: PtySession) -> None:
    """Interrupt a continuation prompt and wait for the fresh prompt.

    The interrupt is sent again while no prompt comes: a SIGINT that reaches bash between
    drawing the continuation prompt and reading input can be lost (seen on a loaded machine),
    and an interrupt at a fresh prompt only draws another one, after this line's answer."""
    watch = session.watch_line()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CLEAR_WAIT
    while True:
        session.write(b"\x03")
        left = deadline - loop.time()
        try:
            await asyncio.wait_for(asyncio.shield(watch), min(INTERRUPT_AGAIN, left))
            return
        except asyncio.TimeoutError:
            if loop.time() >= deadline:
                raise Conflict(
                    "The shell's line editor holds text that an interrupt did not clear.",
                    reason="busy",
                ) from None


async def _complaint(session: PtySession, start: int, end: int, command: str) -> str:
    """What the shell printed between the typed line and its next prompt."""
    data, _ = session.scrollback.read(start, end)
    lines = [line.strip() for line in terminal_text.strip(data).splitlines()]
    said = [line for line in lines if line and not line.endswith(command.strip())]
    text = " ".join(said) or "it printed no reason (a syntax error?)."
    return text[:MAX_COMPLAINT]
