"""get_terminal_output: what a terminal session shows, as text the model can read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from terax_jupyter.exceptions import InvalidRequest, NotFound, Unavailable
from terax_jupyter.services.ai.tools.base import Tool, ToolResult
from terax_jupyter.services.ai.tools.files import for_model, int_arg, string_arg

if TYPE_CHECKING:
    from terax_jupyter.services.ai.tools.base import ToolContext
    from terax_jupyter.services.pty.session import PtySession

DEFAULT_LINES = 100
MAX_LINES = 2000


class GetTerminalOutput(Tool):
    name: ClassVar[str] = "get_terminal_output"
    description: ClassVar[str] = (
        "Read what a terminal shows: one command block (its command, exit code and output) "
        "or the last lines. Without a session, the most recently active terminal. Without "
        f"block or lines, the last {DEFAULT_LINES} lines. block counts from 0 for the oldest "
        "kept command; -1 is the latest."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "session": {"type": "string", "description": "Terminal session id (optional)."},
            "block": {
                "type": "integer",
                "description": "Command block index; negative counts from the end (-1: last).",
            },
            "lines": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LINES,
                "description": f"How many of the last lines to show (at most {MAX_LINES}).",
            },
        },
        "required": [],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        session_id = string_arg(arguments, "session", default="", empty=True)
        block = int_arg(arguments, "block", default=None)
        lines = int_arg(arguments, "lines", default=None, minimum=1, maximum=MAX_LINES)
        if block is not None and lines is not None:
            raise InvalidRequest("Give block or lines, not both.", reason="invalid_argument")
        session = _session(context, session_id)
        title = f"Terminal '{session.name}' ({session.id})"
        if block is None:
            count = lines or DEFAULT_LINES
            text = await session.last_lines(count, rendered=True)
            header = f"{title}, last {count} lines:"
            data = {"session": session.id, "lines": count}
        else:
            text, header, data = await _block(session, block, title)
        if session.exited:
            header += f" (the shell has exited, code {session.exit_code})"
        # The header stays whole; the output keeps its end, which matters most.
        body = for_model(context, _tail(text), tail=True)
        return ToolResult(f"{for_model(context, header)}\n{body}", data=data)


def _session(context: ToolContext, session_id: str) -> PtySession:
    if context.pty is None:
        raise Unavailable("Terminals are not available on this server.", reason="no_terminals")
    if session_id:
        return context.pty.get(session_id)
    sessions = list(context.pty.sessions.values())
    if not sessions:
        raise NotFound("No terminal is open.", reason="no_terminal")
    return max(sessions, key=lambda s: s.last_activity)


async def _block(session: PtySession, index: int, title: str) -> tuple[str, str, dict[str, Any]]:
    blocks = session.blocks.all()
    if not blocks:
        raise NotFound(
            f"{title} has no command blocks (its shell reports none); read its lines instead.",
            reason="no_blocks",
        )
    if not -len(blocks) <= index < len(blocks):
        raise NotFound(
            f"{title} has {len(blocks)} command blocks; block must be from "
            f"{-len(blocks)} to {len(blocks) - 1}.",
            reason="no_block",
        )
    chosen = blocks[index]
    result = await session.block_text(chosen.id, rendered=True)
    if result is None:  # dropped from the index between the two calls
        raise NotFound(f"{title} no longer keeps that block.", reason="no_block")
    if chosen.running:
        status = "still running"
    else:
        status = f"exit {chosen.exit_code}" if chosen.exit_code is not None else "ended"
        status += f", {result['block']['duration_ms']} ms"
    header = f"{title}, block {index} `{chosen.command}` in {chosen.cwd} ({status}):"
    if result["truncated"]:
        header += " [its start is no longer kept]"
    data = {
        "session": session.id,
        "block": chosen.id,
        "command": chosen.command,
        "exit_code": chosen.exit_code,
        "running": chosen.running,
    }
    return result["text"], header, data


def _tail(text: str) -> str:
    """Terminal output matters most at its end: keep the last MAX_LINES lines."""
    lines = text.split("\n")
    if len(lines) <= MAX_LINES:
        return text
    return f"[... {len(lines) - MAX_LINES} earlier lines not shown]\n" + "\n".join(
        lines[-MAX_LINES:]
    )
