"""Every provider in the catalog, from its recorded stream to its second request.

The model stub on 127.0.0.1 plays each provider's recorded answers (``recorded.py``) and
checks the second request the way that provider does (its stub profile): the real adapter
reads a tool call, the real store keeps the conversation (with the runtime's own call ids,
as the runner stores it), and the adapter sends it back after the tool result. A provider
refusing that request fails the test with the provider's own words.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from terax_jupyter.exceptions import ProviderError, ProviderTimeout
from terax_jupyter.security.network import OutboundPolicy, guarded_client
from terax_jupyter.services.ai.providers.anthropic import AnthropicProvider
from terax_jupyter.services.ai.providers.base import (
    ChatRequest,
    Finished,
    Message,
    ProviderConfig,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallReady,
    Usage,
)
from terax_jupyter.services.ai.providers.catalog import BUILTINS
from terax_jupyter.services.ai.providers.openai import OpenAIProvider
from terax_jupyter.services.ai.providers.retry import RetryPolicy
from terax_jupyter.services.ai.store import AiStore
from terax_jupyter.testing import model_stub as turns

from .conftest import READ_FILE, settle
from .recorded import ANSWER, ARGS, RECORDINGS, SIGNATURE, THOUGHT, Recording, comment, sse

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from terax_jupyter.services.ai.providers.base import Provider, StreamEvent
    from terax_jupyter.testing.model_stub import ModelStub

SYSTEM = Message("system", "You are terse.")
QUESTION = "What does app.py do?"
RESULT = "print('hi')\n"


@pytest.fixture
def built(jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[list[Provider]]:
    made: list[Provider] = []
    yield made
    for provider in made:
        jp_asyncio_loop.run_until_complete(provider.aclose())
    jp_asyncio_loop.run_until_complete(settle())


def provider_for(
    recording: Recording, stub: ModelStub, built: list[Provider], *, timeout: float = 5.0
) -> Provider:
    """The catalog's provider (or a custom one for vLLM and llama.cpp), moved to the stub
    as a user moves a built-in: only its address changes, not what it is."""
    if recording.provider in BUILTINS:
        config = dataclasses.replace(
            BUILTINS[recording.provider], base_url=stub.url, local=True, source="user"
        )
    else:
        label = {"vllm": "vLLM", "llamacpp": "llama.cpp"}[recording.provider]
        config = ProviderConfig(
            recording.provider, label, "openai", stub.url, local=True, product=recording.product
        )
    client = guarded_client(OutboundPolicy.build([stub.origin]), timeout=timeout)
    adapter = AnthropicProvider if config.kind == "anthropic" else OpenAIProvider
    provider = adapter(config, client, "sk-recorded-0123456789", RetryPolicy())
    built.append(provider)
    return provider


async def stream(provider: Provider, request: ChatRequest) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


def usage_of(events: list[StreamEvent]) -> tuple[int, int, int] | None:
    found = [e for e in events if isinstance(e, Usage)]
    if not found:
        return None
    return found[-1].input_tokens, found[-1].output_tokens, found[-1].cached_tokens


def stored_conversation(tmp_path: Path, assistant: Message, call: ToolCall) -> list[Message]:
    """The conversation as the runner keeps it: the runtime's own call id, every message in
    the real store, read back as the next request's history."""
    with AiStore(str(tmp_path / "ai.sqlite3")) as store:
        session_id = store.create_session(provider="p", model="m")["id"]
        store.add_message(session_id, Message("user", QUESTION))
        store.add_message(session_id, assistant)
        store.add_message(session_id, Message("tool", RESULT, tool_call_id=call.id, name=call.name))
        return store.conversation(session_id)


