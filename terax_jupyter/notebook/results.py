"""What ``agent.ask()`` returns, and the fold of a run's events into it.

The live part (streamed text, tool cards, approvals, usage) comes from the events; once the
run finished the text and tool calls are read back from the store through REST, so a result
is complete even when events were missed (a ``resync``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from terax_jupyter.notebook.policy import Approval, Verdict

WRITE_TOOLS = frozenset({"write_file", "edit", "multi_edit"})


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    status: str = "running"  # running, pending_approval, done, denied, error, queued
    result: str = ""
    is_error: bool = False
    data: dict[str, Any] | None = None
    duration_ms: float | None = None
    parent_call_id: str | None = None

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> ToolCall:
        return cls(
            id=row["id"],
            name=row["name"],
            arguments=row.get("arguments") or {},
            status=row.get("status") or "",
            result=row.get("result") or "",
            is_error=bool(row.get("is_error")),
            data=row.get("data"),
            duration_ms=row.get("duration_ms"),
        )

    @property
    def changed_file(self) -> str | None:
        """The file this call wrote, if it wrote one."""
        if self.name not in WRITE_TOOLS or self.status != "done" or self.is_error:
            return None
        data = self.data or {}
        if data.get("hunks_applied") == 0:
            return None
        path = data.get("path") or self.arguments.get("path")
        return str(path) if path else None


@dataclass
class ApprovalRecord:
    """An approval of the run and how it was answered."""

    approval: Approval
    status: str = "pending"  # pending, approved, partially_approved, denied, expired
    by: str | None = None  # see policy.DecidedBy; "server" for a session rule
    message: str | None = None
    rule: dict[str, str] | None = None

    @property
    def tool(self) -> str:
        return self.approval.tool

    @property
    def summary(self) -> str:
        return self.approval.summary


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None

    def add(self, event: dict[str, Any]) -> None:
        self.input_tokens += int(event.get("input_tokens") or 0)
        self.output_tokens += int(event.get("output_tokens") or 0)
        self.cached_tokens += int(event.get("cached_tokens") or 0)
        if event.get("cost") is not None:
            self.cost = (self.cost or 0.0) + float(event["cost"])


@dataclass
class AgentResult:
    """One answer of the agent: its text, what it did and what it cost."""

    text: str
    session_id: str
    run_id: str | None
    finish: str  # the run's finish reason: stop, cancelled, error, max_steps, ...
    tool_calls: list[ToolCall] = field(default_factory=list)
    approvals: list[ApprovalRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        # output_limit: the model's tool call was cut off by the output limit and not run.
        return self.error is None and self.finish not in ("error", "cancelled", "output_limit")

    @property
    def files_changed(self) -> list[str]:
        changed: list[str] = []
        for call in self.tool_calls:
            path = call.changed_file
            if path is not None and path not in changed:
                changed.append(path)
        return changed

    def __str__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        # The model's text is shown as it is, not rendered: rendered, its images and raw
        # HTML would load (a notebook's own outputs are trusted, so not even sanitized)
        # the moment the cell shows, and a prompt-injected model could leak data that way.
        lines = [fenced(self.text) if self.text else "*(no text)*"]
        facts = []
        if self.tool_calls:
            facts.append(f"{len(self.tool_calls)} tool calls")
        if self.files_changed:
            facts.append("changed " + ", ".join(self.files_changed))
        denied = [a for a in self.approvals if a.status == "denied"]
        if denied:
            facts.append(f"{len(denied)} denied")
        facts.append(f"{self.usage.input_tokens} in / {self.usage.output_tokens} out tokens")
        if self.error:
            facts.append(f"error: {self.error.get('message', '')}")
        lines.append("\n*" + escape_markdown("; ".join(facts)) + "*")
        return "\n".join(lines)


def fenced(text: str, info: str = "text") -> str:
    """``text`` as a fenced code block nothing in it can close: Markdown renders it as it is
    (no HTML, images or links)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}"


def code_span(text: str) -> str:
    """``text`` as an inline code span nothing in it can close (newlines become spaces)."""
    text = text.replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}"


def escape_markdown(text: str) -> str:
    """``text`` with every ASCII punctuation character escaped: Markdown shows it as it is."""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text.replace("\n", " "))


