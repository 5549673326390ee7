"""Saved workflows: a recorded flow kept under a name with its declared inputs, run again later.

Running one goes through the ``Replayer`` like any cached flow (same checks, same refusals);
the caller supplies the page and the scope it is working in. An approval is bound to what the
person saw (``approval_facts``): before an approved run, ``check_approved`` compares those facts
with the workflow as it is stored now and refuses on any difference. Callers without an
approval may pin the version and side effect they expect (``check_pins``). Replacing a
destructive workflow, or saving one under a lower side effect, needs an approval too
(``save_needs_approval``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from terax_jupyter.exceptions import Conflict, InvalidRequest, NotFound, ReplayRefused
from terax_jupyter.services.browser.ir import Navigate, declared_inputs
from terax_jupyter.services.browser.policy import SIDE_EFFECTS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from terax_jupyter.services.browser.ir import Recording
    from terax_jupyter.services.browser.policy import ReplayPolicy
    from terax_jupyter.services.browser.replay import Replayer, ReplayResult
    from terax_jupyter.services.browser.store import ReplayStore, SavedWorkflow
    from terax_jupyter.services.browser.types import ReplayPage

MAX_DESCRIPTION = 2000
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 _.\-]{0,78}[A-Za-z0-9_.\-])?")
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # a newline is allowed in descriptions


# What a side effect allows, lowest first: lowering it is a change that needs an approval.
SIDE_EFFECT_RANK = {effect: rank for rank, effect in enumerate(SIDE_EFFECTS)}
# The facts an approval binds and an approved run compares, with the refusal of each.
_BOUND = (
    ("scope_id", "scope_mismatch"),
    ("workflow_version", "version_mismatch"),
    ("side_effect", "side_effect_mismatch"),
    ("policy_fingerprint", "policy_mismatch"),
    ("command_digest", "digest_mismatch"),
)


def origin_of(url: str) -> str:
    """``scheme://host:port`` of ``url`` (what a workflow's scope is made of)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def approval_steps(recording: Recording) -> list[dict[str, Any]]:
    """The steps as an approval card shows them: the IR's own fields, so typed text is only
    ever its ``{{placeholder}}`` and a url has no query or fragment."""
    return [step.action.to_json() for step in recording.steps]


def describe_steps(steps: Sequence[Mapping[str, Any]]) -> str:
    """One numbered line per step, for the approval card and the model."""
    lines = []
    for number, step in enumerate(steps, 1):
        kind = step.get("kind")
        if kind == "navigate":
            lines.append(f"{number}. open {step.get('url')}")
        elif kind == "click":
            lines.append(f"{number}. click {step.get('role')} {step.get('name')!r}")
        elif kind == "type":
            lines.append(
                f"{number}. type {step.get('value')} into {step.get('role')} {step.get('name')!r}"
            )
        else:
            lines.append(f"{number}. {kind}")
    return "\n".join(lines)


def approval_facts(workflow: SavedWorkflow) -> dict[str, Any]:
    """What an approval of running ``workflow`` is bound to (besides the start page)."""
    first = workflow.recording.steps[0].action if workflow.recording.steps else None
    return {
        "name": workflow.name,
        "scope_id": workflow.policy.scope_id,
        "start_url": first.url if isinstance(first, Navigate) else None,
        "workflow_version": workflow.policy.workflow_version,
        "side_effect": workflow.policy.side_effect,
        "policy_fingerprint": workflow.policy_fingerprint,
        "command_digest": workflow.command_digest,
        "steps": approval_steps(workflow.recording),
    }


def check_approved(approved: Mapping[str, Any], workflow: SavedWorkflow) -> None:
    """Refuse (``ReplayRefused``) unless ``workflow`` is still exactly what was approved."""
    current = approval_facts(workflow)
    if approved.get("name") != current["name"]:
        raise ReplayRefused("The approval was given for another workflow.", reason="token_mismatch")
    for key, reason in _BOUND:
        if approved.get(key) != current[key]:
            raise ReplayRefused(
                f"Workflow {workflow.name!r} changed after the approval was asked for (its "
                f"{key.replace('_', ' ')} was {approved.get(key)!r} and is {current[key]!r} "
                "now); nothing was run. Ask for approval of the workflow as it is now.",
                reason=reason,
            )
    if approved.get("start_url") != current["start_url"]:
        raise ReplayRefused(
            f"Workflow {workflow.name!r} now starts at another page than the one approved; "
            "nothing was run.",
            reason="scope_mismatch",
        )


