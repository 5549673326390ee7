"""Plan mode's second half: review the queued changes of a session and apply or discard them.

Items apply in the order the agent queued them, each as approved in full, in part (hunks) or
denied. The first item that fails stops the batch (later items may depend on it); they stay
queued. The outcome joins the conversation as a note, so the agent knows what happened.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import Conflict, InvalidRequest, TeraxError
from terax_jupyter.services.ai.approvals import parse_decision
from terax_jupyter.services.ai.providers.base import Message
from terax_jupyter.services.ai.tools.base import Proposal, ToolContext

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from terax_jupyter.services.ai.runtime import AgentRuntime
    from terax_jupyter.services.ai.wire import PlanOutcome


class PlanRunner:
    def __init__(
        self,
        runtime: AgentRuntime,
        plan_of: Callable[[str], Awaitable[list[dict[str, Any]]]],
    ) -> None:
        self.runtime = runtime
        self.plan_of = plan_of  # the session's queued items (the manager's, checks included)

    async def apply(self, session_id: str, body: Any, *, user: str | None) -> dict[str, Any]:
        runtime = self.runtime
        store, worker = runtime.store, runtime.worker
        items = await self.plan_of(session_id)
        if not items:
            raise Conflict("This session has no queued plan.", reason="no_plan")
        decisions = _decisions_of(body, {item["id"] for item in items})
        parsed = {
            item["id"]: parse_decision(
                decisions.get(item["id"], {"decision": "approve"}), item["proposal"]
            )
            for item in items
        }
        outcomes: list[PlanOutcome] = []
        stopped = False
        for item in items:
            decision = parsed[item["id"]]
            outcome = functools.partial(_outcome, item)
            if decision.status == "denied":
                await worker.call(
                    store.decide_approval,
                    item["id"],
                    status="denied",
                    decision=decision.to_json(),
                    user=user,
                )
                outcomes.append(outcome("denied", "Skipped (denied).", is_error=False))
                continue
            tool = runtime.toolbox.get(item["tool"])
            context = await self._context(session_id, user)
            try:
                if tool is None:
                    raise InvalidRequest(f"Unknown tool {item['tool']!r}.", reason="invalid_plan")
                result = await runtime.apply_decided(
                    tool, Proposal.from_json(item["proposal"]), context, decision
                )
            except TeraxError as failure:
                message = runtime.security.redactor.redact(failure.message)
                failed = outcome("failed", message, is_error=True)
                failed["reason"] = failure.reason
                outcomes.append(failed)
                stopped = True
                break
            await worker.call(
                store.decide_approval,
                item["id"],
                status=decision.status,
                decision=decision.to_json(),
                user=user,
            )
            content = runtime.security.redactor.redact(result.content)
            done = outcome(decision.status, content, is_error=result.is_error)
            done["data"] = result.data
            outcomes.append(done)
        runtime.security.audit.record(
            "ai.plan.apply",
            user=user,
            session=session_id,
            items=[{k: o[k] for k in ("tool", "summary", "status")} for o in outcomes],
        )
        subjects = {
            item["id"]: runtime.toolbox.audit_subject(item["tool"], item["proposal"])
            for item in items
        }
        runtime.agent_audit.record(
            "plan.applied",
            user=user,
            session=session_id,
            items=[
                {
                    "approval": o["approval_id"],
                    "tool": o["tool"],
                    "decision": o["status"],
                    "subject": subjects.get(o["approval_id"], {}),
                }
                for o in outcomes
            ],
            stopped=stopped,
        )
        await self._note(session_id, "The user reviewed the plan. " + _describe(outcomes, stopped))
        runtime.publish(
            session_id, {"type": "plan_applied", "outcomes": outcomes, "stopped": stopped}
        )
        remaining = await self.plan_of(session_id)
        return {"outcomes": outcomes, "stopped": stopped, "remaining": remaining}

    async def discard(self, session_id: str, *, user: str | None) -> dict[str, Any]:
        runtime = self.runtime
        items = await self.plan_of(session_id)
        if not items:
            raise Conflict("This session has no queued plan.", reason="no_plan")
        for item in items:
            await runtime.worker.call(
                runtime.store.decide_approval,
                item["id"],
                status="discarded",
                decision={},
                user=user,
            )
        runtime.security.audit.record(
            "ai.plan.discard", user=user, session=session_id, items=len(items)
        )
        runtime.agent_audit.record(
            "plan.discarded", user=user, session=session_id, items=len(items)
        )
        await self._note(
            session_id,
            f"The user discarded the plan ({len(items)} items); nothing of it was applied.",
        )
        runtime.publish(session_id, {"type": "plan_discarded", "items": len(items)})
        return {"discarded": len(items)}

    async def _context(self, session_id: str, user: str | None) -> ToolContext:
        runtime = self.runtime
        return await runtime.tool_context(
            session_id, user, functools.partial(runtime.publish, session_id)
        )

    async def _note(self, session_id: str, text: str) -> None:
        await self.runtime.worker.call(
            self.runtime.store.add_message, session_id, Message("user", f"[{text}]")
        )


def _decisions_of(body: Any, known: set[str]) -> dict[str, Any]:
    if body is None:
        return {}
    if not isinstance(body, dict) or set(body) - {"decisions"}:
        raise InvalidRequest(
            "The body is {'decisions'?: {approval id: decision}}.", reason="invalid_parameter"
        )
    decisions = body.get("decisions") or {}
    if not isinstance(decisions, dict):
        raise InvalidRequest(
            "'decisions' maps approval ids to decisions.", reason="invalid_parameter"
        )
    unknown = set(decisions) - known
    if unknown:
        raise InvalidRequest(
            f"Not in this plan: {', '.join(sorted(unknown))}.", reason="invalid_parameter"
        )
    return decisions


def _describe(outcomes: list[PlanOutcome], stopped: bool) -> str:
    lines = [
        f"{n}. {o['summary']}: {o['status']}. {o['result'][:500]}"
        for n, o in enumerate(outcomes, 1)
    ]
    if stopped:
        lines.append("Applying stopped at the failed item; the items after it are still queued.")
    return "Outcome:\n" + "\n".join(lines)


def _outcome(item: dict[str, Any], status: str, result: str, *, is_error: bool) -> PlanOutcome:
    return {
        "approval_id": item["id"],
        "tool": item["tool"],
        "summary": item["proposal"]["summary"],
        "status": status,
        "result": result,
        "is_error": is_error,
    }
