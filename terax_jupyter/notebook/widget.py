"""The agent's view in a cell: an anywidget streaming the answer, tool cards and approvals.

While ``ask()`` runs, the kernel is busy: updates flow kernel -> page (widget state on
iopub), but a message from the page would wait in the kernel's queue until the cell ends.
So the Approve and Deny buttons post the decision straight to the server
(``POST terax/api/ai/approvals/<id>`` with the page's own Jupyter login and XSRF token),
as the AI panel does, and the kernel hears it on the session's events. The buttons are
offered only when the page's server holds the session (the same server the kernel uses).

Headless runs and frontends without widgets get the text view.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terax_jupyter.notebook import kernel
from terax_jupyter.notebook.views import RunView, TextView

if TYPE_CHECKING:
    from terax_jupyter.notebook.policy import Approval, Verdict
    from terax_jupyter.notebook.results import (
        AgentResult,
        ApprovalRecord,
        RunFold,
        ToolCall,
    )

STATIC = Path(__file__).with_name("static")
THROTTLE = 0.08  # seconds between two state updates while text streams
MAX_TEXT = 200_000  # characters of answer kept in the widget's state


def available() -> bool:
    return importlib.util.find_spec("anywidget") is not None


def best_view() -> RunView:
    """The widget when a person looks at a kernel that can show one, else text."""
    if kernel.headless() or kernel.ipython_kernel() is None or not available():
        return TextView()
    return WidgetView()


def _widget_class() -> type:
    import anywidget
    import traitlets

    class AgentWidget(anywidget.AnyWidget):
        _esm = STATIC / "agent.js"
        _css = STATIC / "agent.css"
        state = traitlets.Dict().tag(sync=True)

    return AgentWidget


_class: type | None = None


def agent_widget() -> Any:
    global _class
    if _class is None:
        _class = _widget_class()
    return _class()


class WidgetView(RunView):
    """Keeps the widget's ``state`` in step with the run (see ``state()``)."""

    def __init__(self) -> None:
        from IPython.display import display

        self.widget = agent_widget()
        self.fold: RunFold | None = None
        self.prompt = ""
        self.session: dict[str, Any] = {}
        self.waiting_ids: set[str] = set()
        self.status = "starting"
        self.result: AgentResult | None = None
        self._sent = 0.0
        display(self.widget)

    def started(self, prompt: str, session: dict[str, Any]) -> None:
        self.prompt, self.session, self.status = prompt, session, "running"
        self._push(force=True)

    def event(self, event: dict[str, Any], fold: RunFold) -> None:
        self.fold = fold
        kind = event.get("type")
        if kind == "approval_resolved":
            self.waiting_ids.discard((event.get("approval") or {}).get("id", ""))
        self._push(force=kind != "text_delta")

    def waiting(self, approval: Approval, session: dict[str, Any]) -> None:
        self.waiting_ids.add(approval.id)
        self._push(force=True)

    def decided(self, approval: Approval, verdict: Verdict) -> None:
        self._push(force=True)

    def finished(self, result: AgentResult) -> None:
        self.status, self.result = "finished", result
        self.waiting_ids.clear()
        self._push(force=True)

    def _push(self, *, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self._sent < THROTTLE:
            return
        self._sent = now
        self.widget.state = state(
            self.fold,
            prompt=self.prompt,
            session=self.session,
            status=self.status,
            waiting=self.waiting_ids,
            result=self.result,
        )


def state(
    fold: RunFold | None,
    *,
    prompt: str,
    session: dict[str, Any],
    status: str,
    waiting: set[str],
    result: AgentResult | None = None,
) -> dict[str, Any]:
    """What the page shows, as JSON: the prompt; ``items``, the streamed text of each step, the
    tool cards and the approvals (``waiting`` ones get buttons) in the order they came; the
    cards and approvals by kind too; the usage."""
    calls = {}
    approvals = {}
    items: list[dict[str, Any]] = []
    if fold is not None:
        for call in fold.calls.values():
            if not call.parent_call_id:
                calls[call.id] = _call_state(call)
        for record in fold.approvals.values():
            approvals[record.approval.id] = _approval_state(record, waiting)
        for kind, key in fold.timeline:
            if kind == "text":
                items.append({"kind": "text", "text": "".join(fold.steps[key])[-MAX_TEXT:]})
            elif kind == "call" and key in calls:
                items.append({"kind": "call", **calls[key]})
            elif kind == "approval" and key in approvals:
                items.append({"kind": "approval", **approvals[key]})
    if result is not None and result.text and not any(i["kind"] == "text" for i in items):
        items.append({"kind": "text", "text": result.text[-MAX_TEXT:]})  # events were missed
    usage = fold.usage if fold is not None else None
    return {
        "prompt": prompt,
        "session_id": session.get("id", ""),
        "title": session.get("title") or "",
        "status": status,
        "finish": fold.finish if fold is not None else None,
        "error": (fold.error or {}).get("message", "") if fold is not None else "",
        "items": items,
        "calls": list(calls.values()),
        "approvals": list(approvals.values()),
        "usage": {
            "input_tokens": usage.input_tokens if usage else 0,
            "output_tokens": usage.output_tokens if usage else 0,
            "cost": usage.cost if usage else None,
        },
        "files_changed": result.files_changed if result is not None else [],
    }


def _call_state(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "name": call.name,
        "target": _target(call.arguments),
        "status": call.status,
        "error": call.result[:300] if call.is_error else "",
    }


def _approval_state(record: ApprovalRecord, waiting: set[str]) -> dict[str, Any]:
    approval = record.approval
    return {
        "id": approval.id,
        "tool": approval.tool,
        "summary": approval.summary,
        "diff": approval.diff or "",
        "command": approval.command or "",
        "status": record.status,
        "by": record.by or "",
        "message": record.message or "",
        "waiting": approval.id in waiting and record.status == "pending",
    }


def _target(arguments: dict[str, Any]) -> str:
    for key in ("path", "command", "pattern", "url", "task", "name"):
        value = arguments.get(key)
        if isinstance(value, str):
            return value[:200]
    return ""
