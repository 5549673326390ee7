"""Keep a conversation inside the model's context window, oldest and least useful first.

Before each model call the runtime estimates the tokens of what it would send. Over the
budget, it (1) leaves out the images of old tool results, (2) replaces file reads that a
later read or edit of the same file superseded, (3) elides old tool results, oldest first,
keeping the recent turns whole, and (4) as a last resort drops the oldest turns (a tool-call
message goes together with its results). The stored conversation is never changed:
compaction shapes only what is sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from terax_jupyter.notebook_view.images import estimated_tokens
from terax_jupyter.services.ai.providers.base import Message

if TYPE_CHECKING:
    from collections.abc import Sequence

    from terax_jupyter.services.ai.providers.base import ToolSpec
    from terax_jupyter.services.ai.wire import CompactionCounts

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
KEEP_RECENT_MESSAGES = 8
EXCERPT_CHARS = 2000
READ_TOOLS = frozenset({"read_file"})
EDIT_TOOLS = frozenset({"read_file", "write_file", "edit", "multi_edit"})


@dataclass
class CompactionReport:
    tokens_before: int
    tokens_after: int
    superseded_reads: int = 0
    elided_results: int = 0
    dropped_messages: int = 0
    dropped_images: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(
            self.superseded_reads
            or self.elided_results
            or self.dropped_messages
            or self.dropped_images
        )

    def to_json(self) -> CompactionCounts:
        return {
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "superseded_reads": self.superseded_reads,
            "elided_results": self.elided_results,
            "dropped_messages": self.dropped_messages,
            "dropped_images": self.dropped_images,
        }


def estimate_tokens(messages: list[Message], tools: Sequence[ToolSpec] = ()) -> int:
    """A deliberately simple estimate (4 characters a token): providers differ, and the
    budget keeps a margin for it."""
    chars = images = 0
    for message in messages:
        chars += len(message.content) + len(message.reasoning)
        for call in message.tool_calls:
            chars += len(call.name) + len(json.dumps(call.arguments))
        images += sum(estimated_tokens(image.width, image.height) for image in message.images)
    for tool in tools:
        chars += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return chars // CHARS_PER_TOKEN + MESSAGE_OVERHEAD * len(messages) + images


def compact(
    messages: list[Message], *, budget: int, tools: Sequence[ToolSpec] = ()
) -> tuple[list[Message], CompactionReport]:
    """``messages`` shaped to fit ``budget`` tokens (system message first, if any)."""
    before = estimate_tokens(messages, tools)
    report = CompactionReport(before, before)
    if before <= budget:
        return messages, report
    result = list(messages)
    calls = _calls_by_id(result)
    _drop_old_images(result, report, budget, tools)
    if estimate_tokens(result, tools) > budget:
        _supersede_reads(result, calls, report)
    if estimate_tokens(result, tools) > budget:
        _elide_old_results(result, calls, report, budget, tools)
    if estimate_tokens(result, tools) > budget:
        result = _drop_oldest_turns(result, report, budget, tools)
    if estimate_tokens(result, tools) > budget:
        _shorten_recent_results(result, report, budget, tools)
    report.tokens_after = estimate_tokens(result, tools)
    return result, report


def _calls_by_id(messages: list[Message]) -> dict[str, tuple[str, dict[str, object]]]:
    calls = {}
    for message in messages:
        for call in message.tool_calls:
            calls[call.id] = (call.name, call.arguments)
    return calls


def _path_of(arguments: dict[str, object]) -> str | None:
    path = arguments.get("path")
    return path.strip().lstrip("./") if isinstance(path, str) else None


def _drop_old_images(
    messages: list[Message], report: CompactionReport, budget: int, tools: Sequence[ToolSpec]
) -> None:
    """Images of all but the recent turns' results, oldest first, until the rest fits;
    their text still describes them."""
    recent_start = max(0, len(messages) - KEEP_RECENT_MESSAGES)
    for index in range(recent_start):
        message = messages[index]
        if not message.images:
            continue
        count = len(message.images)
        messages[index] = replace(
            message,
            images=[],
            content=message.content
            + f"\n[{count} image{'s' if count > 1 else ''} of this result left out to save "
            "context; call the tool again to see them.]",
        )
        report.dropped_images += count
        if estimate_tokens(messages, tools) <= budget:
            return


def _supersede_reads(
    messages: list[Message],
    calls: dict[str, tuple[str, dict[str, object]]],
    report: CompactionReport,
) -> None:
    seen_later: set[str] = set()
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role != "tool" or message.tool_call_id not in calls:
            continue
        name, arguments = calls[message.tool_call_id]
        path = _path_of(arguments)
        if path is None or name not in EDIT_TOOLS:
            continue
        if name in READ_TOOLS and path in seen_later and not message.is_error:
            messages[index] = replace(
                message,
                content=f"[Superseded: {path} was read again or edited later; see below.]",
            )
            report.superseded_reads += 1
        seen_later.add(path)


def _elide_old_results(
    messages: list[Message],
    calls: dict[str, tuple[str, dict[str, object]]],
    report: CompactionReport,
    budget: int,
    tools: Sequence[ToolSpec],
) -> None:
    recent_start = max(0, len(messages) - KEEP_RECENT_MESSAGES)
    for index in range(recent_start):
        message = messages[index]
        if message.role != "tool" or len(message.content) < 200:
            continue
        name = calls.get(message.tool_call_id or "", ("tool", {}))[0]
        messages[index] = replace(
            message,
            content=f"[Elided to save context: {len(message.content)} characters of {name} "
            "output. Call the tool again if you need it.]",
        )
        report.elided_results += 1
        if estimate_tokens(messages, tools) <= budget:
            return


def _shorten_recent_results(
    messages: list[Message], report: CompactionReport, budget: int, tools: Sequence[ToolSpec]
) -> None:
    """Last resort: keep the head and tail of the current turn's big tool results."""
    for index, message in enumerate(messages):
        if message.role != "tool" or len(message.content) <= 2 * EXCERPT_CHARS:
            continue
        content = message.content
        elided = len(content) - 2 * EXCERPT_CHARS
        messages[index] = replace(
            message,
            content=f"{content[:EXCERPT_CHARS]}\n[... {elided} characters elided to fit the "
            f"context window ...]\n{content[-EXCERPT_CHARS:]}",
        )
        report.elided_results += 1
        if estimate_tokens(messages, tools) <= budget:
            return


def _drop_oldest_turns(
    messages: list[Message], report: CompactionReport, budget: int, tools: Sequence[ToolSpec]
) -> list[Message]:
    """Drop whole groups (a message with the tool results that answer it) from the front,
    never the last user message or anything after it."""
    head = [messages[0]] if messages and messages[0].role == "system" else []
    body = messages[len(head) :]
    starts = [i for i, message in enumerate(body) if message.role != "tool"]
    last_user = max((i for i, m in enumerate(body) if m.role == "user"), default=0)
    keep_from = 0
    for start in starts:
        if start > last_user or estimate_tokens(head + body[keep_from:], tools) <= budget:
            break
        keep_from = next((s for s in starts if s > start), len(body))
        keep_from = min(keep_from, last_user)
    if keep_from == 0:
        return messages
    report.dropped_messages = keep_from
    note = f"[{keep_from} earlier messages were omitted to fit the context window.]"
    remaining = body[keep_from:]
    if remaining and remaining[0].role == "user":
        return [
            *head,
            replace(remaining[0], content=f"{note}\n\n{remaining[0].content}"),
            *remaining[1:],
        ]
    return [*head, Message(role="user", content=note), *remaining]
