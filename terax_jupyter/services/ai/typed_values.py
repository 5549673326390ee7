"""Typed values out of the agent's store: what the agent types into a page and the inputs it
gives a browser workflow are kept in ``ai.sqlite3`` as placeholders, never as the text.

The browser engine keeps typed values out of its cache and audit (TERX); the agent's own
store holds the same values in two more places: the arguments of its tool calls (in the
``tool_calls`` table and in the assistant messages that carry them) and the payload of a
proposal (a workflow run waiting for approval or queued in a plan). ``browser_type``'s ``text``
is stored as ``{{input}}`` when the call names its input (``[typed]`` otherwise), a workflow
run's ``inputs`` as ``{"name": "{{name}}"}``.

A proposal's real inputs are needed once more, when it is applied: ``AiStore`` keeps them in
memory by approval id until the approval is decided. After a restart they are gone; the replay
then refuses a value that is only its own placeholder (``input_missing``), so a stored
placeholder is never typed into a page.
"""

from __future__ import annotations

from typing import Any

from terax_jupyter.services.browser.ir import is_identifier

TYPED = "[typed]"
# The tools whose arguments carry typed text, and the argument that does.
TYPE_TOOLS = frozenset({"browser_type"})
WORKFLOW_RUN_TOOLS = frozenset({"browser_run_workflow", "browser_run_destructive_workflow"})


def placeholder(name: object) -> str:
    """``{{name}}`` for an input name; ``[typed]`` for anything else (it may be a value)."""
    return "{{" + name + "}}" if isinstance(name, str) and is_identifier(name) else TYPED


def placeholder_inputs(inputs: dict[Any, Any]) -> dict[str, str]:
    """Each input as its placeholder; a key that is no input name is not kept either."""
    stored: dict[str, str] = {}
    for index, name in enumerate(inputs):
        key = name if isinstance(name, str) and is_identifier(name) else f"{TYPED}{index}"
        stored[key] = placeholder(name)
    return stored


def stored_arguments(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments as they may be stored (a copy when anything is replaced)."""
    if not isinstance(arguments, dict):
        return arguments
    if tool in TYPE_TOOLS and "text" in arguments:
        return {**arguments, "text": placeholder(arguments.get("input"))}
    if tool in WORKFLOW_RUN_TOOLS and isinstance(arguments.get("inputs"), dict):
        return {**arguments, "inputs": placeholder_inputs(arguments["inputs"])}
    return arguments


def stored_call(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call's JSON (``ToolCall.to_json``) as it may be stored."""
    arguments = call.get("arguments")
    if not isinstance(arguments, dict):
        return call
    stored = stored_arguments(str(call.get("name", "")), arguments)
    return call if stored is arguments else {**call, "arguments": stored}


def stored_proposal(
    tool: str, proposal: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A proposal's JSON as it may be stored, and the typed inputs it held (None if none)."""
    payload = proposal.get("payload")
    if tool not in WORKFLOW_RUN_TOOLS or not isinstance(payload, dict):
        return proposal, None
    inputs = payload.get("inputs")
    if not isinstance(inputs, dict) or not inputs:
        return proposal, None
    stored = {**proposal, "payload": {**payload, "inputs": placeholder_inputs(inputs)}}
    return stored, dict(inputs)


def restored_proposal(proposal: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
    """The stored proposal with its real inputs back (in memory, for applying it)."""
    payload = proposal.get("payload")
    if not isinstance(payload, dict):
        return proposal
    return {**proposal, "payload": {**payload, "inputs": dict(inputs)}}
