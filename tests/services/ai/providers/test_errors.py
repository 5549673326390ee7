"""What each failure of a provider call becomes, and the retry policy's decisions."""

from __future__ import annotations

import email.utils
import time
from typing import TYPE_CHECKING, Any

import httpx
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
from terax_jupyter.security.redact import Redactor
from terax_jupyter.services.ai.providers.base import ProviderConfig
from terax_jupyter.services.ai.providers.catalog import BUILTINS
from terax_jupyter.services.ai.providers.errors import (
    map_error,
    provider_message,
    redactor_for,
)
from terax_jupyter.services.ai.providers.retry import (
    RetryableFailure,
    RetryPolicy,
    retry_after,
)

from .conftest import KEY, Sleeps

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

CUSTOM_LOCAL = ProviderConfig("vllm", "vLLM box", "openai", "http://10.0.0.5:8000/v1", local=True)


def answer(status: int, body: Any = None, headers: dict[str, str] | None = None) -> httpx.Response:
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    if isinstance(body, str):
        return httpx.Response(status, text=body, headers=headers, request=request)
    return httpx.Response(status, json=body, headers=headers, request=request)


def mapped(response: httpx.Response, *, model: str | None = "gpt-x", **options: Any) -> Any:
    return map_error(BUILTINS["openai"], response, body=response.text, model=model, **options)


# --- network failures ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        ("ollama", "Nothing answers at http://127.0.0.1:11434 — is Ollama running?"),
        ("lmstudio", "Nothing answers at http://127.0.0.1:1234 — is LM Studio running?"),
        ("mlx", "Nothing answers at http://127.0.0.1:8080 — is the MLX server running?"),
    ],
)
def test_a_local_server_that_does_not_answer(provider: str, message: str) -> None:
    error = map_error(BUILTINS[provider], httpx.ConnectError("[Errno 111] Connection refused"))
    assert isinstance(error, ProviderUnreachable)
    assert error.message == message
    assert error.provider == provider


def test_unreachable_custom_and_hosted_providers() -> None:
    local = map_error(CUSTOM_LOCAL, httpx.ConnectError("refused"))
    assert local.message == "Nothing answers at http://10.0.0.5:8000 — is the server running?"
    hosted = map_error(BUILTINS["groq"], httpx.ConnectError("cannot resolve api.groq.com"))
    assert isinstance(hosted, ProviderUnreachable)
    assert hosted.message.startswith("Groq cannot be reached at https://api.groq.com:")
    assert "network connection" in hosted.message


@pytest.mark.parametrize(
    ("failure", "started", "kind", "words"),
    [
        (httpx.ConnectTimeout("t"), False, ProviderTimeout, "connecting to https://api.openai.com"),
        (httpx.ReadTimeout("t"), False, ProviderTimeout, "the answer to begin"),
        (httpx.ReadTimeout("t"), True, ProviderTimeout, "the next part of the answer"),
        (httpx.WriteTimeout("t"), False, ProviderTimeout, "sending the request"),
        (httpx.RemoteProtocolError("incomplete chunked read"), True, StreamCut, "stopped before"),
        (httpx.ReadError("reset"), True, StreamCut, "stopped before its end"),
        (httpx.RemoteProtocolError("disconnected"), False, StreamCut, "without answering"),
        (httpx.DecodingError("bad gzip"), True, ProviderError, "DecodingError"),
    ],
)
def test_exceptions_of_a_call(
    failure: Exception, started: bool, kind: type[Exception], words: str
) -> None:
    error = map_error(BUILTINS["openai"], failure, started=started)
    assert type(error) is kind
    assert words in error.message


def test_refusals_of_the_guarded_network_pass_unchanged() -> None:
    refusal = AccessDenied("127.0.0.1 is on this machine", reason="address_denied")
    assert map_error(BUILTINS["openai"], refusal) is refusal


# --- error answers ---------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key(status: int) -> None:
    error = mapped(answer(status, {"error": {"message": f"Incorrect API key {KEY}"}}))
    assert isinstance(error, ProviderAuthFailed)
    assert error.message.startswith(f"The OpenAI key was refused ({status}). Check OPENAI_API_KEY")
    assert KEY not in error.message


def test_a_keyless_provider_that_wants_a_key() -> None:
    error = map_error(CUSTOM_LOCAL, answer(401, {}), model="m")
    assert isinstance(error, ProviderAuthFailed)
    assert "it wants a key" in error.message


def test_model_not_found_in_the_shapes_providers_use() -> None:
    openai = {"error": {"message": "The model `gpt-x` does not exist", "code": "model_not_found"}}
    assert isinstance(mapped(answer(404, openai)), ModelNotFound)
    error = mapped(answer(400, {"error": {"message": "Invalid model: gpt-x"}}))
    assert isinstance(error, ModelNotFound)
    assert error.message.startswith("OpenAI has no model 'gpt-x'. Check the name")
    # A bare 404 may also be a wrong base URL; the message says both.
    bare = mapped(answer(404, "404 page not found"))
    assert isinstance(bare, ModelNotFound)
    assert "or the base URL https://api.openai.com/v1 is wrong" in bare.message
    # Without a model (the model list), a 404 is the wrong base URL.
    listing = mapped(answer(404, "404 page not found"), model=None)
    assert type(listing) is ProviderError
    assert listing.reason == "endpoint_not_found"
    # A 400 about something else is not a missing model.
    other = mapped(answer(400, {"error": {"message": "max_tokens is too large for this model"}}))
    assert type(other) is ProviderError


