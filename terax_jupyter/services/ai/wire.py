"""The frames of a session's events WebSocket, declared once.

Each event is a TypedDict its builders (the run, the plan, the manager, the tools) are
type-checked against; ``AiEvent`` in the OpenAPI document is derived from these classes
(``apispec.tagged_union``), and the Lab extension's types are generated from the document
(``labextension/src/api/openapi.ts``, checked for drift in CI). The server's tests check every
event they see against the schema, so a field added here but not there fails them.

A class holds what its builder writes; the event hub adds ``Numbered`` on the way out, and a
run adds its ``run_id``. Events of a sub-agent's loop carry the ``parent_call_id`` of the
``agent`` call that started it.
"""

from typing import Annotated, Any, Literal, TypeAlias, get_args

from typing_extensions import NotRequired, TypedDict

from terax_jupyter.apispec import Note, Ref
from terax_jupyter.services.ai.tools.base import ProposalKind

Rule = Annotated[dict[str, str], Ref("AiRule")]


class HunkRecord(TypedDict):
    """One hunk of a proposed edit, numbered from 0 in file order."""

    index: int
    header: str
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str]


class ProposalRecord(TypedDict):
    """The exact change: summary, kind, path or command, the unified diff and its hunks
    (edits), and what applying needs (payload)."""

    tool: str
    kind: ProposalKind
    summary: str
    payload: dict[str, Any]
    path: str | None
    command: str | None
    diff: str | None
    hunks: list[HunkRecord]


class DecisionRecord(TypedDict, total=False):
    """How an approval was decided (empty for a discarded plan item)."""

    status: str
    hunks: Annotated[list[int] | None, Note("The hunks approved (null: all).")]
    message: Annotated[str | None, Note("What the user said; passed on to the agent.")]
    reason: Annotated[str, Note("Why it expired (cancelled).")]


class ApprovalRecord(TypedDict):
    """A call waiting on the user (pending), queued in a plan, or decided."""

    id: str
    session_id: str
    run_id: str | None
    call_id: str | None
    tool: str
    proposal: ProposalRecord
    status: Literal[
        "pending", "queued", "approved", "partially_approved", "denied", "expired", "discarded"
    ]
    decision: DecisionRecord | None
    decided_by: str | None
    created_at: float
    decided_at: float | None
    auto_rule: Annotated[dict[str, str] | None, Ref("AiRule")]
    delivered: NotRequired[
        Annotated[bool, Note("In a decision's answer: whether a waiting run received it.")]
    ]


Approval = Annotated[dict[str, Any], Ref("AiApproval")]


class Numbered(TypedDict):
    """What every published event carries besides its own fields."""

    seq: Annotated[int, Note("The session's event number (for ?after=).")]
    session_id: str
    time: Annotated[float, Note("Seconds since the epoch, when it was published.")]
    run_id: NotRequired[Annotated[str, Note("The run that produced it.")]]


class SubAgentMark(TypedDict, total=False):
    """Marks the events of a sub-agent's loop."""

    parent_call_id: str


class Todo(TypedDict):
    content: str
    status: Literal["pending", "in_progress", "completed"]


class PlanOutcome(TypedDict):
    """How one plan item ended."""

    approval_id: str
    tool: str
    summary: str
    status: Annotated[str, Note("approved, partially_approved, denied, or failed.")]
    result: str
    is_error: bool
    data: NotRequired[dict[str, Any]]
    reason: NotRequired[Annotated[str, Note("Why it failed (status failed).")]]


class CutDetail(TypedDict):
    """How the output limit or a content filter ended an answer."""

    cut: Annotated[str, Note("length (the output limit) or content_filter.")]
    tools: Annotated[list[str], Note("The tool calls it cut off; none of them ran.")]
    max_output_tokens: NotRequired[int]
    continue_max_output_tokens: NotRequired[
        Annotated[int | None, Note("A higher limit to continue with, or null.")]
    ]


class ErrorDetail(TypedDict):
    message: str
    reason: Annotated[
        str, Note("bad_key, missing_key, provider_unreachable, rate_limited, policy_limit, ...")
    ]
    provider: NotRequired[str]
    retry_after: NotRequired[Annotated[float, Note("Seconds, when the provider said.")]]


class RunStarted(TypedDict):
    type: Literal["run_started"]
    run: Annotated[dict[str, Any], Ref("AiRun")]
    prompt: str


class Step(SubAgentMark):
    """The model is asked again (index counts from 1)."""

    type: Literal["step"]
    index: int


class TextDelta(SubAgentMark):
    type: Literal["text_delta"]
    text: str


class ReasoningDelta(SubAgentMark):
    type: Literal["reasoning_delta"]
    text: str


class ToolCallStreaming(SubAgentMark):
    """The model began writing a tool call (its arguments are still coming)."""

    type: Literal["tool_call_streaming"]
    call_id: str
    name: str


