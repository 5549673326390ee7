"""Both wire formats against the real model stub: streaming, tool calls, usage, every error."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import (
    AccessDenied,
    ModelNotFound,
    ProviderAuthFailed,
    ProviderError,
    ProviderTimeout,
    ProviderUnreachable,
    RateLimited,
    StreamCut,
)
from terax_jupyter.services.ai.providers.base import (
    Finished,
    ReasoningDelta,
    TextDelta,
    ToolCallReady,
    ToolCallStarted,
    Usage,
)
from terax_jupyter.testing import model_stub as turns

from .conftest import KEY, ask, collect, collect_into, text_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.services.ai.providers.base import Provider, StreamEvent
    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import Sleeps

KINDS = ["openai", "anthropic"]
pytestmark = pytest.mark.parametrize("kind", KINDS)


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- answers ---------------------------------------------------------------------------------


async def test_text_streams_in_pieces(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    answer = "Hello from the stub; this answer arrives in several pieces."
    stub.script([turns.text(answer, chunk=7)])
    events = await collect(connect(kind))
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == -(-len(answer) // 7)
    assert text_of(events) == answer
    assert isinstance(events[-1], Finished)
    assert events[-1].reason == "stop"
    assert isinstance(events[-2], Usage)
    # Auth goes the format's way, and only the key's own header carries it.
    (received,) = stub.requests
    if kind == "openai":
        assert received.path == "/v1/chat/completions"
        assert received.headers["authorization"] == f"Bearer {KEY}"
        assert "x-api-key" not in received.headers
    else:
        assert received.path == "/v1/messages"
        assert received.headers["x-api-key"] == KEY
        assert received.headers["anthropic-version"] == "2023-06-01"
        assert "authorization" not in received.headers
    assert received.body["stream"] is True


async def test_no_key_sends_no_auth_header(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script([turns.text("ok")])
    assert text_of(await collect(connect(kind, key=None))) == "ok"
    headers = stub.requests[0].headers
    assert "authorization" not in headers
    assert "x-api-key" not in headers


async def test_extra_headers_from_the_config_are_sent(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script([turns.text("ok")])
    await collect(connect(kind, headers=(("X-Title", "Terax"),)))
    assert stub.requests[0].headers["x-title"] == "Terax"


async def test_reasoning_comes_before_the_answer(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    thought = "The user greets me; a greeting back is enough."
    stub.script([turns.reasoning(thought, "Hi!", chunk=5)])
    events = await collect(connect(kind))
    reasoning = [e for e in events if isinstance(e, ReasoningDelta)]
    assert "".join(e.text for e in reasoning) == thought
    assert len(reasoning) > 1
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert events.index(reasoning[-1]) < first_text
    assert text_of(events) == "Hi!"


async def test_parallel_tool_calls_with_fragmented_arguments(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    calls = [
        ("read_file", {"path": "src/app.py", "limit": 20}, "call_a"),
        ("grep", {"pattern": "def main\\(", "glob": "*.py", "nested": {"deep": [1, 2]}}, "call_b"),
    ]
    stub.script([turns.tool_calls(calls, text="Let me look.", chunk=3)])
    events = await collect(connect(kind))
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [(e.id, e.name, e.index) for e in started] == [
        ("call_a", "read_file", 0),
        ("call_b", "grep", 1),
    ]
    assert [(e.call.id, e.call.name, e.call.arguments) for e in ready] == [
        (c[2], c[0], c[1]) for c in calls
    ]
    assert all(e.call.arguments_error is None for e in ready)
    for announce, done in zip(started, ready, strict=True):
        assert events.index(announce) < events.index(done)
    assert events[-1] == Finished("tool_calls")
    assert max(events.index(e) for e in ready) < len(events) - 1
    assert text_of(events) == "Let me look."
    body = stub.requests[0].body
    if kind == "openai":
        assert body["tools"] == [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a file",
                    "parameters": body["tools"][0]["function"]["parameters"],
                },
            }
        ]
    else:
        assert [t["name"] for t in body["tools"]] == ["read_file"]
        assert body["tools"][0]["input_schema"]["required"] == ["path"]


async def test_a_call_without_arguments_gets_an_empty_object(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script([turns.tool_call("list_todos", "")])
    ready = [e for e in await collect(connect(kind)) if isinstance(e, ToolCallReady)]
    assert ready[0].call.arguments == {}
    assert ready[0].call.arguments_error is None


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"path": "a.py", "old_string": ', "not valid JSON"),
        ('["a.py"]', "must be a JSON object"),
        ('"a.py"', "must be a JSON object"),
    ],
)
async def test_malformed_arguments_become_an_arguments_error(
    kind: str, stub: ModelStub, connect: Callable[..., Provider], arguments: str, problem: str
) -> None:
    stub.script([turns.tool_call("edit", arguments, "call_x", chunk=4)])
    events = await collect(connect(kind))
    (ready,) = [e for e in events if isinstance(e, ToolCallReady)]
    assert ready.call.id == "call_x"
    assert ready.call.arguments == {}
    assert ready.call.arguments_error is not None
    assert problem in ready.call.arguments_error
    assert "edit" in ready.call.arguments_error
    assert events[-1] == Finished("tool_calls")


async def test_usage_numbers(kind: str, stub: ModelStub, connect: Callable[..., Provider]) -> None:
    stub.script([turns.text("ok", input_tokens=1200, output_tokens=34, cached_tokens=1000)])
    events = await collect(connect(kind))
    assert [e for e in events if isinstance(e, Usage)] == [Usage(1200, 34, 1000)]


async def test_length_finish(kind: str, stub: ModelStub, connect: Callable[..., Provider]) -> None:
    stub.script([turns.text("cut by max tok", finish="length")])
    assert (await collect(connect(kind)))[-1] == Finished("length")


async def test_an_empty_script_echoes_the_last_user_message(
    kind: str, connect: Callable[..., Provider]
) -> None:
    provider = connect(kind)
    assert text_of(await collect(provider, ask("ping 1"))) == "echo: ping 1"
    assert text_of(await collect(provider, ask("ping 2"))) == "echo: ping 2"


async def test_models_are_listed(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.models = ["zeta", "alpha"]
    models = await connect(kind).list_models()
    assert [m["id"] for m in models] == ["alpha", "zeta"]
    assert stub.requests[0].path.startswith("/v1/models")


# --- errors ----------------------------------------------------------------------------------


async def test_a_refused_key_says_which_setting_to_check(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.require_key = "sk-the-right-one-0123456789"
    provider = connect(kind)
    with pytest.raises(ProviderAuthFailed) as caught:
        await collect(provider)
    assert caught.value.reason == "bad_key"
    assert caught.value.message.startswith("The Stub key was refused (401). Check STUB_API_KEY")
    assert KEY not in str(caught.value)
    with pytest.raises(ProviderAuthFailed):
        await provider.list_models()
    assert len(stub.requests) == 2  # a refused key is not retried


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, None),
        (400, {"error": {"message": "The model `stub-model` does not exist", "code": None}}),
        (404, {"error": "model 'stub-model' not found, try pulling it first"}),
    ],
)
async def test_an_unknown_model(
    kind: str, stub: ModelStub, connect: Callable[..., Provider], status: int, body: object
) -> None:
    stub.script([turns.error(status, body=body)])
    with pytest.raises(ModelNotFound) as caught:
        await collect(connect(kind))
    assert caught.value.reason == "model_not_found"
    assert "Stub has no model 'stub-model'" in caught.value.message
    assert len(stub.requests) == 1


async def test_429_waits_as_asked_then_succeeds(
    kind: str, stub: ModelStub, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    stub.script(
        [
            turns.error(429, headers={"retry-after": "1"}),
            turns.error(429, headers={"retry-after-ms": "250"}),
            turns.text("finally"),
        ]
    )
    events = await collect(connect(kind))
    assert text_of(events) == "finally"
    assert sleeps.delays == [1.0, 0.25]
    assert len(stub.requests) == 3


async def test_overloaded_answers_are_retried_with_backoff(
    kind: str, stub: ModelStub, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    stub.script([turns.error(529), turns.error(503), turns.text("ok")])
    assert text_of(await collect(connect(kind))) == "ok"
    assert len(sleeps.delays) == 2
    assert 0.375 <= sleeps.delays[0] <= 0.625
    assert 0.75 <= sleeps.delays[1] <= 1.25


async def test_a_retry_after_beyond_the_limit_fails_at_once(
    kind: str, stub: ModelStub, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    stub.script([turns.error(429, headers={"retry-after": "120"}), turns.text("never")])
    with pytest.raises(RateLimited) as caught:
        await collect(connect(kind))
    assert caught.value.retry_after == 120
    assert "120 s" in caught.value.message
    assert sleeps.delays == []
    assert len(stub.requests) == 1


async def test_retries_are_bounded(
    kind: str, stub: ModelStub, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    stub.script([turns.error(429)] * 5)
    with pytest.raises(RateLimited) as caught:
        await collect(connect(kind))
    assert caught.value.reason == "rate_limited"
    assert caught.value.retry_after is None
    assert len(stub.requests) == 4  # the first try and three retries
    assert len(sleeps.delays) == 3
    assert sleeps.delays == sorted(sleeps.delays)
    assert stub.pending == 1


async def test_other_errors_carry_the_providers_words_without_the_key(
    kind: str, stub: ModelStub, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    body = {"error": {"message": f"temperature is out of range (request key {KEY})"}}
    stub.script([turns.error(400, body=body)])
    with pytest.raises(ProviderError) as caught:
        await collect(connect(kind))
    assert type(caught.value) is ProviderError
    assert caught.value.message.startswith("Stub answered 400: temperature is out of range")
    assert KEY not in caught.value.message
    assert "[REDACTED]" in caught.value.message
    assert sleeps.delays == []


async def test_an_error_event_before_any_output_is_retried(
    kind: str, stub: ModelStub, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    stub.script([turns.error_event("Overloaded"), turns.text("second try")])
    assert text_of(await collect(connect(kind))) == "second try"
    assert len(sleeps.delays) == 1
    assert len(stub.requests) == 2


async def test_an_error_event_that_persists_is_raised(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script([turns.error_event("Overloaded")] * 4)
    with pytest.raises(ProviderError) as caught:
        await collect(connect(kind))
    assert caught.value.reason == "provider_unavailable"
    assert "Overloaded" in caught.value.message


async def test_nothing_listening_names_the_local_product(
    kind: str, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(ProviderUnreachable) as caught:
        await collect(connect(kind, base_url=url, product="Ollama"))
    assert (
        caught.value.message == f"Nothing answers at http://127.0.0.1:{port} — is Ollama running?"
    )
    with pytest.raises(ProviderUnreachable) as caught:
        await connect(kind, base_url=url).list_models()
    assert caught.value.message == (
        f"Nothing answers at http://127.0.0.1:{port} — is the server running?"
    )
    assert sleeps.delays == []


async def test_a_provider_not_marked_local_cannot_reach_loopback(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    with pytest.raises(AccessDenied) as caught:
        await collect(connect(kind, local=False))
    assert caught.value.reason == "address_denied"
    assert stub.requests == []


async def test_a_slow_answer_times_out(
    kind: str, stub: ModelStub, connect: Callable[..., Provider]
) -> None:
    stub.script([turns.slow(turns.text("slowly, slowly", chunk=2), 2.0)])
    with pytest.raises(ProviderTimeout) as caught:
        await collect(connect(kind, timeout=0.3))
    assert caught.value.reason == "provider_timeout"
    assert "took too long" in caught.value.message


async def test_a_cut_stream_is_a_stream_cut_after_what_arrived(
    kind: str, stub: ModelStub, connect: Callable[..., Provider], sleeps: Sleeps
) -> None:
    stub.script([turns.cut(turns.text("x" * 100, chunk=5), 6), turns.text("unused")])
    seen: list[StreamEvent] = []
    with pytest.raises(StreamCut) as caught:
        await collect_into(seen, connect(kind), ask())
    assert caught.value.message.startswith("The answer from Stub stopped before its end")
    assert text_of(seen).startswith("xxxxx")  # what came before the cut was streamed
    assert not any(isinstance(e, Finished) for e in seen)
    assert len(stub.requests) == 1  # a half answer is never repeated
    assert sleeps.delays == []
