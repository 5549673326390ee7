"""The states the agent store records for messages, runs, tool calls and approvals.

Kept apart from the store so that a handler can check a query against them without loading
the agent.
"""

from __future__ import annotations

MESSAGE_STATUSES = ("streaming", "complete", "cut")
RUN_STATUSES = ("running", "finished", "cancelled", "failed", "interrupted")
TOOL_CALL_STATUSES = ("running", "pending_approval", "queued", "done", "error", "denied")
APPROVAL_STATUSES = (
    "pending",
    "queued",
    "approved",
    "partially_approved",
    "denied",
    "expired",
    "discarded",
)