class ToolCallStarted(SubAgentMark):
    type: Literal["tool_call_started"]
    call_id: str
    name: str
    arguments: Annotated[dict[str, Any], Note("Redacted.")]


class ToolCallFinished(SubAgentMark):
    type: Literal["tool_call_finished"]
    call_id: str
    name: str
    status: Annotated[str, Note("done, error, denied or queued.")]
    is_error: bool
    duration_ms: int
    content: Annotated[str, Note("The start of what the model reads (see truncated).")]
    truncated: bool
    data: dict[str, Any]


class ApprovalRequested(TypedDict):
    type: Literal["approval_requested"]
    approval: Approval


class ApprovalResolved(TypedDict):
    type: Literal["approval_resolved"]
    approval: Approval


class ApprovalExpired(TypedDict):
    type: Literal["approval_expired"]
    approval_id: str


class AutoApproved(TypedDict):
    type: Literal["auto_approved"]
    approval: Approval
    rule: Rule


class PlanItemQueued(TypedDict):
    type: Literal["plan_item_queued"]
    approval: Approval


class PlanApplied(TypedDict):
    type: Literal["plan_applied"]
    outcomes: list[PlanOutcome]
    stopped: Annotated[bool, Note("A failed item stopped it; the rest is still queued.")]


class PlanDiscarded(TypedDict):
    type: Literal["plan_discarded"]
    items: int


class UsageReport(SubAgentMark):
    type: Literal["usage"]
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost: Annotated[float | None, Note("US dollars at the model's prices, when it has them.")]


class CompactionCounts(TypedDict):
    tokens_before: int
    tokens_after: int
    superseded_reads: int
    elided_results: int
    dropped_messages: int
    dropped_images: Annotated[int, Note("Images of old tool results left out.")]


class Compaction(CompactionCounts, SubAgentMark):
    """Older context was shortened to fit the model's window."""

    type: Literal["compaction"]


class StepLimit(SubAgentMark):
    type: Literal["step_limit"]
    limit: int
    by_policy: Annotated[bool, Note("The administrator's agent_steps_per_run set it.")]


class AnswerCut(CutDetail, SubAgentMark):
    """The answer did not end on its own."""

    type: Literal["answer_cut"]
    reason: Annotated[str, Note("length (the output limit) or content_filter.")]


class Todos(TypedDict):
    type: Literal["todos"]
    todos: list[Todo]


class Suggestion(TypedDict):
    """A command the agent suggests the user runs (never run by the server)."""

    type: Literal["suggestion"]
    command: str
    explanation: str


class Rules(TypedDict):
    type: Literal["rules"]
    rules: list[Rule]


class Error(ErrorDetail):
    type: Literal["error"]


class Finish(TypedDict):
    """The run ended. After a cut by the output limit it repeats answer_cut's fields."""

    type: Literal["finish"]
    reason: Annotated[
        str,
        Note(
            "stop, tool_calls, max_steps, output_limit (the limit cut a tool call; the run "
            "stopped at once), length, content_filter, cancelled, error or policy_limit (the "
            "administrator's tokens or cost per day were reached between steps)."
        ),
    ]
    steps: int
    cut: NotRequired[str]
    tools: NotRequired[list[str]]
    max_output_tokens: NotRequired[int]
    continue_max_output_tokens: NotRequired[int | None]


# Published by the event hub itself, without Numbered's fields.


class Resync(TypedDict):
    """Events after the client's ``after`` left the ring: reload through REST."""

    type: Literal["resync"]
    seq: int
    session_id: str


class Overflow(TypedDict):
    """The client fell too far behind and is cut off; reconnect with ``after``."""

    type: Literal["overflow"]
    seq: int


class Deleted(TypedDict):
    """The session was deleted; the stream ends."""

    type: Literal["deleted"]
    seq: int
    session_id: str


HUB_EVENTS: tuple[type, ...] = (Resync, Overflow, Deleted)

# What a builder may publish (the hub's own three are built in events.py).
AiEvent: TypeAlias = (
    RunStarted
    | Step
    | TextDelta
    | ReasoningDelta
    | ToolCallStreaming
    | ToolCallStarted
    | ToolCallFinished
    | ApprovalRequested
    | ApprovalResolved
    | ApprovalExpired
    | AutoApproved
    | PlanItemQueued
    | PlanApplied
    | PlanDiscarded
    | UsageReport
    | Compaction
    | StepLimit
    | AnswerCut
    | Todos
    | Suggestion
    | Rules
    | Error
    | Finish
)
# A tool's events (ToolContext.emit).
ToolEvent: TypeAlias = Todos | Suggestion
RUN_EVENTS: tuple[type, ...] = get_args(AiEvent)
