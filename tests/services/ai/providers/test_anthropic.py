"""The Anthropic Messages adapter: request mapping and the event stream's edges."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from terax_jupyter.exceptions import ProviderError, StreamCut
from terax_jupyter.services.ai.providers.anthropic import AnthropicProvider
from terax_jupyter.services.ai.providers.base import (
    ChatRequest,
    Finished,
    Message,
    ProviderConfig,
    ToolCall,
    ToolCallReady,
)
from terax_jupyter.testing import model_stub as turns

from .conftest import READ_FILE, ask, collect, collect_into, text_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.services.ai.providers.base import Provider, StreamEvent
    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import Sleeps


def payload_of(request: ChatRequest) -> dict[str, Any]:
    config = ProviderConfig("anthropic", "Anthropic", "anthropic", "https://api.anthropic.com/v1")
    return AnthropicProvider(config, httpx.AsyncClient()).payload(request)


def event(name: str, **data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"


START = event("message_start", message={"usage": {"input_tokens": 3, "output_tokens": 1}})


def test_system_tools_and_tool_results_are_mapped() -> None:
    messages = [
        Message("system", "Be brief."),
        Message("system", "Use tools."),
        Message("user", "Read both files."),
        Message(
            "assistant",
            "Reading.",
            tool_calls=[
                ToolCall("toolu_1", "read_file", {"path": "a"}),
                ToolCall("toolu_2", "read_file", {"path": "b"}),
            ],
        ),
        Message("tool", "A", tool_call_id="toolu_1", name="read_file"),
        Message("tool", "no such file", tool_call_id="toolu_2", name="read_file", is_error=True),
        Message("user", "And?"),
        Message("assistant", ""),  # an empty turn is left out, not sent as an empty block
        Message("user", "Well?"),
    ]
    body = payload_of(ChatRequest("claude", messages, tools=[READ_FILE]))
    assert body["system"] == "Be brief.\n\nUse tools."
    assert body["max_tokens"] == 8192
    assert body["tools"] == [
        {"name": "read_file", "description": "Read a file", "input_schema": READ_FILE.parameters}
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Read both files."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}},
                {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "A",
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "no such file",
                    "is_error": True,
                },
                {"type": "text", "text": "And?"},
                {"type": "text", "text": "Well?"},
            ],
        },
    ]


def test_the_output_limit_comes_from_the_request() -> None:
    body = payload_of(ChatRequest("claude", [Message("user", "hi")], max_output_tokens=100))
    assert body["max_tokens"] == 100
    assert "system" not in body
    assert "tools" not in body


async def test_an_error_event_after_output_is_raised_not_retried(
    stub: ModelStub, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    stub.script(
        [
            turns.raw(
                [
                    START,
                    event("content_block_start", index=0, content_block={"type": "text"}),
                    event(
                        "content_block_delta", index=0, delta={"type": "text_delta", "text": "hal"}
                    ),
                    event("error", error={"type": "overloaded_error", "message": "Overloaded"}),
                ]
            ),
            turns.text("unused"),
        ]
    )
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as caught:
        await collect_into(seen, connect("anthropic"), ask())
    assert text_of(seen) == "hal"
    assert "Overloaded" in caught.value.message
    assert sleeps.delays == []


async def test_an_invalid_request_error_event_is_not_retried(
    stub: ModelStub, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    error = {"type": "invalid_request_error", "message": "bad tool schema"}
    stub.script([turns.raw([START, event("error", error=error)]), turns.text("unused")])
    with pytest.raises(ProviderError) as caught:
        await collect(connect("anthropic"))
    assert caught.value.message == "Stub stopped the answer with an error: bad tool schema"
    assert sleeps.delays == []


async def test_tool_input_given_whole_at_the_start(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    block = {"type": "tool_use", "id": "toolu_9", "name": "grep", "input": {"pattern": "x"}}
    stub.script(
        [
            turns.raw(
                [
                    START,
                    event("content_block_start", index=0, content_block=block),
                    event("content_block_stop", index=0),
                    event("message_delta", delta={"stop_reason": "tool_use"}, usage={}),
                    event("message_stop"),
                ]
            )
        ]
    )
    events = await collect(connect("anthropic"))
    ready = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert ready == [ToolCall("toolu_9", "grep", {"pattern": "x"})]
    assert events[-1] == Finished("tool_calls")


async def test_a_stream_without_message_stop_is_cut(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script([turns.raw([START, event("message_delta", delta={"stop_reason": "end_turn"})])])
    with pytest.raises(StreamCut):
        await collect(connect("anthropic"))


async def test_a_full_context_window_is_a_cut_by_the_limit(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script(
        [
            turns.raw(
                [
                    START,
                    event("content_block_start", index=0, content_block={"type": "text"}),
                    event(
                        "content_block_delta", index=0, delta={"type": "text_delta", "text": "pa"}
                    ),
                    event("content_block_stop", index=0),
                    event(
                        "message_delta",
                        delta={"stop_reason": "model_context_window_exceeded"},
                        usage={},
                    ),
                    event("message_stop"),
                ]
            )
        ]
    )
    events = await collect(connect("anthropic"))
    assert events[-1] == Finished("length")


async def test_unknown_events_are_passed_over(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script(
        [
            turns.raw(
                [
                    START,
                    event("something_new", detail=1),
                    event("content_block_start", index=0, content_block={"type": "text"}),
                    event(
                        "content_block_delta", index=0, delta={"type": "text_delta", "text": "ok"}
                    ),
                    event("content_block_stop", index=0),
                    event("message_delta", delta={"stop_reason": "refusal"}, usage={}),
                    event("message_stop"),
                ]
            )
        ]
    )
    events = await collect(connect("anthropic"))
    assert text_of(events) == "ok"
    assert events[-1] == Finished("content_filter")
