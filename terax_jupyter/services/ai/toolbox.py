"""The agent's tools by name, their schemas, and argument validation."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, ClassVar

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from terax_jupyter.services.ai.tools import (
    browser,
    edits,
    files,
    notebook_create,
    notebook_edits,
    notebook_runs,
    notebooks,
    planning,
    shell,
    terminal,
)
from terax_jupyter.services.ai.tools.base import Proposal, Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from types import ModuleType

    from terax_jupyter.services.ai.agents import AgentDefinition
    from terax_jupyter.services.ai.providers.base import ToolSpec

TOOL_MODULES: tuple[ModuleType, ...] = (
    files,
    notebooks,
    edits,
    notebook_create,
    notebook_edits,
    notebook_runs,
    shell,
    terminal,
    planning,
    browser,
)
SUBAGENTS = ("explore", "code-review", "security", "general")


class SubagentTool(Tool):
    name: ClassVar[str] = "run_subagent"
    description: ClassVar[str] = (
        "Hand a self-contained task to a sub-agent with read-only tools and its own context; "
        "you get its final answer. explore: find where/how something is done; code-review: "
        "review code or a change; security: audit for vulnerabilities; general: any other "
        "read-only research. Give the task in full: the sub-agent sees nothing else."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "agent": {"type": "string", "enum": list(SUBAGENTS)},
            "task": {"type": "string", "minLength": 1, "maxLength": 20000},
        },
        "required": ["agent", "task"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        if context.subagents is None:
            return ToolResult("Sub-agents cannot start sub-agents.", is_error=True)
        return await context.subagents(arguments["agent"], arguments["task"])


class Toolbox:
    def __init__(self, modules: tuple[ModuleType, ...] = TOOL_MODULES) -> None:
        self.tools: dict[str, Tool] = {}
        for module in modules:
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if (
                    issubclass(cls, Tool)
                    and cls.__module__ == module.__name__
                    and not (inspect.isabstract(cls) or getattr(cls, "name", None) is None)
                ):
                    self.tools[cls.name] = cls()
        self.tools[SubagentTool.name] = SubagentTool()
        self._validators = {
            name: Draft202012Validator(tool.parameters) for name, tool in self.tools.items()
        }

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def audit_subject(self, name: str, proposal: dict[str, Any]) -> dict[str, Any]:
        """What the audit names of a stored proposal of tool ``name`` (its path, its sources)."""
        tool = self.tools.get(name)
        try:
            return tool.audit_subject(Proposal.from_json(proposal)) if tool is not None else {}
        except (KeyError, TypeError, ValueError, AttributeError):
            # A malformed stored proposal must not stop the decision that is being recorded.
            return {"unreadable": True}

    def specs(self, agent: AgentDefinition) -> list[ToolSpec]:
        return [self.tools[name].spec() for name in agent.tools if name in self.tools]

    def validate(self, tool: Tool, arguments: dict[str, Any]) -> str | None:
        """A sentence about the first problem with ``arguments``, or None when they fit."""
        error = best_match(self._validators[tool.name].iter_errors(arguments))
        if error is None:
            return None
        where = "/".join(str(part) for part in error.absolute_path)
        return f"{where}: {error.message}" if where else error.message