def check_pins(
    workflow: SavedWorkflow, *, workflow_version: object = None, side_effect: object = None
) -> None:
    """Refuse unless ``workflow`` is at the version and side effect the caller pinned."""
    if workflow_version is not None:
        if (
            not isinstance(workflow_version, int)
            or isinstance(workflow_version, bool)
            or workflow_version < 1
        ):
            raise InvalidRequest(
                "'workflow_version' is an integer of 1 or more.", reason="invalid_parameter"
            )
        if workflow_version != workflow.policy.workflow_version:
            raise ReplayRefused(
                f"Workflow {workflow.name!r} is at version {workflow.policy.workflow_version}, "
                f"not the pinned {workflow_version}; nothing was run.",
                reason="version_mismatch",
            )
    if side_effect is not None:
        if side_effect not in SIDE_EFFECTS:
            raise InvalidRequest(
                f"'side_effect' is one of {', '.join(SIDE_EFFECTS)}.", reason="invalid_parameter"
            )
        if side_effect != workflow.policy.side_effect:
            raise ReplayRefused(
                f"Workflow {workflow.name!r} is {workflow.policy.side_effect}, not the pinned "
                f"{side_effect}; nothing was run.",
                reason="side_effect_mismatch",
            )


def save_needs_approval(previous: SavedWorkflow | None, side_effect: str) -> str | None:
    """Why saving over ``previous`` as ``side_effect`` needs the user's approval, or None."""
    if previous is None:
        return None
    old = previous.policy.side_effect
    if old == "destructive":
        return f"{previous.name!r} is destructive: replacing it"
    if SIDE_EFFECT_RANK.get(side_effect, 0) < SIDE_EFFECT_RANK[old]:
        return f"{previous.name!r} is {old}: saving it as {side_effect}"
    return None


def check_name(name: object) -> str:
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise InvalidRequest(
            "A workflow name is 1 to 80 letters, digits, spaces, '_', '.' or '-', starting with "
            "a letter or digit and not ending with a space.",
            reason="invalid_workflow_name",
        )
    return name


class WorkflowManager:
    """Save, list, get, delete and run named workflows.

    ``save``/``list``/``get``/``delete`` block on SQLite (call them from a worker thread);
    ``run`` is a coroutine and moves its own store access off the event loop.
    """

    def __init__(self, store: ReplayStore, replayer: Replayer) -> None:
        self._store = store
        self._replayer = replayer

    def save(
        self,
        name: str,
        recording: Recording,
        policy: ReplayPolicy,
        *,
        inputs: Sequence[str],
        description: str = "",
        overwrite: bool = False,
        now: float | None = None,
    ) -> SavedWorkflow:
        """Save ``recording`` as ``name``; ``inputs`` must be exactly its placeholders. A
        non-cacheable recording is refused (``non_cacheable``); replacing a workflow needs
        ``overwrite`` and a higher ``workflow_version``."""
        check_name(name)
        recording.require_cacheable()
        names = declared_inputs(recording, list(inputs))
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
            raise InvalidRequest(
                f"A description is text of at most {MAX_DESCRIPTION} characters.",
                reason="invalid_description",
            )
        if _CONTROL.search(description):
            raise InvalidRequest(
                "A description must not contain control characters.", reason="invalid_description"
            )
        if overwrite:
            try:
                existing = self._store.get_workflow(name)
            except NotFound:
                existing = None
            if existing is not None and policy.workflow_version <= existing.policy.workflow_version:
                raise Conflict(
                    f"Workflow {name!r} is at version {existing.policy.workflow_version}; a "
                    "replacement needs a higher workflow_version.",
                    reason="version_not_newer",
                )
        return self._store.save_workflow(
            name,
            recording,
            policy,
            inputs=names,
            description=description,
            overwrite=overwrite,
            now=now,
        )

    def list(self) -> list[SavedWorkflow]:
        return self._store.list_workflows()

    def get(self, name: str) -> SavedWorkflow:
        return self._store.get_workflow(check_name(name))

    def delete(self, name: str) -> None:
        self._store.delete_workflow(check_name(name))

    async def run(
        self,
        name: str,
        page: ReplayPage,
        inputs: Mapping[str, str],
        *,
        task: str,
        scope_id: str,
        workflow_version: int | None = None,
        verifier_token: str | None = None,
        now: float | None = None,
    ) -> ReplayResult:
        """Replay the workflow on ``page`` with ``inputs``, in the caller's ``scope_id`` (and,
        if given, only at ``workflow_version``)."""
        workflow = await asyncio.to_thread(self.get, name)
        expected = dataclasses.replace(
            workflow.policy,
            scope_id=scope_id,
            workflow_version=(
                workflow.policy.workflow_version if workflow_version is None else workflow_version
            ),
        )
        return await self._replayer.replay(
            workflow,
            page,
            inputs,
            task=task,
            policy=expected,
            verifier_token=verifier_token,
            now=now,
        )
