"""The agent's meta tools: todo_write (its visible plan) and suggest_command (never run)."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any, ClassVar

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.ai.tools.base import Tool, ToolResult
from terax_jupyter.services.ai.tools.files import string_arg

if TYPE_CHECKING:
    from terax_jupyter.services.ai.tools.base import ToolContext
    from terax_jupyter.services.ai.wire import Todo

STATUSES = ("pending", "in_progress", "completed")
MAX_TODOS = 100
MAX_TODO_CHARS = 500
MAX_COMMAND_CHARS = 8192
MAX_EXPLANATION_CHARS = 2000


class TodoWrite(Tool):
    name: ClassVar[str] = "todo_write"
    description: ClassVar[str] = (
        "Replace your todo list for this task; the user sees it. Use it for work with "
        "several steps: list the steps, mark one in_progress when you start it (at most one "
        "at a time) and completed as soon as it is done. Send the whole list every time."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "maxItems": MAX_TODOS,
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "The step, briefly."},
                        "status": {"type": "string", "enum": list(STATUSES)},
                    },
                    "required": ["content", "status"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["todos"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        todos = _todos(arguments.get("todos"), context)
        context.emit({"type": "todos", "todos": todos})
        counts = {status: sum(t["status"] == status for t in todos) for status in STATUSES}
        if not todos:
            summary = "Todo list cleared."
        else:
            summary = (
                f"Todo list updated: {counts['completed']} of {len(todos)} completed, "
                f"{counts['pending']} pending."
            )
            current = [t["content"] for t in todos if t["status"] == "in_progress"]
            if current:
                summary += f" In progress: {current[0]}"
        return ToolResult(summary, data={"todos": todos})


def _todos(value: Any, context: ToolContext) -> list[Todo]:
    if not isinstance(value, list):
        raise InvalidRequest("'todos' must be a list.", reason="invalid_argument")
    if len(value) > MAX_TODOS:
        raise InvalidRequest(f"At most {MAX_TODOS} todos.", reason="invalid_argument")
    todos: list[Todo] = []
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict) or set(item) - {"content", "status"}:
            raise InvalidRequest(
                f"Todo {number} must be an object with only content and status.",
                reason="invalid_argument",
            )
        content = item.get("content")
        if not isinstance(content, str) or not content.strip():
            raise InvalidRequest(f"Todo {number} has no content.", reason="invalid_argument")
        if len(content) > MAX_TODO_CHARS:
            raise InvalidRequest(
                f"Todo {number} is longer than {MAX_TODO_CHARS} characters.",
                reason="invalid_argument",
            )
        status = item.get("status")
        if status not in STATUSES:
            raise InvalidRequest(
                f"Todo {number} has status {status!r}; use one of {', '.join(STATUSES)}.",
                reason="invalid_argument",
            )
        # The list is shown in the browser and stored with the session: no secrets in it.
        content = context.security.redactor.redact(" ".join(content.split()))
        todos.append({"content": content, "status": status})
    if sum(t["status"] == "in_progress" for t in todos) > 1:
        raise InvalidRequest(
            "At most one todo may be in_progress at a time.", reason="invalid_argument"
        )
    return todos


class SuggestCommand(Tool):
    name: ClassVar[str] = "suggest_command"
    description: ClassVar[str] = (
        "Suggest a shell command for the user to run in their terminal. It is shown with "
        "your explanation and is NOT run; use it when the user should run something "
        "themselves (interactive programs, long-running servers, their own credentials)."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "One command line."},
            "explanation": {"type": "string", "description": "What it does and why, briefly."},
        },
        "required": ["command", "explanation"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        command = string_arg(arguments, "command")
        explanation = string_arg(arguments, "explanation", empty=True)
        if not command.strip():
            raise InvalidRequest("The command is empty.", reason="invalid_argument")
        if len(command) > MAX_COMMAND_CHARS:
            raise InvalidRequest(
                f"The command is longer than {MAX_COMMAND_CHARS} characters.",
                reason="invalid_argument",
            )
        if len(explanation) > MAX_EXPLANATION_CHARS:
            raise InvalidRequest(
                f"The explanation is longer than {MAX_EXPLANATION_CHARS} characters.",
                reason="invalid_argument",
            )
        # A suggestion is pasted into a terminal: a newline would run it on paste, and
        # escapes or bidi characters would make it look like another command.
        _refuse_hidden(command, "command", allowed="")
        _refuse_hidden(explanation, "explanation", allowed="\n\t")
        redact = context.security.redactor.redact
        command, explanation = redact(command.strip()), redact(explanation.strip())
        context.emit({"type": "suggestion", "command": command, "explanation": explanation})
        return ToolResult(
            "The command was shown to the user as a suggestion; it was not run.",
            data={"command": command, "explanation": explanation},
        )


def _refuse_hidden(text: str, name: str, *, allowed: str) -> None:
    for ch in text:
        if ch in allowed:
            continue
        code = ord(ch)
        if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            raise InvalidRequest(
                f"The {name} contains a control character (U+{code:04X}).",
                reason="control_character",
            )
        if unicodedata.category(ch) in ("Cf", "Zl", "Zp"):
            raise InvalidRequest(
                f"The {name} contains an invisible or bidirectional character (U+{code:04X}).",
                reason="control_character",
            )
