"""A replay the user asks for by name (``/replay <workflow>`` in the panel, or
``POST .../runs {"replay": {...}}``): a run that makes no model call.

The run calls the workflow's replay tool itself, as if the model had asked for it, so the
call takes the same path as the agent's (plan mode, rules, the approval card of a destructive
workflow, the audit) and joins the conversation as a tool call with its result. That is
what makes a saved flow cheap to repeat: TERX's warm path without a model in the loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.ai.providers.base import ToolCall
from terax_jupyter.services.browser.ir import is_identifier

RUN_TOOL = "browser_run_workflow"
DESTRUCTIVE_RUN_TOOL = "browser_run_destructive_workflow"
MAX_INPUTS = 64
MAX_INPUT_CHARS = 10_000


@dataclass(frozen=True)
class ReplayRequest:
    workflow: str
    inputs: dict[str, str]

    @property
    def prompt(self) -> str:
        """The user's turn as stored: the workflow and the names of its inputs, never the
        values (a typed password must not land in the conversation)."""
        names = f" ({', '.join(sorted(self.inputs))})" if self.inputs else ""
        return f"/replay {self.workflow}{names}"

    def call(self, side_effect: str, call_id: str) -> ToolCall:
        """The tool call the run makes: the destructive tool asks the user first."""
        tool = DESTRUCTIVE_RUN_TOOL if side_effect == "destructive" else RUN_TOOL
        arguments: dict[str, Any] = {"name": self.workflow}
        if self.inputs:
            arguments["inputs"] = dict(self.inputs)
        return ToolCall(id=call_id, name=tool, arguments=arguments)


def parse_replay(value: Any) -> ReplayRequest:
    """``{"workflow": name, "inputs": {name: text}}``, checked; a clear 400 otherwise."""
    if not isinstance(value, dict) or set(value) - {"workflow", "inputs"}:
        raise InvalidRequest(
            '\'replay\' is {"workflow": name, "inputs": {name: text}}.',
            reason="invalid_parameter",
        )
    workflow = value.get("workflow")
    if not isinstance(workflow, str) or not workflow.strip():
        raise InvalidRequest(
            "'replay.workflow' names a saved workflow.", reason="invalid_parameter"
        )
    inputs = value.get("inputs") or {}
    if not isinstance(inputs, dict) or len(inputs) > MAX_INPUTS:
        raise InvalidRequest(
            f"'replay.inputs' maps at most {MAX_INPUTS} input names to text.",
            reason="invalid_parameter",
        )
    for name, text in inputs.items():
        if not is_identifier(name):
            raise InvalidRequest(
                f"{name!r} is not an input name (letters, digits and _).",
                reason="invalid_input_name",
            )
        if not isinstance(text, str) or len(text) > MAX_INPUT_CHARS:
            raise InvalidRequest(
                f"The input {name!r} is text of at most {MAX_INPUT_CHARS} characters.",
                reason="invalid_parameter",
            )
    return ReplayRequest(workflow.strip(), dict(inputs))
