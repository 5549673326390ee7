"""One agent run: stream the model, store as it streams, run tools through approval, repeat.

A step is one model call and the tool calls it asked for. Streamed text is queued to the
store before it is published, so what a client saw survives a crash. A run ends when the
model answers without tool calls, at the step limit, on cancel, or on a provider error; in
every case the run's row says which.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import Conflict, ProviderError, RateLimited, TeraxError, TooLarge
from terax_jupyter.security.rules import matching_rule
from terax_jupyter.services.ai.agent_audit import arguments_digest
from terax_jupyter.services.ai.approvals import Decision
from terax_jupyter.services.ai.compaction import compact
from terax_jupyter.services.ai.prompts import load_memory, system_prompt
from terax_jupyter.services.ai.providers.base import (
    ChatRequest,
    Finished,
    Message,
    ReasoningDelta,
    TextDelta,
    ToolCallReady,
    ToolCallStarted,
    Usage,
)
from terax_jupyter.services.ai.store import sendable
from terax_jupyter.services.ai.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.services.ai.agents import AgentDefinition
    from terax_jupyter.services.ai.providers.base import Provider, ToolCall
    from terax_jupyter.services.ai.providers.registry import ModelInfo
    from terax_jupyter.services.ai.runtime import AgentRuntime
    from terax_jupyter.services.ai.store import AiStore
    from terax_jupyter.services.ai.tools.base import Proposal, Tool
    from terax_jupyter.services.ai.wire import (
        AiEvent,
        CutDetail,
        ErrorDetail,
        Finish,
        SubAgentMark,
        ToolEvent,
    )

log = logging.getLogger(__name__)

PREVIEW_CHARS = 4000
NO_RESULT = "[No result: the run was cancelled or interrupted before this call finished.]"
# Finishes of an answer the model did not end itself: the output-token limit or the
# provider's content filter stopped it. The panel shows a note for each.
CUT_FINISHES = ("length", "content_filter")


@dataclass(frozen=True)
class RunSpec:
    session_id: str
    run_id: str
    agent: AgentDefinition
    provider_id: str
    model: ModelInfo
    plan_mode: bool
    max_steps: int
    user: str | None
    # Output tokens per step (None: the configured default for this model) and the most a
    # run of this model may ask for, which "continue with a higher limit" offers up to.
    max_output_tokens: int | None = None
    output_ceiling: int | None = None
    steps_by_policy: bool = False  # max_steps is the administrator's agent_steps_per_run

    @property
    def output_limit(self) -> int:
        if self.max_output_tokens is not None:
            return self.max_output_tokens
        return self.model.max_output_tokens

    def higher_limit(self) -> int | None:
        """The limit to offer after the output limit cut an answer (twice this one, up to
        the ceiling), or None when there is none higher."""
        ceiling = self.output_ceiling or self.model.max_output_tokens
        higher = min(self.output_limit * 2, ceiling)
        return higher if higher > self.output_limit else None


def repaired(history: list[Message]) -> list[Message]:
    """The conversation with a result for every tool call (a cancelled or interrupted run
    can leave calls unanswered, which no provider accepts)."""
    result: list[Message] = []
    index = 0
    while index < len(history):
        message = history[index]
        result.append(message)
        index += 1
        if message.role != "assistant" or not message.tool_calls:
            continue
        answered = set()
        while index < len(history) and history[index].role == "tool":
            answered.add(history[index].tool_call_id)
            result.append(history[index])
            index += 1
        for call in message.tool_calls:
            if call.id not in answered:
                result.append(
                    Message("tool", NO_RESULT, tool_call_id=call.id, name=call.name, is_error=True)
                )
    return result


class AgentRun:
    """A run in progress; ``task`` is the asyncio task executing it."""

    def __init__(self, runtime: AgentRuntime, spec: RunSpec) -> None:
        self.runtime = runtime
        self.spec = spec
        self.steps = 0
        self.task: asyncio.Task[None] | None = None
        self.cut: CutDetail | None = None  # how the output limit ended the run
        self.started = time.time()
        # How each tool call was decided, by call id, for the administrator's audit log:
        # not_gated, rule, admin_rule, approved, partially_approved, denied, queued, refused.
        self.decisions: dict[str, str] = {}

    # -- events ---------------------------------------------------------------------------

    def emit(self, event: AiEvent, *, write: Callable[[], object] | None = None) -> None:
        """Publish ``event`` of this run once ``write`` is done (``AgentRuntime.publish``)."""
        self.runtime.publish(self.spec.session_id, event, run_id=self.spec.run_id, write=write)

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.spec.run_id,
            "agent": self.spec.agent.name,
            "provider": self.spec.provider_id,
            "model": self.spec.model.id,
            "plan_mode": self.spec.plan_mode,
            "max_output_tokens": self.spec.output_limit,
            "steps": self.steps,
            "started_at": self.started,
        }

    # -- the run --------------------------------------------------------------------------

    async def execute(self, prompt: str, *, direct: ToolCall | None = None) -> None:
        """The run: the model's steps for ``prompt``; or, with ``direct``, that one tool call
        made for the user without asking any model (``/replay``)."""
        runtime, spec = self.runtime, self.spec
        status, reason = "finished", "error"
        error: ErrorDetail | None = None
        provider: Provider | None = None
        self.emit({"type": "run_started", "run": self.describe(), "prompt": prompt})
        runtime.agent_audit.record(
            "run.started",
            user=spec.user,
            session=spec.session_id,
            run=spec.run_id,
            agent=spec.agent.name,
            provider=spec.provider_id,
            model=spec.model.id,
            plan_mode=spec.plan_mode,
            max_steps=spec.max_steps,
            prompt_digest=arguments_digest(prompt),
            prompt_chars=len(prompt),
            replay=direct is not None,
        )
        try:
            user_message = Message("user", prompt)
            if direct is not None:
                runtime.worker.submit(
                    runtime.store.add_message, spec.session_id, user_message, run_id=spec.run_id
                )
                reason = await self._direct(direct)
                return
            # The conversation, the key and the project memory are fetched side by side;
            # the prompt is stored after the conversation was read (one writer, in order).
            stored, model_provider, memory = await asyncio.gather(
                runtime.worker.call(runtime.store.conversation, spec.session_id),
                runtime.provider(spec.provider_id),
                load_memory(runtime.files, cap=runtime.settings.memory_max_bytes),
            )
            provider = model_provider
            runtime.worker.submit(
                runtime.store.add_message, spec.session_id, user_message, run_id=spec.run_id
            )
            history = [*repaired(stored), user_message]
            system = system_prompt(
                spec.agent,
                workspace=runtime.settings.workspace_name,
                memory=memory,
                plan_mode=spec.plan_mode,
            )
            reason = await self.loop(
                model_provider, system, history, spec.agent, max_steps=spec.max_steps
            )
        except asyncio.CancelledError:
            status = reason = "cancelled"
        except TooLarge as failure:
            if failure.reason != "policy_limit":
                status, error = "failed", self._error_payload(failure)
                self.emit({"type": "error", **error})
            else:
                # The administrator's limit stopped the run between steps: it ends, with the
                # limit named (an event the panel shows, and the run's stored error).
                error = self._error_payload(failure)
                reason = "policy_limit"
                self.emit({"type": "error", **error})
        except TeraxError as failure:
            status, error = "failed", self._error_payload(failure)
            self.emit({"type": "error", **error})
        except Exception:
            log.exception("AI run %s failed", spec.run_id)
            status = "failed"
            error = {
                "message": "The run failed unexpectedly; see the server log.",
                "reason": "internal_error",
            }
            self.emit({"type": "error", **error})
        finally:
            if provider is not None:
                await provider.aclose()
            # The session is free before anyone hears that the run finished: a client that
            # acts on "finish" (a new prompt, applying the plan) must not meet "run_active".
            runtime.run_ended(self)
            runtime.agent_audit.record(
                "run.finished",
                user=spec.user,
                session=spec.session_id,
                run=spec.run_id,
                status=status,
                reason=reason,
                steps=self.steps,
                error=error,
                seconds=round(time.time() - self.started, 3),
            )
            finish: Finish = {"type": "finish", "reason": reason, "steps": self.steps}
            if self.cut is not None:
                finish = {**finish, **self.cut}
            self.emit(
                finish,
                write=functools.partial(
                    runtime.store.finish_run, spec.run_id, status, steps=self.steps, error=error
                ),
            )

    async def _direct(self, call: ToolCall) -> str:
        """One step with no model: ``call`` is stored as the assistant's turn (so the
        conversation stays one a provider accepts) and takes the path of any tool call."""
        runtime, spec = self.runtime, self.spec
        self.steps = 1
        self.emit({"type": "step", "index": 1})
        runtime.worker.submit(
            runtime.store.add_message,
            spec.session_id,
            Message("assistant", tool_calls=[call]),
            run_id=spec.run_id,
        )
        result = await self._call_tool(call, spec.agent, None)
        answer = Message(
            "tool", result.content, tool_call_id=call.id, name=call.name, is_error=result.is_error
        )
        runtime.worker.submit(
            runtime.store.add_message, spec.session_id, answer, run_id=spec.run_id, redacted=True
        )
        return "stop"

    def _error_payload(self, failure: TeraxError) -> ErrorDetail:
        payload: ErrorDetail = {
            "message": self.runtime.security.redactor.redact(failure.message),
            "reason": failure.reason,
        }
        if isinstance(failure, ProviderError):
            payload["provider"] = failure.provider or self.spec.provider_id
        if isinstance(failure, RateLimited) and failure.retry_after is not None:
            payload["retry_after"] = failure.retry_after
        return payload

    async def loop(
        self,
        provider: Provider,
        system: str,
        history: list[Message],
        agent: AgentDefinition,
        *,
        max_steps: int,
        parent_call_id: str | None = None,
    ) -> str:
        """Steps until the model stops asking for tools; returns the finish reason.
        ``parent_call_id`` marks a sub-agent's loop: nothing of it is stored but its events."""
        runtime, spec = self.runtime, self.spec
        persist = parent_call_id is None
        tools = runtime.toolbox.specs(agent)
        limit = spec.output_limit
        budget = int((spec.model.context_window - limit) * 0.9)
        marker = _marker(parent_call_id)
        for step in range(1, max_steps + 1):
            if step > 1 and runtime.governance.daily_limits:
                # The day's tokens or cost may have reached the administrator's limit in the
                # steps before (or in another run): stop before asking the model again.
                await runtime.worker.call(
                    runtime.governance.check_daily, runtime.store, runtime.models
                )
            if persist:
                self.steps = step
            self.emit({"type": "step", "index": step, **marker})
            outgoing, report = compact(
                [Message("system", system), *sendable(history)], budget=budget, tools=tools
            )
            if report.changed:
                self.emit({"type": "compaction", **report.to_json(), **marker})
            request = ChatRequest(
                model=spec.model.id,
                messages=outgoing,
                tools=tools,
                max_output_tokens=limit,
                reasoning=spec.model.reasoning,
            )
            assistant, finish = await self._stream_answer(provider, request, persist, marker)
            history.append(assistant)
            if finish == "length" and assistant.tool_calls:
                # The limit cut the model off inside a call: its arguments are incomplete,
                # and asking again with the same limit is cut at the same place (24 steps
                # of 8192 tokens each, before). Stop now; the user may continue higher.
                self._refuse_cut_calls(assistant, limit, persist, marker)
                return "output_limit"
            if finish in CUT_FINISHES:
                self._report_cut(finish, limit, [], marker)
            if not assistant.tool_calls:
                return finish
            for call in assistant.tool_calls:
                result = await self._call_tool(call, agent, parent_call_id)
                answer = tool_answer(call, result, spec.model)
                if persist:
                    runtime.worker.submit(
                        runtime.store.add_message,
                        spec.session_id,
                        stored_answer(answer),
                        run_id=spec.run_id,
                        redacted=True,
                    )
                history.append(answer)
        by_policy = self.spec.steps_by_policy and max_steps == spec.max_steps
        self.emit({"type": "step_limit", "limit": max_steps, "by_policy": by_policy, **marker})
        return "max_steps"

    def _report_cut(self, finish: str, limit: int, tools: list[str], marker: SubAgentMark) -> None:
        """Say that the answer did not end on its own (``answer_cut``); a top-level cut by the
        limit also goes into the finish event, with the higher limit to continue with."""
        detail: CutDetail = {"cut": finish, "tools": tools}
        if finish == "length":
            detail["max_output_tokens"] = limit
            detail["continue_max_output_tokens"] = self.spec.higher_limit()
        self.emit({"type": "answer_cut", "reason": finish, **detail, **marker})
        if not marker:
            self.cut = detail

    def _refuse_cut_calls(
        self, assistant: Message, limit: int, persist: bool, marker: SubAgentMark
    ) -> None:
        """Answer every call of a cut answer with "not run" (none of them runs: the model
        had not finished its turn), so the conversation stays valid for the next run."""
        runtime, spec = self.runtime, self.spec
        names = [call.name for call in assistant.tool_calls]
        self._report_cut("length", limit, names, marker)
        for call in assistant.tool_calls:
            content = (
                f"[Not run: the output limit of {limit} tokens cut this {call.name} call off "
                "before its arguments were complete. Nothing was done. Write less in one call "
                "(split a large file into several edits), or continue with a higher limit.]"
            )
            self.emit(
                {
                    "type": "tool_call_finished",
                    "call_id": call.id,
                    "name": call.name,
                    "status": "error",
                    "is_error": True,
                    "duration_ms": 0,
                    "content": content,
                    "truncated": False,
                    "data": {"reason": "output_limit"},
                    **marker,
                }
            )
            answer = Message("tool", content, tool_call_id=call.id, name=call.name, is_error=True)
            if persist:
                runtime.worker.submit(
                    runtime.store.add_message, spec.session_id, answer, run_id=spec.run_id
                )

    async def _stream_answer(
        self, provider: Provider, request: ChatRequest, persist: bool, marker: SubAgentMark
    ) -> tuple[Message, str]:
        runtime, spec = self.runtime, self.spec
        store, worker = runtime.store, runtime.worker
        assistant = Message("assistant")
        # The row is created on the store's thread without waiting for it; the writes after
        # it run on that thread too, in order, and find its id there.
        row = _Row() if persist else None
        if row is not None:
            worker.submit(row.create, store, spec.session_id, spec.run_id)
        text: list[str] = []
        reasoning: list[str] = []
        finish = "stop"
        # Models' call ids need not be unique (local models reuse "call_0"); ours are.
        started: list[tuple[str, str]] = []
        try:
            async for event in provider.stream(request):
                if isinstance(event, TextDelta):
                    text.append(event.text)
                    self.emit(
                        {"type": "text_delta", "text": event.text, **marker},
                        write=None
                        if row is None
                        else functools.partial(row.append, store, event.text),
                    )
                elif isinstance(event, ReasoningDelta):
                    reasoning.append(event.text)
                    self.emit(
                        {"type": "reasoning_delta", "text": event.text, **marker},
                        write=None
                        if row is None
                        else functools.partial(row.append, store, "", event.text),
                    )
                elif isinstance(event, ToolCallStarted):
                    own_id = new_call_id()
                    started.append((event.id, own_id))
                    self.emit(
                        {
                            "type": "tool_call_streaming",
                            "call_id": own_id,
                            "name": event.name,
                            **marker,
                        }
                    )
                elif isinstance(event, ToolCallReady):
                    own_id = (
                        next((own for model_id, own in started if model_id == event.call.id), None)
                        or new_call_id()
                    )
                    started = [pair for pair in started if pair[1] != own_id]
                    assistant.tool_calls.append(dataclasses.replace(event.call, id=own_id))
                elif isinstance(event, Usage):
                    write = functools.partial(
                        store.add_usage,
                        spec.session_id,
                        spec.run_id,
                        spec.provider_id,
                        spec.model.id,
                        event.input_tokens,
                        event.output_tokens,
                        event.cached_tokens,
                    )
                    cost = spec.model.cost(event.input_tokens, event.output_tokens)
                    self.emit(
                        {
                            "type": "usage",
                            "input_tokens": event.input_tokens,
                            "output_tokens": event.output_tokens,
                            "cached_tokens": event.cached_tokens,
                            "cost": cost,
                            **marker,
                        },
                        write=write,
                    )
                elif isinstance(event, Finished):
                    finish = event.reason
        except BaseException:
            if row is not None:
                worker.submit(row.finish, store, [], "cut")
            raise
        assistant.content = "".join(text)
        assistant.reasoning = "".join(reasoning)
        if row is not None:
            # A cut answer is kept as "cut", so a reloaded panel still says so.
            status = "cut" if finish in CUT_FINISHES else "complete"
            worker.submit(row.finish, store, list(assistant.tool_calls), status)
        return assistant, finish

    # -- tools ----------------------------------------------------------------------------

    def _tool_event(self, event: ToolEvent) -> None:
        """Events tools send (todos, suggestions); the todo list is kept with the session."""
        write = None
        if event["type"] == "todos":
            store = self.runtime.store
            write = functools.partial(
                store.update_session, self.spec.session_id, todos=event["todos"]
            )
        self.emit(event, write=write)

    async def _tool_context(self, call_id: str, parent_call_id: str | None) -> ToolContext:
        return await self.runtime.tool_context(
            self.spec.session_id,
            self.spec.user,
            self._tool_event,
            subagents=None if parent_call_id else functools.partial(self._subagent, call_id),
            in_plan_mode=self._in_plan_mode,
        )

    async def _in_plan_mode(self) -> bool:
        """Whether changes are queued now (the session's switch can change during a run)."""
        if self.spec.plan_mode:
            return True
        runtime = self.runtime
        session = await runtime.worker.call(runtime.store.get_session, self.spec.session_id)
        return bool(session["plan_mode"])

    async def _call_tool(
        self, call: ToolCall, agent: AgentDefinition, parent_call_id: str | None
    ) -> ToolResult:
        runtime, spec = self.runtime, self.spec
        persist = parent_call_id is None
        marker = _marker(parent_call_id)
        redact = runtime.security.redactor
        started = time.monotonic()
        self.emit(
            {
                "type": "tool_call_started",
                "call_id": call.id,
                "name": call.name,
                "arguments": redact.redact_data(call.arguments),
                **marker,
            }
        )
        if persist:
            runtime.worker.submit(
                runtime.store.add_tool_call,
                spec.session_id,
                spec.run_id,
                call.id,
                call.name,
                call.arguments,
            )
        try:
            result, status = await self._dispatch(call, agent, parent_call_id)
        except asyncio.CancelledError:
            if persist:
                runtime.worker.submit(
                    runtime.store.finish_tool_call,
                    call.id,
                    status="error",
                    result="Cancelled.",
                    is_error=True,
                    duration_ms=_elapsed_ms(started),
                )
            raise
        duration = _elapsed_ms(started)
        result.content = redact.redact(result.content)
        data = result.data if isinstance(result.data, dict) else {}
        runtime.agent_audit.record(
            "tool.call",
            user=spec.user,
            session=spec.session_id,
            run=spec.run_id,
            call_id=call.id,
            parent_call_id=parent_call_id,
            tool=call.name,
            arguments_digest=arguments_digest(call.arguments),
            decision=self.decisions.pop(call.id, "refused" if status == "error" else "not_gated"),
            outcome=status,
            is_error=result.is_error,
            reason=data.get("reason"),
            duration_ms=duration,
        )
        write = None
        if persist:
            write = functools.partial(
                runtime.store.finish_tool_call,
                call.id,
                status=status,
                result=result.content,
                data=result.data,
                is_error=result.is_error,
                duration_ms=duration,
                redacted=True,
            )
        self.emit(
            {
                "type": "tool_call_finished",
                "call_id": call.id,
                "name": call.name,
                "status": status,
                "is_error": result.is_error,
                "duration_ms": duration,
                "content": result.content[:PREVIEW_CHARS],
                "truncated": len(result.content) > PREVIEW_CHARS,
                "data": redact.redact_data(result.data),
                **marker,
            },
            write=write,
        )
        return result

    async def _dispatch(
        self, call: ToolCall, agent: AgentDefinition, parent_call_id: str | None
    ) -> tuple[ToolResult, str]:
        toolbox = self.runtime.toolbox
        tool = toolbox.get(call.name)
        if tool is None or not agent.allows(call.name):
            offered = ", ".join(agent.tools)
            return ToolResult(
                f"The tool {call.name!r} is not available to the {agent.name} agent. "
                f"Its tools: {offered}.",
                is_error=True,
                data={"reason": "tool_not_allowed"},
            ), "error"
        if call.arguments_error:
            return ToolResult(
                f"The arguments were not a JSON object: {call.arguments_error}",
                is_error=True,
                data={"reason": "invalid_arguments"},
            ), "error"
        problem = toolbox.validate(tool, call.arguments)
        if problem:
            return ToolResult(
                f"Invalid arguments for {call.name}: {problem}",
                is_error=True,
                data={"reason": "invalid_arguments"},
            ), "error"
        context = await self._tool_context(call.id, parent_call_id)
        try:
            # A read-only tool may still propose a call that changes something (a workflow
            # replay in plan mode, lowering a workflow's side effect).
            if not tool.mutating and not await tool.proposes(call.arguments, context):
                self.decisions[call.id] = "not_gated"
                return await tool.run(call.arguments, context), "done"
            # Read-only: no change is proposed, asked for or queued in a plan.
            self.runtime.security.paths.refuse_writes(f"the agent cannot use {call.name}")
            proposal = await tool.propose(call.arguments, context)
            return await self._approve_and_apply(call, tool, proposal, context)
        except TeraxError as failure:
            message = self.runtime.security.redactor.redact(failure.message)
            return ToolResult(message, is_error=True, data={"reason": failure.reason}), "error"
        except Exception:
            log.exception("Tool %s failed", call.name)
            return ToolResult(
                f"{call.name} failed unexpectedly.",
                is_error=True,
                data={"reason": "internal_error"},
            ), "error"

    async def _approve_and_apply(
        self, call: ToolCall, tool: Tool, proposal: Proposal, context: ToolContext
    ) -> tuple[ToolResult, str]:
        runtime, spec = self.runtime, self.spec
        store, worker = runtime.store, runtime.worker
        session = await worker.call(store.get_session, spec.session_id)
        if session["plan_mode"] or spec.plan_mode:
            self.decisions[call.id] = "queued"
            approval = await self._record_approval(call, tool, proposal, "queued")
            queued = await worker.call(store.approvals, spec.session_id, status="queued")
            self.emit({"type": "plan_item_queued", "approval": approval})
            return ToolResult(
                f"Queued as item {len(queued)} of the plan: {proposal.summary}. Nothing has run "
                "yet; the user reviews and applies the plan when you finish.",
                data={"approval_id": approval["id"], "queued": True},
            ), "queued"
        governance = runtime.governance
        rule = matching_rule(governance.effective_rules(session["rules"]), proposal)
        if rule is not None:
            by_admin = governance.approvals == "admin_rules"
            self.decisions[call.id] = "admin_rule" if by_admin else "rule"
            approval = await self._record_approval(call, tool, proposal, "approved", rule)
            runtime.security.audit.record(
                "ai.auto_approved",
                user=spec.user,
                session=spec.session_id,
                tool=tool.name,
                rule=rule,
                path=proposal.path,
                command=proposal.command,
            )
            runtime.agent_audit.record(
                "approval.auto",
                user=spec.user,
                session=spec.session_id,
                run=spec.run_id,
                call_id=call.id,
                tool=tool.name,
                rule=rule,
                rule_source="administrator" if by_admin else "user",
                subject=tool.audit_subject(proposal),
            )
            self.emit({"type": "auto_approved", "approval": approval, "rule": rule})
            return await runtime.apply_decided(tool, proposal, context, None), "done"
        decision = await self._ask(call, tool, proposal)
        self.decisions[call.id] = decision.status
        if decision.status == "denied":
            said = f" They said: {decision.message}" if decision.message else ""
            return ToolResult(
                f"The user denied this {tool.name} call; nothing was done.{said}",
                is_error=True,
                data={"denied": True},
            ), "denied"
        return await runtime.apply_decided(tool, proposal, context, decision), "done"

    async def _record_approval(
        self,
        call: ToolCall,
        tool: Tool,
        proposal: Proposal,
        status: str,
        rule: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        runtime, spec = self.runtime, self.spec
        return await runtime.worker.call(
            runtime.store.add_approval,
            spec.session_id,
            spec.run_id,
            call.id,
            tool.name,
            proposal.to_json(),
            status=status,
            auto_rule=rule,
        )

    async def _ask(self, call: ToolCall, tool: Tool, proposal: Proposal) -> Decision:
        runtime = self.runtime
        store, worker = runtime.store, runtime.worker
        approval = await self._record_approval(call, tool, proposal, "pending")
        waiting = runtime.approvals.wait(approval["id"])
        # A decision can land between the insert and the wait; the row has it then.
        current = await worker.call(store.get_approval, approval["id"])
        if current["status"] != "pending":
            return _stored_decision(current)
        runtime.worker.submit(store.set_tool_call_status, call.id, "pending_approval")
        self.emit({"type": "approval_requested", "approval": approval})
        runtime.agent_audit.record(
            "approval.requested",
            user=self.spec.user,
            session=self.spec.session_id,
            run=self.spec.run_id,
            call_id=call.id,
            approval=approval["id"],
            tool=tool.name,
        )
        try:
            return await waiting
        except asyncio.CancelledError:
            with contextlib.suppress(Conflict):
                await worker.call(
                    store.decide_approval,
                    approval["id"],
                    status="expired",
                    decision={"reason": "cancelled"},
                    user=None,
                )
            self.emit({"type": "approval_expired", "approval_id": approval["id"]})
            raise

    async def _subagent(self, parent_call_id: str, agent_name: str, task: str) -> ToolResult:
        runtime = self.runtime
        agent = runtime.agents.get(agent_name)
        if not agent.subagent:
            return ToolResult(f"{agent_name!r} is not a sub-agent.", is_error=True)
        provider = await runtime.provider(self.spec.provider_id)
        history = [Message("user", task)]
        system = system_prompt(agent, workspace=runtime.settings.workspace_name, memory=None)
        try:
            reason = await self.loop(
                provider,
                system,
                history,
                agent,
                # The administrator's steps per run bound a sub-agent's loop as well.
                max_steps=runtime.governance.step_cap(
                    agent.max_steps or runtime.settings.subagent_max_steps
                )[0],
                parent_call_id=parent_call_id,
            )
        finally:
            await provider.aclose()
        answer = next(
            (m.content for m in reversed(history) if m.role == "assistant" and m.content), ""
        )
        if reason == "max_steps":
            answer = f"[The {agent_name} sub-agent reached its step limit.]\n{answer}"
        elif reason == "output_limit":
            answer = (
                f"[The output limit cut off a tool call of the {agent_name} sub-agent; "
                f"it stopped there.]\n{answer}"
            )
        return ToolResult(
            answer or f"The {agent_name} sub-agent gave no answer.",
            data={"agent": agent_name, "finish": reason},
        )


class _Row:
    """A streamed assistant message's row; every method runs on the store's thread."""

    def __init__(self) -> None:
        self.id: int | None = None

    def create(self, store: AiStore, session_id: str, run_id: str) -> None:
        self.id = store.add_message(
            session_id, Message("assistant"), run_id=run_id, status="streaming"
        )

    def append(self, store: AiStore, text: str, reasoning: str = "") -> None:
        if self.id is not None:
            store.append_message(self.id, text=text, reasoning=reasoning)

    def finish(self, store: AiStore, tool_calls: list[ToolCall], status: str) -> None:
        if self.id is not None:
            store.finish_message(self.id, tool_calls=tool_calls, status=status)


def _stored_decision(approval: dict[str, Any]) -> Decision:
    decision = approval.get("decision") or {}
    status = approval["status"]
    if status in ("approved", "partially_approved"):
        return Decision(status, hunks=decision.get("hunks"), message=decision.get("message"))
    return Decision("denied", message=decision.get("message"))


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def tool_answer(call: ToolCall, result: ToolResult, model: ModelInfo) -> Message:
    """The tool message answering ``call``. Its images go to a model that reads images; for
    one that does not, the text says they were left out (their descriptions are in it)."""
    content, images = result.content, result.images
    if images and not model.vision:
        content += (
            f"\n[{len(images)} image{'s' if len(images) > 1 else ''} of this result not "
            f"shown: {model.label} is not known to read images (its details in the AI "
            "settings say so when it does).]"
        )
        images = []
    return Message(
        "tool",
        content,
        tool_call_id=call.id,
        name=call.name,
        is_error=result.is_error,
        images=list(images),
    )


def stored_answer(answer: Message) -> Message:
    """What is kept of a tool message: images are not stored, so a later run reads that
    they were shown then (and how to see them again)."""
    if not answer.images:
        return answer
    count = len(answer.images)
    return dataclasses.replace(
        answer,
        images=[],
        content=answer.content
        + f"\n[{'Its image was' if count == 1 else f'Its {count} images were'} shown only in "
        "the run that made this call; call the tool again to see them.]",
    )


def _marker(parent_call_id: str | None) -> SubAgentMark:
    """What the events of a sub-agent's loop carry (nothing for the run's own)."""
    return {"parent_call_id": parent_call_id} if parent_call_id else {}


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
