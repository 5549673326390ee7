"""A run that makes one named tool call for an external agent (``jupyter terax mcp``), with no
model: the call takes the path of any agent tool call (the security layer, the session's
approval rules, the approval card in the AI panel, the audit), like a replay does.

Only the notebook tools that change or run something are served this way: what only reads
(``notebook_read``, ``read_file``) has its own REST routes, and the rest of the agent's tools
are the agent's own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.ai.providers.base import ToolCall

EXTERNAL_TOOLS = (
    "notebook_edit",
    "notebook_create",
    "notebook_run",
    "notebook_run_status",
    "notebook_interrupt",
    "notebook_restart",
    "kernel_variables",
)
MAX_ARGUMENTS_CHARS = 200_000
MAX_CALLER_CHARS = 80


@dataclass(frozen=True)
class ToolRequest:
    name: str
    arguments: dict[str, Any]
    caller: str

    @property
    def prompt(self) -> str:
        """What the session shows as the run's prompt."""
        return f"{self.name}, asked by {self.caller} (an external agent, over MCP)"

    def call(self, call_id: str) -> ToolCall:
        return ToolCall(id=call_id, name=self.name, arguments=dict(self.arguments))


def parse_tool_request(value: Any) -> ToolRequest:
    """``{"name": tool, "arguments": {...}, "caller": "Claude Code"}``, checked."""
    if not isinstance(value, dict) or set(value) - {"name", "arguments", "caller"}:
        raise InvalidRequest(
            '\'tool\' is {"name": tool, "arguments": {...}, "caller": name}.',
            reason="invalid_parameter",
        )
    name = value.get("name")
    if name not in EXTERNAL_TOOLS:
        raise InvalidRequest(
            f"'tool.name' is one of {', '.join(EXTERNAL_TOOLS)}.", reason="invalid_parameter"
        )
    arguments = value.get("arguments", {})
    if not isinstance(arguments, dict) or len(json.dumps(arguments)) > MAX_ARGUMENTS_CHARS:
        raise InvalidRequest(
            f"'tool.arguments' is a JSON object of at most {MAX_ARGUMENTS_CHARS} characters.",
            reason="invalid_parameter",
        )
    caller = value.get("caller", "an MCP client")
    if not isinstance(caller, str):
        raise InvalidRequest("'tool.caller' is a name.", reason="invalid_parameter")
    shown = " ".join("".join(ch for ch in caller if ch.isprintable()).split())
    return ToolRequest(name, arguments, shown[:MAX_CALLER_CHARS] or "an MCP client")
