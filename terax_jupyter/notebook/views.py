"""How a run shows in a cell while it streams. ``TextView`` prints (any frontend, nbclient's
outputs, a terminal); the widget view (``widget.py``) renders the same calls in the page."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from terax_jupyter.notebook.policy import Approval, Verdict
    from terax_jupyter.notebook.results import AgentResult, RunFold

MAX_DIFF_LINES = 40


class RunView:
    """A view of one run; the base class shows nothing (``display=False``)."""

    def started(self, prompt: str, session: dict[str, Any]) -> None:
        """The run was accepted by the server."""

    def event(self, event: dict[str, Any], fold: RunFold) -> None:
        """An event of the run, after ``fold`` applied it."""

    def waiting(self, approval: Approval, session: dict[str, Any]) -> None:
        """``approval`` waits for a person."""

    def decided(self, approval: Approval, verdict: Verdict) -> None:
        """The notebook's policy (or the headless rule) answered ``approval``."""

    def finished(self, result: AgentResult) -> None:
        """The run ended; ``result`` is what ask() returns."""


class TextView(RunView):
    """The run as text: the answer as it streams, one line per tool call and decision."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self._mid_line = False

    def _write(self, text: str) -> None:
        stream = self.stream or sys.stdout
        stream.write(text)
        stream.flush()
        if text:
            self._mid_line = not text.endswith("\n")

    def _line(self, text: str) -> None:
        self._write(("\n" if self._mid_line else "") + text + "\n")

    def started(self, prompt: str, session: dict[str, Any]) -> None:
        pass

    def event(self, event: dict[str, Any], fold: RunFold) -> None:
        kind = event.get("type")
        if event.get("parent_call_id"):
            return  # a sub-agent's work shows as its run_subagent call
        if kind == "text_delta":
            self._write(event.get("text", ""))
        elif kind == "tool_call_started":
            self._line(f"[{event.get('name')}] {_arguments(event.get('arguments') or {})}")
        elif kind == "tool_call_finished":
            status = event.get("status", "done")
            if status != "done" or event.get("is_error"):
                first = (event.get("content") or "").strip().splitlines()[:1]
                self._line(f"[{event.get('name')}] {status}: {first[0] if first else ''}")
        elif kind == "auto_approved":
            approval = event.get("approval") or {}
            summary = (approval.get("proposal") or {}).get("summary", "")
            self._line(f"Approved by the session's rule {event.get('rule')}: {summary}")
        elif kind == "approval_resolved":
            approval = event.get("approval") or {}
            record = fold.approvals.get(approval.get("id", ""))
            if record is not None and record.by == "person":  # answered elsewhere: the panel
                status = record.status.replace("_", " ").capitalize()
                who = approval.get("decided_by") or "a person"
                self._line(f"{status} by {who}: {record.summary}")
        elif kind == "error":
            self._line(f"Error: {event.get('message')}")

    def waiting(self, approval: Approval, session: dict[str, Any]) -> None:
        title = session.get("title") or session.get("id")
        self._line(f"Approval needed: {approval.summary}")
        self._write(_detail(approval))
        self._line(
            "Waiting for a decision: approve or deny it in the Terax AI panel "
            f"(session {title!r}). Interrupt the kernel to cancel the run."
        )

    def decided(self, approval: Approval, verdict: Verdict) -> None:
        who = {
            "rule": f"the notebook's rule {verdict.rule}",
            "policy": "the notebook's policy",
            "policy_error": "a failing policy",
            "headless": "the headless rule",
        }.get(verdict.by, verdict.by)
        word = "Approved" if verdict.decision == "approve" else "Denied"
        self._line(f"{word} by {who}: {approval.summary}")
        if verdict.decision == "deny" and verdict.message:
            self._line(f"  {verdict.message}")

    def finished(self, result: AgentResult) -> None:
        if self._mid_line:
            self._write("\n")
        usage = result.usage
        facts = [f"{usage.input_tokens} in / {usage.output_tokens} out tokens"]
        if usage.cost is not None:
            facts.append(f"${usage.cost:.4f}")
        if result.files_changed:
            facts.append("changed " + ", ".join(result.files_changed))
        if result.finish not in ("stop", "unknown"):
            facts.append(f"finished: {result.finish}")
        self._line("-- " + "; ".join(facts))


def _arguments(arguments: dict[str, Any]) -> str:
    for key in ("path", "command", "pattern", "url", "task", "name"):
        if isinstance(arguments.get(key), str):
            return arguments[key][:200]
    return ""


def _detail(approval: Approval) -> str:
    if approval.command:
        return f"  $ {approval.command}\n"
    if approval.diff:
        lines = approval.diff.splitlines()
        shown = lines[:MAX_DIFF_LINES]
        more = len(lines) - len(shown)
        return "".join(f"  {line}\n" for line in shown) + (f"  ... {more} more\n" if more else "")
    return ""