class RunFold:
    """A run's events folded as they come (what a view shows while it streams)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.run_id: str | None = None
        self.steps: list[list[str]] = [[]]  # the text of each model call
        # What happened, in order, for a view: ("text", step), ("call", id), ("approval", id).
        self.timeline: list[tuple[str, Any]] = []
        self.calls: dict[str, ToolCall] = {}
        self.approvals: dict[str, ApprovalRecord] = {}
        self.usage = Usage()
        self.finish: str | None = None
        self.error: dict[str, Any] | None = None
        self.missed = False  # the server's ring moved on: the text comes from REST at the end

    @property
    def text(self) -> str:
        """The final answer: the text of the last model call that said something."""
        for parts in reversed(self.steps):
            if parts:
                return "".join(parts)
        return ""

    def ours(self, event: dict[str, Any]) -> bool:
        """Whether ``event`` belongs to this run (run id known once it started)."""
        run_id = event.get("run_id")
        return run_id is None or self.run_id is None or run_id == self.run_id

    def apply(self, event: dict[str, Any]) -> None:
        record: ApprovalRecord | None
        kind = event.get("type")
        sub = event.get("parent_call_id")
        if kind == "run_started" and self.run_id is None:
            self.run_id = (event.get("run") or {}).get("id") or event.get("run_id")
        elif kind == "step" and not sub:
            if self.steps[-1]:
                self.steps.append([])
        elif kind == "text_delta" and not sub:
            if not self.steps[-1]:
                self.timeline.append(("text", len(self.steps) - 1))
            self.steps[-1].append(event.get("text", ""))
        elif kind == "tool_call_started":
            if not sub:
                self.timeline.append(("call", event["call_id"]))
            self.calls[event["call_id"]] = ToolCall(
                event["call_id"],
                event.get("name", ""),
                event.get("arguments") or {},
                parent_call_id=sub,
            )
        elif kind == "tool_call_finished":
            call = self.calls.setdefault(
                event["call_id"], ToolCall(event["call_id"], event.get("name", ""))
            )
            call.status = event.get("status", "done")
            call.result = event.get("content", "")
            call.is_error = bool(event.get("is_error"))
            call.data = event.get("data")
            call.duration_ms = event.get("duration_ms")
        elif kind in ("approval_requested", "auto_approved", "plan_item_queued"):
            approval = Approval.from_json(event["approval"])
            if approval.id not in self.approvals:
                self.timeline.append(("approval", approval.id))
            record = self.approvals.setdefault(approval.id, ApprovalRecord(approval))
            record.status = event["approval"].get("status", "pending")
            if kind == "auto_approved":
                record.by, record.rule = "server", event.get("rule")
            if approval.raw.get("call_id") in self.calls and record.status == "pending":
                self.calls[approval.raw["call_id"]].status = "pending_approval"
        elif kind == "approval_resolved":
            decided = event.get("approval") or {}
            record = self.approvals.get(decided.get("id", ""))
            if record is not None:
                record.status = decided.get("status", record.status)
                if record.by is None:
                    record.by = "person"
                decision = decided.get("decision") or {}
                record.message = record.message or decision.get("message")
        elif kind == "approval_expired":
            record = self.approvals.get(event.get("approval_id", ""))
            if record is not None:
                record.status = "expired"
        elif kind == "usage":
            self.usage.add(event)
        elif kind == "error":
            self.error = {k: v for k, v in event.items() if k not in ("type", "seq")}
        elif kind == "finish":
            self.finish = event.get("reason") or "stop"
        elif kind in ("resync", "overflow"):
            self.missed = True

    def decided(self, approval_id: str, verdict: Verdict) -> None:
        """This side answered ``approval_id`` (the server's approval_resolved follows)."""
        record = self.approvals.get(approval_id)
        if record is not None:
            record.by, record.message, record.rule = verdict.by, verdict.message, verdict.rule

    def result(
        self,
        messages: list[dict[str, Any]] | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
    ) -> AgentResult:
        """The result, with the store's messages and tool calls of the run when given."""
        text = self.text
        calls = [c for c in self.calls.values() if not c.parent_call_id]
        if messages is not None:
            answers = [
                m
                for m in messages
                if m.get("run_id") == self.run_id and m.get("role") == "assistant"
            ]
            stored = next((m["content"] for m in reversed(answers) if m.get("content")), "")
            if stored or self.missed:
                text = stored
        if tool_calls is not None:
            calls = [ToolCall.from_json(c) for c in tool_calls if c.get("run_id") == self.run_id]
        return AgentResult(
            text=text,
            session_id=self.session_id,
            run_id=self.run_id,
            finish=self.finish or "unknown",
            tool_calls=calls,
            approvals=list(self.approvals.values()),
            usage=self.usage,
            error=self.error,
        )