@pytest.mark.parametrize("name", sorted(RECORDINGS))
async def test_a_two_step_tool_conversation(
    name: str, stub: ModelStub, built: list[Provider], tmp_path: Path
) -> None:
    recording = RECORDINGS[name]
    stub.profile = recording.profile
    stub.script([turns.raw(recording.first), turns.raw(recording.second)])
    provider = provider_for(recording, stub, built)
    request = ChatRequest(recording.model, [SYSTEM, Message("user", QUESTION)], tools=[READ_FILE])

    first = await stream(provider, request)
    ready = [e.call for e in first if isinstance(e, ToolCallReady)]
    assert [(c.name, c.arguments, c.arguments_error) for c in ready] == [("read_file", ARGS, None)]
    assert first[-1] == Finished("tool_calls")
    assert usage_of(first) == recording.usage
    thought = "".join(e.text for e in first if isinstance(e, ReasoningDelta))
    assert thought == recording.reasoning
    said = "".join(e.text for e in first if isinstance(e, TextDelta))
    assert said == recording.call_text

    # The runner gives the call its own id (models' ids need not be unique) and stores it.
    call = dataclasses.replace(ready[0], id=f"call_{uuid.uuid4().hex[:24]}")
    assistant = Message("assistant", said, tool_calls=[call], reasoning=thought)
    history = stored_conversation(tmp_path, assistant, call)
    assert history[1].tool_calls[0].extra == ready[0].extra  # kept in the store as it came

    second = await stream(
        provider, ChatRequest(recording.model, [SYSTEM, *history], tools=[READ_FILE])
    )
    assert "".join(e.text for e in second if isinstance(e, TextDelta)) == ANSWER
    assert second[-1] == Finished("stop")
    assert usage_of(second) == recording.second_usage
    assert len(stub.requests) == 2

    body = stub.requests[1].body
    if recording.kind == "anthropic":
        blocks = body["messages"][1]["content"]
        assert [b["type"] for b in blocks] == ["text", "tool_use"]
        assert body["messages"][2]["content"][0]["content"] == RESULT
        return
    sent = next(m for m in body["messages"] if m["role"] == "assistant")
    result = next(m for m in body["messages"] if m["role"] == "tool")
    assert sent["tool_calls"][0]["id"] == result["tool_call_id"]
    assert result["content"] == RESULT
    assert sent["tool_calls"][0]["function"] == {
        "name": "read_file",
        "arguments": '{"path": "app.py"}',
    }
    # What goes back where the provider wants it, and nowhere else.
    if "thought_signature" in recording.quirks:
        google = sent["tool_calls"][0]["extra_content"]["google"]
        assert google == {"thought_signature": SIGNATURE}
    else:
        assert "extra_content" not in sent["tool_calls"][0]
    if "reasoning_content" in recording.quirks:
        assert sent["reasoning_content"] == THOUGHT
    else:
        assert "reasoning_content" not in sent
    assert ("stream_options" in body) == (recording.provider != "mistral")


def test_every_provider_of_the_catalog_has_a_recording() -> None:
    assert set(BUILTINS) <= set(RECORDINGS)
    assert {"vllm", "llamacpp"} <= set(RECORDINGS)


# -- what each profile refuses ------------------------------------------------------------


async def test_gemini_refuses_a_call_without_its_thought_signature(
    stub: ModelStub, built: list[Provider]
) -> None:
    """The stub's gemini profile, as Gemini: the signature of the current turn's first
    call must come back, exactly; a signature from another conversation does not do."""
    stub.profile = "gemini"
    provider = provider_for(RECORDINGS["gemini"], stub, built)
    stub.script([turns.tool_call("read_file", ARGS), turns.text("unused")])
    first = await stream(provider, ChatRequest("g", [Message("user", QUESTION)], [READ_FILE]))
    call = next(e.call for e in first if isinstance(e, ToolCallReady))
    signature = call.extra["extra_content"]["google"]["thought_signature"]
    assert signature  # scripted turns of the gemini profile are signed too

    for extra in (
        {},
        {"provider": "gemini", "extra_content": {"google": {"thought_signature": "forged"}}},
    ):
        lost = dataclasses.replace(call, extra=extra)
        history = [
            Message("user", QUESTION),
            Message("assistant", tool_calls=[lost]),
            Message("tool", RESULT, tool_call_id=lost.id, name=lost.name),
        ]
        with pytest.raises(ProviderError) as caught:
            await stream(provider, ChatRequest("g", history, [READ_FILE]))
        assert "thought_signature" in caught.value.message or "Corrupted" in caught.value.message
        assert "400" in caught.value.message


