"""Fixtures of the agent API tests: a model stub on 127.0.0.1, providers pointed at it, and
a client of the events WebSocket."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.testing.model_stub import ModelStub

if TYPE_CHECKING:
    from collections.abc import Iterator

Api = Callable[..., Awaitable[Any]]
KEY = "sk-stub-key-4f1c9a7e2b6d8f0a"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def model_stub() -> Iterator[ModelStub]:
    with ModelStub(models=["stub-model", "tiny"]) as stub:
        yield stub


@pytest.fixture
def keyed_stub() -> Iterator[ModelStub]:
    with ModelStub(require_key=KEY) as stub:
        yield stub


@pytest.fixture
def ai_config() -> dict[str, Any]:
    """More AiManager options for one test."""
    return {}


@pytest.fixture
def terax_config(model_stub: ModelStub, keyed_stub: ModelStub, ai_config: dict) -> dict:
    def local(label: str, url: str, **more: Any) -> dict[str, Any]:
        return {"kind": "openai", "label": label, "base_url": url, "local": True, **more}

    return {
        "SecretsManager": {"backend": "file"},
        "AiManager": {
            "providers": {
                "stub": local("Stub", model_stub.url, product="the stub"),
                "stub-anthropic": {**local("Stub A", model_stub.url), "kind": "anthropic"},
                "keyed": local("Keyed", keyed_stub.url, key_name="KEYED_API_KEY"),
                "dead": local(
                    "Ollama here", f"http://127.0.0.1:{_closed_port()}/v1", product="Ollama"
                ),
            },
            "default_provider": "stub",
            "default_model": "stub-model",
            **ai_config,
        },
    }


class Events:
    """The events of one session, read from its WebSocket."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []

    async def next(self, timeout: float = 20) -> dict[str, Any]:
        message = await asyncio.wait_for(self.ws.read_message(), timeout)
        assert message is not None, "the events stream closed"
        event = json.loads(message)
        self.seen.append(event)
        return event  # type: ignore[no-any-return]

    async def until(self, kind: str, timeout: float = 20) -> dict[str, Any]:
        while True:
            event = await self.next(timeout)
            if event["type"] == kind:
                return event

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.seen if event["type"] == kind]

    def text(self) -> str:
        return "".join(e["text"] for e in self.of("text_delta") if not e.get("parent_call_id"))

    def close(self) -> None:
        self.ws.close()


@pytest.fixture
def open_events(jp_ws_fetch: Any) -> Callable[..., Awaitable[Events]]:
    opened: list[Events] = []

    async def connect(session_id: str, **params: str) -> Events:
        ws = await jp_ws_fetch(
            "terax", "api", "ai", "sessions", session_id, "events", params=params
        )
        events = Events(ws)
        opened.append(events)
        return events

    yield connect  # type: ignore[misc]
    for events in opened:
        events.close()
