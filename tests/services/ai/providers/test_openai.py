"""The OpenAI-compatible adapter: request mapping and the quirks of servers that copy the API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest

from terax_jupyter.exceptions import ModelNotFound, ProviderError, StreamCut
from terax_jupyter.services.ai.providers.base import (
    ChatRequest,
    Finished,
    Message,
    ProviderConfig,
    ReasoningDelta,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    Usage,
)
from terax_jupyter.services.ai.providers.openai import OpenAIProvider, wire_id
from terax_jupyter.testing import model_stub as turns

from .conftest import READ_FILE, ask, collect, collect_into, text_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.services.ai.providers.base import Provider, StreamEvent
    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import Sleeps

CONVERSATION = [
    Message("system", "Be brief."),
    Message("user", "What is in app.py?"),
    Message(
        "assistant",
        "",
        tool_calls=[ToolCall("call_1", "read_file", {"path": "app.py"})],
        reasoning="I should read it.",
    ),
    Message("tool", "print('hi')", tool_call_id="call_1", name="read_file"),
    Message("assistant", "It prints hi."),
    Message("user", "Thanks"),
]


# Our id of the call as every server takes it (Mistral wants nine letters and digits).
WIRE_ID = wire_id("call_1")


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def payload_of(base_url: str, request: ChatRequest) -> dict[str, Any]:
    config = ProviderConfig("x", "X", "openai", base_url)
    return OpenAIProvider(config, httpx.AsyncClient()).payload(request)


def test_messages_and_tools_are_mapped() -> None:
    request = ChatRequest("m", CONVERSATION, tools=[READ_FILE], temperature=0.2)
    body = payload_of("http://127.0.0.1:1/v1", request)
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is in app.py?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": WIRE_ID,
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "app.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": WIRE_ID, "content": "print('hi')"},
        {"role": "assistant", "content": "It prints hi."},
        {"role": "user", "content": "Thanks"},
    ]
    assert body["tools"][0]["function"]["name"] == "read_file"
    assert body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.2
    assert "max_tokens" not in body
    assert "max_completion_tokens" not in body


def test_the_output_limit_uses_the_name_the_server_knows() -> None:
    request = ChatRequest("m", [Message("user", "hi")], max_output_tokens=500)
    assert payload_of("https://api.openai.com/v1", request)["max_completion_tokens"] == 500
    local = payload_of("http://127.0.0.1:11434/v1", request)
    assert local["max_tokens"] == 500
    assert "max_completion_tokens" not in local
    assert "tools" not in local


async def test_the_conversation_reaches_the_server(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script([turns.text("ok")])
    await collect(connect(), ChatRequest("stub-model", CONVERSATION))
    body = stub.requests[0].body
    assert [m["role"] for m in body["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    # Reasoning goes back to DeepSeek only (test_recorded_streams); Mistral refuses it.
    assert "reasoning_content" not in str(body)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_fields_of_each_server(
    field: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script(
        [
            turns.raw(
                [
                    chunk({field: "thinking"}),
                    chunk({"content": "done"}, "stop"),
                    "data: [DONE]\n\n",
                ]
            )
        ]
    )
    events = await collect(connect())
    assert events[0] == ReasoningDelta("thinking")
    assert text_of(events) == "done"


async def test_calls_without_index_or_id_and_a_stop_finish(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    """Ollama and Gemini send whole calls, sometimes with no index or id, then "stop"."""
    calls = [
        {"function": {"name": "read_file", "arguments": '{"path": "a"}'}},
        {"id": "g2", "function": {"name": "grep", "arguments": {"pattern": "x"}}},
    ]
    stub.script(
        [
            turns.raw(
                [
                    chunk({"tool_calls": calls}),
                    chunk({}, "stop"),
                    {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}},
                    "data: [DONE]\n\n",
                ]
            )
        ]
    )
    events = await collect(connect())
    ready = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.name, c.arguments) for c in ready] == [
        ("read_file", {"path": "a"}),
        ("grep", {"pattern": "x"}),
    ]
    assert ready[0].id.startswith("call_")
    assert ready[1].id == "g2"
    # The call without an id is announced once its id is made up, at the end.
    started = {e.id: events.index(e) for e in events if isinstance(e, ToolCallStarted)}
    assert set(started) == {c.id for c in ready}
    for call in ready:
        assert started[call.id] < next(
            i for i, e in enumerate(events) if isinstance(e, ToolCallReady) and e.call is call
        )
    assert Usage(5, 2, 0) in events
    assert events[-1] == Finished("tool_calls")


async def test_interleaved_fragments_are_joined_by_index(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    def fragment(index: int, arguments: str, **start: str) -> dict[str, Any]:
        call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
        if start:
            call["id"] = start["id"]
            call["function"]["name"] = start["name"]
        return chunk({"tool_calls": [call]})

    stub.script(
        [
            turns.raw(
                [
                    fragment(0, "", id="a", name="one"),
                    fragment(1, '{"n"', id="b", name="two"),
                    fragment(0, '{"n": '),
                    fragment(1, ": 2}"),
                    fragment(0, "1}"),
                    chunk({}, "tool_calls"),
                    "data: [DONE]\n\n",
                ]
            )
        ]
    )
    ready = [e.call for e in await collect(connect()) if isinstance(e, ToolCallReady)]
    assert [(c.id, c.arguments) for c in ready] == [("a", {"n": 1}), ("b", {"n": 2})]


async def test_a_clean_end_after_the_finish_reason_is_complete(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script([turns.raw([chunk({"content": "ok"}), chunk({}, "stop")])])
    events = await collect(connect())
    assert events[-1] == Finished("stop")


async def test_mistrals_model_length_is_a_cut_by_the_limit(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    # Mistral ends an answer its context window cut with "model_length": the run must stop
    # on it as on "length" (a cut tool call is not run), not take it for a finish.
    stub.script([turns.raw([chunk({"content": "partial"}), chunk({}, "model_length")])])
    events = await collect(connect())
    assert events[-1] == Finished("length")


async def test_a_clean_end_before_the_finish_is_a_stream_cut(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script([turns.raw([chunk({"content": "half an ans"})])])
    with pytest.raises(StreamCut):
        await collect(connect())


async def test_an_error_chunk_after_output_is_not_retried(
    stub: ModelStub, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    stub.script(
        [
            turns.raw(
                [
                    chunk({"content": "partial"}),
                    {"error": {"message": "Provider returned error", "code": 502}},
                ]
            ),
            turns.text("unused"),
        ]
    )
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as caught:
        await collect_into(seen, connect(), ask())
    assert text_of(seen) == "partial"
    assert "Provider returned error" in caught.value.message
    assert sleeps.delays == []
    assert len(stub.requests) == 1


async def test_an_event_that_is_not_json(stub: ModelStub, connect: Callable[..., Provider]) -> None:
    stub.script([turns.raw(["data: {not json\n\n"])])
    with pytest.raises(ProviderError) as caught:
        await collect(connect())
    assert caught.value.reason == "bad_response"


async def test_answers_that_are_not_streams(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script(
        [
            turns.error(200, body={"error": "model 'stub-model' not found"}),
            turns.error(200, body="<html>a login page</html>"),
        ]
    )
    with pytest.raises(ModelNotFound):
        await collect(connect())
    with pytest.raises(ProviderError) as caught:
        await collect(connect())
    assert caught.value.reason == "bad_response"
    assert "event stream" in caught.value.message


async def test_a_redirect_is_not_followed(
    stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script([turns.error(307, body="", headers={"location": "https://elsewhere.test/v1"})])
    with pytest.raises(ProviderError) as caught:
        await collect(connect())
    assert caught.value.reason == "provider_redirect"
    assert "https://elsewhere.test/v1" in caught.value.message
    assert len(stub.requests) == 1
