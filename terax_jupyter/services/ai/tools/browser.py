"""The agent's browser tools: check a web app it builds in a headless browser (loopback only),
save what it did as a workflow, and replay workflows with no model calls.

The agent reads accessibility snapshots and acts on elements by their ``ref``; every action is
recorded as role + name (see ``services/browser/tab.py``). Typed text given an ``input`` name is
recorded as ``{{input}}`` so the flow can be replayed with other values; typed literals, raw
keys and the like make the flow impossible to save. Replays are refused rather than guessed.
Running a destructive workflow needs an approval bound to what the user saw (no rule covers
it), and so does replacing a destructive workflow or lowering a workflow's side effect; in plan
mode a mutating workflow's replay is queued like any other change.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from terax_jupyter.exceptions import InvalidRequest, Unavailable
from terax_jupyter.services.ai.tools.base import Proposal, Tool, ToolResult
from terax_jupyter.services.ai.tools.files import bool_arg, for_model, int_arg, string_arg
from terax_jupyter.services.browser.arguments import described, element_target, wait_condition
from terax_jupyter.services.browser.policy import read_only_replay
from terax_jupyter.services.browser.workflows import (
    approval_facts,
    describe_steps,
)

if TYPE_CHECKING:
    from terax_jupyter.services.ai.tools.base import ToolContext
    from terax_jupyter.services.browser.manager import BrowserManager
    from terax_jupyter.services.browser.tab import RecordingTab
    from terax_jupyter.services.browser.types import Snapshot

SNAPSHOT_BYTES = 24 * 1024
CONDITION_KINDS = ("url_contains", "title_contains", "text_contains", "selector_exists")
_CONDITIONS = {
    "type": "array",
    "maxItems": 20,
    "items": {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": list(CONDITION_KINDS)},
            "value": {"type": "string", "minLength": 1, "maxLength": 500},
        },
        "required": ["kind", "value"],
        "additionalProperties": False,
    },
}
_INPUTS = {
    "type": "object",
    "description": "Values of the workflow's declared inputs, by name.",
    "additionalProperties": {"type": "string", "maxLength": 10000},
}


def _browser(context: ToolContext) -> BrowserManager:
    if context.browser is None:
        raise Unavailable(
            "The headless browser is not available on this server.", reason="no_browser"
        )
    return context.browser


def _page_text(context: ToolContext, tab: RecordingTab, snapshot: Snapshot, done: str) -> str:
    lines = [done] if done else []
    blocked = tab.page.blocked
    if blocked:
        lines.append(f"Blocked (not loopback): {len(blocked)} request(s), e.g. {blocked[-1]}")
    if not tab.recording.cacheable:
        lines.append("This flow can no longer be saved as a workflow (see browser_save_workflow).")
    lines.append(snapshot.render())
    return for_model(context, "\n".join(lines), max_bytes=SNAPSHOT_BYTES)


def _result(context: ToolContext, tab: RecordingTab, snapshot: Snapshot, done: str) -> ToolResult:
    return ToolResult(
        _page_text(context, tab, snapshot, done),
        data={"url": snapshot.url, "title": snapshot.title, "nodes": len(snapshot.nodes)},
    )


class BrowserOpen(Tool):
    name: ClassVar[str] = "browser_open"
    description: ClassVar[str] = (
        "Open a page of a local web app (http(s) on localhost / 127.0.0.1 only) in your "
        "headless browser tab and get its accessibility snapshot (role, name, ref per "
        "element). Starts a new recorded flow."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"url": {"type": "string", "minLength": 1, "maxLength": 2000}},
        "required": ["url"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        url = string_arg(arguments, "url")
        async with _browser(context).using(context.session_id) as tab:
            tab.restart_recording()
            snapshot = await tab.open(url)
            return _result(context, tab, snapshot, f"Opened {snapshot.url}")


class BrowserSnapshot(Tool):
    name: ClassVar[str] = "browser_snapshot"
    description: ClassVar[str] = "The current page's accessibility snapshot (refs change with it)."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        async with _browser(context).using(context.session_id) as tab:
            snapshot = await tab.snapshot()
            return _result(context, tab, snapshot, "")


_TARGET: dict[str, Any] = {
    "ref": {"type": "string", "pattern": "^e[0-9]{1,6}$", "description": "From the snapshot."},
    "role": {"type": "string", "minLength": 1, "maxLength": 60},
    "name": {"type": "string", "maxLength": 400, "description": "The exact accessible name."},
}


class BrowserClick(Tool):
    name: ClassVar[str] = "browser_click"
    description: ClassVar[str] = (
        "Click an element, by its ref from the latest snapshot or by its exact role and name; "
        "returns the new snapshot."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": _TARGET,
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        target = element_target(arguments, reason="invalid_argument")
        async with _browser(context).using(context.session_id) as tab:
            snapshot = await tab.click(target.pop("ref", None), **target)
            return _result(context, tab, snapshot, f"Clicked {described(arguments)}.")


class BrowserType(Tool):
    name: ClassVar[str] = "browser_type"
    description: ClassVar[str] = (
        "Type text into a field, by ref or exact role and name (replacing its value). Name "
        "the value with 'input' "
        "(e.g. username, query) so the flow can be saved and replayed with other values; "
        "without it the flow cannot be saved. Never type real passwords or keys."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            **_TARGET,
            "text": {"type": "string", "maxLength": 10000},
            "input": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]{0,63}$"},
        },
        "required": ["text"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        target = element_target(arguments, reason="invalid_argument")
        text = string_arg(arguments, "text", empty=True)
        input_name = arguments.get("input")
        async with _browser(context).using(context.session_id) as tab:
            snapshot = await tab.type(
                target.pop("ref", None), text, input_name=input_name, **target
            )
            return _result(context, tab, snapshot, f"Typed into {described(arguments)}.")


class BrowserWait(Tool):
    name: ClassVar[str] = "browser_wait"
    description: ClassVar[str] = (
        "Wait until the page's url, title or text contains something, or a CSS selector "
        "matches; returns the snapshot then."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "url_contains": {"type": "string", "minLength": 1, "maxLength": 500},
            "title_contains": {"type": "string", "minLength": 1, "maxLength": 500},
            "text_contains": {"type": "string", "minLength": 1, "maxLength": 500},
            "selector": {"type": "string", "minLength": 1, "maxLength": 500},
            "timeout": {"type": "integer", "minimum": 1, "maximum": 60},
        },
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        condition, timeout = wait_condition(arguments, reason="invalid_argument")
        async with _browser(context).using(context.session_id) as tab:
            snapshot = await tab.wait(**condition, timeout=timeout)
            return _result(context, tab, snapshot, "The condition holds.")


class BrowserScreenshot(Tool):
    name: ClassVar[str] = "browser_screenshot"
    description: ClassVar[str] = (
        "Take a screenshot of your browser tab; the user sees it in the chat. Use it to show "
        "what a page looks like; read the snapshot to know what is on it."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        shot = await _browser(context).capture(context.session_id)
        return ToolResult(
            f"Screenshot of {shot['url']} ({shot['title']}), {shot['bytes'] // 1024} KiB, "
            "shown to the user.",
            data={"screenshot": shot["id"], "url": shot["url"]},
        )


class BrowserPressKey(Tool):
    name: ClassVar[str] = "browser_press_key"
    description: ClassVar[str] = (
        "Press a key or combination ('Enter', 'Escape', 'Shift+Tab') in the page. A raw key "
        "makes the flow impossible to save as a workflow; prefer clicking buttons."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"key": {"type": "string", "minLength": 1, "maxLength": 40}},
        "required": ["key"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        key = string_arg(arguments, "key")
        async with _browser(context).using(context.session_id) as tab:
            snapshot = await tab.press_key(key)
            return _result(context, tab, snapshot, f"Pressed {key}.")


class BrowserSaveWorkflow(Tool):
    name: ClassVar[str] = "browser_save_workflow"
    description: ClassVar[str] = (
        "Save the flow recorded since the last browser_open as a named workflow that can be "
        "replayed later with other input values and no model calls. side_effect: read_only "
        "(looks only), mutating (changes state, e.g. signs in), destructive (deletes or "
        "cannot be undone: replays need the user's approval). Add postconditions that prove "
        "the flow worked (e.g. title_contains). Replacing a destructive workflow, or saving "
        "a workflow under a lower side effect, asks the user first."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_.-]{0,63}$"},
            "side_effect": {"type": "string", "enum": ["read_only", "mutating", "destructive"]},
            "description": {"type": "string", "maxLength": 500},
            "preconditions": _CONDITIONS,
            "postconditions": _CONDITIONS,
            "ttl_days": {"type": "integer", "minimum": 1, "maximum": 90},
            "overwrite": {"type": "boolean"},
        },
        "required": ["name", "side_effect"],
        "additionalProperties": False,
    }

    async def proposes(self, arguments: dict[str, Any], context: ToolContext) -> bool:
        context.security.paths.refuse_writes("the agent cannot save workflows")
        return await _save_approval(arguments, context) is not None

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        context.security.paths.refuse_writes("the agent cannot save workflows")
        return await self._save(arguments, context, None)

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        approval = await _save_approval(arguments, context)
        if approval is None:  # nothing to approve any more: save as usual when approved
            raise InvalidRequest(
                "This save needs no approval; call browser_save_workflow again.",
                reason="invalid_argument",
            )
        steps = approval["steps"]
        shown = {
            "scope": approval["scope_id"],
            "origin": approval["scope_id"],
            "version": approval["workflow_version"],
            "previous_version": approval["previous_version"],
            "side_effect": approval["side_effect"],
            "previous_side_effect": approval["previous_side_effect"],
            "steps": steps,
        }
        return Proposal(
            tool=self.name,
            kind="workflow",
            summary=(
                f"Save workflow {approval['name']!r} as {approval['side_effect']} version "
                f"{approval['workflow_version']} (replacing {approval['previous_side_effect']} "
                f"version {approval['previous_version']})"
            ),
            payload={"arguments": dict(arguments), "approved": approval, "shown": shown},
            command=for_model(
                context,
                f"Scope {approval['scope_id']}; {approval['why']} needs your approval.\n"
                + describe_steps(steps),
            ),
        )

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        payload = proposal.payload
        return await self._save(payload["arguments"], context, payload["approved"])

    @staticmethod
    async def _save(
        arguments: dict[str, Any], context: ToolContext, approved: dict[str, Any] | None
    ) -> ToolResult:
        browser = _browser(context)
        saved = await browser.save_workflow(
            context.session_id,
            string_arg(arguments, "name"),
            **_save_options(arguments),
            description=string_arg(arguments, "description", default="", empty=True),
            approved=approved,
        )
        await asyncio.to_thread(
            context.security.audit.record,
            "browser.workflow.save",
            user=context.user,
            session=context.session_id,
            name=saved.name,
            workflow_version=saved.policy.workflow_version,
            side_effect=saved.policy.side_effect,
            steps=len(saved.recording.steps),
            approved=approved is not None,
        )
        inputs = ", ".join(saved.inputs) or "none"
        return ToolResult(
            f"Saved workflow {saved.name!r} (version {saved.policy.workflow_version}, "
            f"{len(saved.recording.steps)} steps, {saved.policy.side_effect}, inputs: {inputs}).",
            data={"workflow": saved.name, "inputs": list(saved.inputs)},
        )


def _save_options(arguments: dict[str, Any]) -> dict[str, Any]:
    days = int_arg(arguments, "ttl_days", default=30, minimum=1, maximum=90) or 30
    return {
        "side_effect": string_arg(arguments, "side_effect"),
        "ttl_seconds": days * 24 * 3600,
        "preconditions": arguments.get("preconditions"),
        "postconditions": arguments.get("postconditions"),
        "overwrite": bool_arg(arguments, "overwrite", default=False),
    }


async def _save_approval(arguments: dict[str, Any], context: ToolContext) -> dict[str, Any] | None:
    return await _browser(context).propose_save(
        context.session_id, string_arg(arguments, "name"), **_save_options(arguments)
    )


def _run_arguments(arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
    name = string_arg(arguments, "name")
    inputs = arguments.get("inputs") or {}
    if not isinstance(inputs, dict) or not all(isinstance(v, str) for v in inputs.values()):
        raise InvalidRequest("'inputs' maps input names to text.", reason="invalid_argument")
    return name, inputs


def _replayed(result: Any) -> ToolResult:
    return ToolResult(
        f"Replayed {result.workflow!r}: {result.steps_replayed} steps in "
        f"{result.timings_ms['total']:.0f} ms, postconditions hold, no model calls.",
        data=result.to_json(),
    )


_RUN_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_.-]{0,63}$"},
        "inputs": _INPUTS,
    },
    "required": ["name"],
    "additionalProperties": False,
}


def _shown(facts: dict[str, Any], origin: str) -> dict[str, Any]:
    """What the approval card shows of a replay (no typed values: steps have placeholders)."""
    return {
        "scope": facts["scope_id"],
        "origin": origin,
        "version": facts["workflow_version"],
        "side_effect": facts["side_effect"],
        "steps": facts["steps"],
    }


class BrowserRunWorkflow(Tool):
    name: ClassVar[str] = "browser_run_workflow"
    description: ClassVar[str] = (
        "Replay a saved read_only or mutating workflow in a fresh browser with the given "
        "inputs, without model calls. It is refused (with the reason) when the page changed, "
        "a target is missing or ambiguous, or a condition fails: then do the flow by hand "
        "and save it again. Destructive workflows: browser_run_destructive_workflow."
    )
    parameters: ClassVar[dict[str, Any]] = _RUN_PARAMETERS

    async def proposes(self, arguments: dict[str, Any], context: ToolContext) -> bool:
        # In plan mode a replay that changes state is queued like any other change.
        if context.in_plan_mode is None or not await context.in_plan_mode():
            return False
        workflow = await _browser(context).get_workflow(string_arg(arguments, "name"))
        return workflow.policy.side_effect == "mutating"

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        name, inputs = _run_arguments(arguments)
        pinned = None
        if context.security.paths.read_only:
            pinned = await read_only_replay(_browser(context), name, None)
        result = await _browser(context).run_workflow(
            name, inputs, task=context.session_id, user=context.user, side_effect=pinned
        )
        return _replayed(result)

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        name, inputs = _run_arguments(arguments)
        workflow = await _browser(context).get_workflow(name)
        policy = workflow.policy
        facts = approval_facts(workflow)
        steps = facts["steps"]
        return Proposal(
            tool=self.name,
            kind="replay",
            summary=(
                f"Replay {policy.side_effect} workflow {name!r} version "
                f"{policy.workflow_version} ({len(steps)} steps)"
            ),
            payload={
                "name": name,
                "inputs": inputs,
                # The run refuses if the workflow changed before the plan is applied.
                "workflow_version": policy.workflow_version,
                "side_effect": policy.side_effect,
                "shown": _shown(facts, policy.scope_id),
            },
            command=for_model(
                context,
                f"Scope {policy.scope_id}, version {policy.workflow_version}:\n"
                + describe_steps(steps),
            ),
        )

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        payload = proposal.payload
        result = await _browser(context).run_workflow(
            payload["name"],
            payload["inputs"],
            task=context.session_id,
            workflow_version=payload["workflow_version"],
            side_effect=payload["side_effect"],
            user=context.user,
        )
        return _replayed(result)


class BrowserRunDestructiveWorkflow(Tool):
    name: ClassVar[str] = "browser_run_destructive_workflow"
    description: ClassVar[str] = (
        "Replay a saved destructive workflow; the user approves it first. Same refusals as "
        "browser_run_workflow."
    )
    parameters: ClassVar[dict[str, Any]] = _RUN_PARAMETERS
    mutating: ClassVar[bool] = True

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        name, inputs = _run_arguments(arguments)
        # Open the first page and issue the verifier token now, bound to the workflow as it
        # is stored and to that page: the approval is for exactly this, and a run after
        # anything changed is refused.
        approval = await _browser(context).propose_run(
            name, task=context.session_id, user=context.user
        )
        steps = approval["steps"]
        names = ", ".join(sorted(inputs)) or "no inputs"
        return Proposal(
            tool=self.name,
            kind="replay",
            summary=(
                f"Replay destructive workflow {name!r} version {approval['workflow_version']} "
                f"on {approval['origin']} ({len(steps)} steps, {names})"
            ),
            payload={
                "name": name,
                "inputs": inputs,
                "approval": approval,
                "shown": {
                    **_shown(approval, approval["origin"]),
                    "url": approval["url"],
                    "title": approval["title"],
                },
            },
            command=for_model(
                context,
                f"On {approval['url']} ({approval['title']}), scope {approval['scope_id']}, "
                f"version {approval['workflow_version']}:\n" + describe_steps(steps),
            ),
        )

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        payload = proposal.payload
        result = await _browser(context).run_workflow(
            payload["name"],
            payload["inputs"],
            task=context.session_id,
            approval=payload["approval"],
            user=context.user,
        )
        return _replayed(result)
