"""Fixtures of the provider tests: a real model stub on 127.0.0.1 and providers pointed at it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.security.network import OutboundPolicy, guarded_client
from terax_jupyter.services.ai.providers.anthropic import AnthropicProvider
from terax_jupyter.services.ai.providers.base import (
    ChatRequest,
    Message,
    ProviderConfig,
    StreamEvent,
    TextDelta,
    ToolSpec,
)
from terax_jupyter.services.ai.providers.openai import OpenAIProvider
from terax_jupyter.services.ai.providers.retry import RetryPolicy
from terax_jupyter.testing.model_stub import ModelStub

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from terax_jupyter.services.ai.providers.base import Provider

# The key the tests send; it must never appear in an error message.
KEY = "sk-test-provider-0123456789abcdef"
READ_FILE = ToolSpec(
    "read_file",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


@dataclass
class Sleeps:
    """A stand-in for asyncio.sleep that records the waits and returns at once."""

    delays: list[float] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def stub() -> Iterator[ModelStub]:
    with ModelStub(models=["stub-model", "stub-large"]) as server:
        yield server


@pytest.fixture
def connect(
    stub: ModelStub, sleeps: Sleeps, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[Callable[..., Provider]]:
    """``connect(kind, key=KEY, timeout=5.0, base_url=stub.url, local=True, product=None,
    headers=())``: a provider of that wire format over the guarded network to the stub."""
    made: list[Provider] = []

    def build(
        kind: str = "openai",
        *,
        key: str | None = KEY,
        timeout: float = 5.0,
        base_url: str | None = None,
        local: bool = True,
        product: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
        retry: RetryPolicy | None = None,
    ) -> Provider:
        url = base_url or stub.url
        config = ProviderConfig(
            "stub",
            "Stub",
            kind,  # type: ignore[arg-type]
            url,
            key_name="STUB_API_KEY",
            local=local,
            product=product,
            headers=headers,
        )
        policy = OutboundPolicy.build([url.rsplit("/", 1)[0]] if local else [])
        client = guarded_client(policy, timeout=timeout)
        adapter = AnthropicProvider if kind == "anthropic" else OpenAIProvider
        provider = adapter(config, client, key, retry or RetryPolicy(sleep=sleeps))
        made.append(provider)
        return provider

    yield build
    for provider in made:
        jp_asyncio_loop.run_until_complete(provider.aclose())
    jp_asyncio_loop.run_until_complete(settle())


async def settle() -> None:
    """Let the loop finish closing readers of streams abandoned on an error: Python hands
    unfinished async generators to the loop, one nesting level per turn, and the test's loop
    is closed right after the test (a server's loop just runs them)."""
    for _ in range(10):
        await asyncio.sleep(0)


def ask(text: str = "hello", *, tools: bool = True, **options: Any) -> ChatRequest:
    return ChatRequest(
        model="stub-model",
        messages=[Message("system", "You are terse."), Message("user", text)],
        tools=[READ_FILE] if tools else [],
        **options,
    )


async def collect(provider: Provider, request: ChatRequest | None = None) -> list[StreamEvent]:
    return [event async for event in provider.stream(request or ask())]


async def collect_into(seen: list[StreamEvent], provider: Provider, request: ChatRequest) -> None:
    """Stream into ``seen``, so a test sees what arrived before an error."""
    async for event in provider.stream(request):
        seen.append(event)


def text_of(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))