def test_rate_limits_carry_the_wait() -> None:
    error = mapped(answer(429, {"error": {"message": "Slow down"}}, {"retry-after": "7"}))
    assert isinstance(error, RateLimited)
    assert error.retry_after == 7
    assert "It asks to wait 7 s." in error.message
    assert error.message.endswith("OpenAI says: Slow down")


def test_overloaded_redirect_and_too_long() -> None:
    overloaded = mapped(answer(529, {"type": "error", "error": {"message": "Overloaded"}}))
    assert overloaded.reason == "provider_unavailable"
    redirect = mapped(answer(308, "", {"location": "https://api.openai.com/v2"}))
    assert redirect.reason == "provider_redirect"
    too_long = mapped(
        answer(400, {"error": {"message": "prompt is too long: 210000 tokens > 200000 maximum"}})
    )
    assert too_long.reason == "context_too_long"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"error": {"message": "openai style"}}, "openai style"),
        (
            {"type": "error", "error": {"type": "x", "message": "anthropic style"}},
            "anthropic style",
        ),
        ({"error": "ollama style"}, "ollama style"),
        ([{"error": {"code": 400, "message": "gemini style"}}], "gemini style"),
        ({"detail": "fastapi style"}, "fastapi style"),
        (
            {
                "object": "error",
                "message": {
                    "detail": [
                        {
                            "type": "extra_forbidden",
                            "loc": ["body", "stream_options"],
                            "msg": "Extra inputs are not permitted",
                        }
                    ]
                },
                "type": "invalid_request_error",
            },
            "body.stream_options: Extra inputs are not permitted",  # Mistral's 422
        ),
        (
            {"detail": [{"loc": ["body", "messages", 1], "msg": "Field required"}, {"x": 1}]},
            "body.messages.1: Field required",  # vLLM's
        ),
        ("plain text\nover lines", "plain text over lines"),
        ("<html><body>a proxy page</body></html>", ""),
    ],
)
def test_the_providers_own_words(body: Any, expected: str) -> None:
    text = body if isinstance(body, str) else answer(400, body).text
    assert provider_message(text) == expected


def test_the_providers_words_are_shortened_and_redacted() -> None:
    redactor = Redactor()
    redact = redactor_for("unshaped-secret-value", redactor)
    words = provider_message(
        '{"error": "key unshaped-secret-value and sk-ant-api03-abcdefghijklmnopqrstuv '
        + "x" * 400
        + '"}',
        redact,
    )
    assert "unshaped-secret-value" not in words
    assert "sk-ant-api03" not in words
    assert len(words) == 300
    assert words.endswith("…")


# --- retry policy ----------------------------------------------------------------------------


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "3"}) == 3
    assert retry_after({"retry-after": "1.5", "retry-after-ms": "1200"}) == 1.2
    assert retry_after({"retry-after-ms": "nonsense", "retry-after": "2"}) == 2
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 27 <= (retry_after({"retry-after": later}) or 0) <= 31
    past = email.utils.formatdate(time.time() - 30, usegmt=True)
    assert retry_after({"retry-after": past}) == 0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({"retry-after": "-4"}) == 0
    assert retry_after({}) is None


def test_retry_delays() -> None:
    policy = RetryPolicy(max_retries=2, max_delay=5.0, base=1.0)
    assert policy.delay(0, 4.0) == 4.0
    assert policy.delay(0, 6.0) is None  # longer than max_delay: fail now
    assert policy.delay(2, 0.1) is None  # retries used up
    assert 0.75 <= (policy.delay(0, None) or 0) <= 1.25
    assert 1.5 <= (policy.delay(1, None) or 0) <= 2.5
    assert RetryPolicy(base=100.0).delay(1, None) == 20.0  # capped


async def test_a_stream_is_retried_only_before_its_first_event() -> None:
    sleeps = Sleeps()
    policy = RetryPolicy(sleep=sleeps)
    attempts = []
    busy = ProviderError("busy", reason="provider_unavailable")

    def attempt(fail_after: int) -> AsyncIterator[int]:
        async def events() -> AsyncIterator[int]:
            attempts.append(fail_after)
            for number in range(fail_after):
                yield number
            raise RetryableFailure(busy)

        return events()

    plan = iter([0, 0, 2])
    seen: list[int] = []

    async def consume() -> None:
        async for item in policy.stream(lambda: attempt(next(plan))):
            seen.append(item)

    with pytest.raises(ProviderError) as caught:
        await consume()
    assert caught.value is busy
    assert attempts == [0, 0, 2]
    assert seen == [0, 1]
    assert len(sleeps.delays) == 2


async def test_calls_are_retried_too() -> None:
    sleeps = Sleeps()
    outcomes: list[Any] = [RetryableFailure(ProviderError("x"), 0.5), "ok"]

    async def attempt() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return str(outcome)

    assert await RetryPolicy(sleep=sleeps).call(attempt) == "ok"
    assert sleeps.delays == [0.5]