async def test_extras_go_back_only_to_the_provider_that_attached_them(
    stub: ModelStub, built: list[Provider]
) -> None:
    """A conversation moved from Gemini to Groq: Groq refuses fields it does not know, so
    Gemini's signature stays home; DeepSeek's thoughts go to DeepSeek only."""
    stub.profile = "groq"
    groq = provider_for(RECORDINGS["groq"], stub, built)
    call = ToolCall(
        "call_1",
        "read_file",
        ARGS,
        extra={"provider": "gemini", "extra_content": {"google": {"thought_signature": "s"}}},
    )
    history = [
        Message("user", QUESTION),
        Message("assistant", tool_calls=[call], reasoning=THOUGHT),
        Message("tool", RESULT, tool_call_id="call_1", name="read_file"),
    ]
    stub.script([turns.text("fine")])
    events = await stream(groq, ChatRequest("q", history, [READ_FILE]))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "fine"
    sent = stub.requests[-1].body["messages"][1]
    assert "extra_content" not in sent["tool_calls"][0]
    assert "reasoning_content" not in sent


async def test_deepseek_gets_the_thoughts_of_every_turn_that_called_a_tool(
    stub: ModelStub, built: list[Provider]
) -> None:
    stub.profile = "deepseek"
    provider = provider_for(RECORDINGS["deepseek"], stub, built)
    stub.script([turns.raw(RECORDINGS["deepseek"].first), turns.text("unused")])
    await stream(provider, ChatRequest("d", [Message("user", QUESTION)], [READ_FILE]))
    call = ToolCall("call_1", "read_file", ARGS)
    answered = Message("tool", RESULT, tool_call_id="call_1", name="read_file")
    # Without the thoughts DeepSeek answers 400, as on 424eae6 (which never sent them).
    history = [Message("user", QUESTION), Message("assistant", tool_calls=[call]), answered]
    with pytest.raises(ProviderError) as caught:
        await stream(provider, ChatRequest("d", history, [READ_FILE]))
    assert "reasoning_content" in caught.value.message
    # A turn without calls sends none (DeepSeek would ignore them; other servers refuse).
    stub.script([turns.text("done")])
    history = [
        Message("user", "hi"),
        Message("assistant", "hello", reasoning="greet"),
        Message("user", QUESTION),
        Message("assistant", tool_calls=[call], reasoning=THOUGHT),
        answered,
    ]
    await stream(provider, ChatRequest("d", history, [READ_FILE]))
    sent = stub.requests[-1].body["messages"]
    assert "reasoning_content" not in sent[1]
    assert sent[3]["reasoning_content"] == THOUGHT


async def test_mistral_takes_a_conversation_with_a_failed_step(
    stub: ModelStub, built: list[Provider]
) -> None:
    """An empty assistant message (a step that failed before it said anything) is never
    sent: Mistral answers 400 to it, for every later request of the session."""
    stub.profile = "mistral"
    provider = provider_for(RECORDINGS["mistral"], stub, built)
    stub.script([turns.text("ok")])
    history = [
        Message("user", QUESTION),
        Message("assistant", ""),
        Message("user", "Try again"),
    ]
    events = await stream(
        provider, ChatRequest("mistral-large-latest", history, max_output_tokens=64)
    )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "ok"
    body = stub.requests[-1].body
    assert [m["role"] for m in body["messages"]] == ["user", "user"]
    assert body["max_tokens"] == 64
    assert "stream_options" not in body


