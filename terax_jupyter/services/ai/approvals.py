"""Approval decisions: what a client may answer, and the futures runs wait on.

A pending approval is a row in the store (so it survives a page reload) plus, while its run
is alive, a future here. Deciding writes the row first (once: a second answer is refused)
and then wakes the run. Partial approval names the hunks to keep, by index.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from terax_jupyter.exceptions import InvalidRequest

DecisionStatus = Literal["approved", "partially_approved", "denied"]
MAX_MESSAGE_CHARS = 2000


@dataclass(frozen=True)
class Decision:
    status: DecisionStatus
    hunks: list[int] | None = None  # None: everything proposed
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "hunks": self.hunks, "message": self.message}


def parse_decision(body: Any, proposal: dict[str, Any]) -> Decision:
    """``{"decision": "approve"|"deny", "hunks"?: [int], "message"?: str}`` checked against
    the proposal it answers (hunk indices must exist; only edits have hunks)."""
    if not isinstance(body, dict):
        raise InvalidRequest("A decision is a JSON object.", reason="invalid_parameter")
    choice = body.get("decision")
    if choice not in ("approve", "deny"):
        raise InvalidRequest("'decision' is 'approve' or 'deny'.", reason="invalid_parameter")
    message = body.get("message")
    if message is not None and (not isinstance(message, str) or len(message) > MAX_MESSAGE_CHARS):
        raise InvalidRequest(
            f"'message' is text of at most {MAX_MESSAGE_CHARS} characters.",
            reason="invalid_parameter",
        )
    if choice == "deny":
        return Decision("denied", message=message or None)
    hunks = body.get("hunks")
    if hunks is None:
        return Decision("approved", message=message or None)
    total = len(proposal.get("hunks") or [])
    if not total:
        raise InvalidRequest(
            "Only an edit's hunks can be chosen; this proposal has none.",
            reason="invalid_parameter",
        )
    if (
        not isinstance(hunks, list)
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in hunks)
        or len(set(hunks)) != len(hunks)
        or any(not 0 <= i < total for i in hunks)
    ):
        raise InvalidRequest(
            f"'hunks' is a list of distinct hunk indices from 0 to {total - 1}.",
            reason="invalid_parameter",
        )
    if not hunks:
        return Decision("denied", hunks=[], message=message or "No hunk was accepted.")
    chosen = sorted(hunks)
    if len(chosen) == total:
        return Decision("approved", message=message or None)
    return Decision("partially_approved", hunks=chosen, message=message or None)


class ApprovalBroker:
    """The futures of live runs waiting on approvals, by approval id."""

    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Future[Decision]] = {}

    def wait(self, approval_id: str) -> asyncio.Future[Decision]:
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._waiting[approval_id] = future
        future.add_done_callback(lambda _: self._waiting.pop(approval_id, None))
        return future

    def is_waiting(self, approval_id: str) -> bool:
        return approval_id in self._waiting

    def is_waiting_any(self) -> bool:
        return bool(self._waiting)

    def resolve(self, approval_id: str, decision: Decision) -> bool:
        future = self._waiting.get(approval_id)
        if future is None or future.done():
            return False
        future.set_result(decision)
        return True