@pytest.mark.parametrize(
    ("profile", "body", "words"),
    [
        ("mistral", {"stream_options": {"include_usage": True}}, "extra_forbidden"),
        ("mistral", {"tool_id": "call_0123456789"}, "must be a-z, A-Z, 0-9, with a length of 9"),
        ("mistral", {"empty": True}, "either content or tool_calls"),
        ("mistral-template", {"tool_id": "3d2c5a4e-6f1b"}, "alphanumeric strings with length 9"),
        ("openai", {"unanswered": True}, "must be followed by tool messages"),
        ("groq", {"reasoning_content": "x"}, "property 'reasoning_content' is unsupported"),
    ],
)
def test_each_profile_refuses_what_its_provider_refuses(
    stub: ModelStub, profile: str, body: dict[str, Any], words: str
) -> None:
    """The stub's rules themselves, over plain HTTP: each refusal is the provider's."""
    stub.profile = profile
    call_id = body.get("tool_id", "abcDEF123")
    assistant: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    if "reasoning_content" in body:
        assistant["reasoning_content"] = body["reasoning_content"]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "hi"}, assistant]
    if not body.get("unanswered"):
        messages.append({"role": "tool", "tool_call_id": call_id, "content": "r"})
    if body.get("empty"):
        messages += [{"role": "assistant", "content": ""}, {"role": "user", "content": "again"}]
    request: dict[str, Any] = {"model": "m", "messages": messages, "stream": True}
    if "stream_options" in body:
        request["stream_options"] = body["stream_options"]
    answer = httpx.post(f"{stub.url}/chat/completions", json=request)
    assert answer.status_code in (400, 422)
    assert words in answer.text
    stub.profile = None
    stub.script([turns.text("taken")])
    assert httpx.post(f"{stub.url}/chat/completions", json=request).status_code == 200


# -- keep-alive comments and the read timeout ---------------------------------------------


@pytest.mark.parametrize("name", ["openrouter", "deepseek", "anthropic"])
async def test_keep_alives_do_not_hold_a_stalled_answer_open(
    name: str, stub: ModelStub, built: list[Provider]
) -> None:
    """read_timeout is the longest wait for the next event with data: a server that only
    says it is still there (SSE comments, Anthropic's pings) for four times that long has
    stalled. On 424eae6 each comment restarted httpx's socket timeout, and this answer,
    finished after the comments, was taken."""
    recording = RECORDINGS[name]
    keepalive = (
        sse({"type": "ping"}, "ping") if recording.kind == "anthropic" else comment("keep-alive")
    )
    head, tail = recording.first[:1], recording.first[1:]
    if recording.kind == "anthropic":
        events = [*head, *[keepalive] * 20, *tail]
    else:
        events = [*[keepalive] * 20, *recording.first]
    stub.script([turns.slow(turns.raw(events), 0.2)])
    provider = provider_for(recording, stub, built, timeout=1.0)
    with pytest.raises(ProviderTimeout) as caught:
        await stream(provider, ChatRequest(recording.model, [Message("user", QUESTION)]))
    assert caught.value.reason == "provider_timeout"
    assert "took too long (the next part of the answer)" in caught.value.message
    assert len(stub.requests) == 1  # a stall is not retried


async def test_a_steady_stream_with_keep_alives_between_events_is_read_whole(
    stub: ModelStub, built: list[Provider]
) -> None:
    """Comments between data events are fine while data keeps coming within the timeout,
    however long the whole answer takes."""
    recording = RECORDINGS["openrouter"]
    events: list[str] = []
    for event in recording.second:
        events += [comment("OPENROUTER PROCESSING"), event]
    stub.script([turns.slow(turns.raw(events), 0.1)])
    provider = provider_for(recording, stub, built, timeout=1.0)
    answer = await stream(provider, ChatRequest(recording.model, [Message("user", QUESTION)]))
    assert "".join(e.text for e in answer if isinstance(e, TextDelta)) == ANSWER
    assert answer[-1] == Finished("stop")
