"""The Anthropic Messages adapter: ``POST {base_url}/messages`` streamed as typed events."""

from __future__ import annotations

from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from httpx_sse import aconnect_sse

from terax_jupyter.services.ai.providers.base import (
    Finished,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    Usage,
)
from terax_jupyter.services.ai.providers.errors import (
    ProviderCall,
    bad_response,
    decode_event,
    parse_arguments,
    stream_cut,
)
from terax_jupyter.services.ai.providers.http import HttpProvider

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

    from terax_jupyter.services.ai.providers.base import (
        ChatRequest,
        Message,
        ProviderConfig,
        StreamEvent,
    )

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",  # the window ran out mid-answer
    "refusal": "content_filter",
}
# Error event types -> the HTTP status they stand for (so the retry policy can judge them).
ERROR_STATUS = {
    "rate_limit_error": 429,
    "overloaded_error": 529,
    "api_error": 500,
    "timeout_error": 504,
}


class AnthropicProvider(HttpProvider):
    """The Messages API with ``stream: true``."""

    KEEPALIVE_EVENTS = frozenset({"ping"})

    def headers(self) -> dict[str, str]:
        headers = dict(self.config.headers)
        headers["anthropic-version"] = API_VERSION
        if self._key:
            headers["x-api-key"] = self._key
        return headers

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The request body for ``request``."""
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_output_tokens or DEFAULT_MAX_TOKENS,
            "messages": _messages(request.messages),
            "stream": True,
        }
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
        if request.temperature is not None:
            body["temperature"] = request.temperature
        # request.reasoning does not turn on extended thinking: with tools, Anthropic wants the
        # signed thinking blocks back, and Message keeps reasoning as plain text only.
        return body

    async def _attempt(
        self, payload: dict[str, Any], model: str
    ) -> AsyncGenerator[StreamEvent, None]:
        call = ProviderCall(self.config, redact=self._redact, model=model)
        reader = _EventReader(self.config, call)
        with call:
            async with aconnect_sse(
                self._client,
                "POST",
                f"{self._base}/messages",
                json=payload,
                headers=self.headers(),
            ) as source:
                await call.check(source.response, stream=True)
                async with aclosing(self._paced(source.aiter_sse())) as events:
                    async for sse in events:
                        # Read on to the end after message_stop (see OpenAIProvider).
                        if reader.done or not sse.data:
                            continue
                        for event in reader.feed(sse.event, decode_event(self.config, sse.data)):
                            yield event
        if not reader.done:
            raise stream_cut(self.config)

    async def list_models(self) -> list[dict[str, Any]]:
        items = await self._model_items({"limit": 1000})
        models = []
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                model = dict(item)
                if isinstance(item.get("display_name"), str):
                    model["label"] = item["display_name"]
                models.append(model)
        return sorted(models, key=lambda m: m["id"])


def _messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages as content blocks, consecutive ones of a role merged (the API alternates
    user and assistant; tool results travel as user content)."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue  # an empty text block is refused by the API
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"].extend(blocks)
        else:
            merged.append({"role": role, "content": blocks})
    return merged


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        content: str | list[dict[str, Any]] = message.content or "(no output)"
        if message.images:
            # A tool result's content may be text and image blocks (base64 sources).
            content = [
                {"type": "text", "text": content},
                *(
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": image.media_type,
                            "data": image.data,
                        },
                    }
                    for image in message.images
                ),
            ]
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": content,
                "is_error": message.is_error,
            }
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    if message.role == "assistant":
        blocks.extend(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            for call in message.tool_calls
        )
    return blocks


@dataclass
class _Block:
    kind: str
    id: str = ""
    name: str = ""
    arguments: str = ""
    initial: dict[str, Any] | None = None
    ordinal: int = 0


class _EventReader:
    """Turns Messages stream events into stream events."""

    def __init__(self, config: ProviderConfig, call: ProviderCall) -> None:
        self.config = config
        self.call = call
        self.blocks: dict[int, _Block] = {}
        self.tool_count = 0
        self.input_tokens = 0
        self.cached_tokens = 0
        self.output_tokens = 0
        self.stop_reason: str | None = None
        self.done = False

    def feed(self, name: str, data: dict[str, Any]) -> list[StreamEvent]:
        kind = data.get("type", name)
        if kind == "message_start":
            message = data.get("message") or {}
            self._usage(message.get("usage") if isinstance(message, dict) else None)
        elif kind == "content_block_start":
            return self._start(data)
        elif kind == "content_block_delta":
            return self._delta(data)
        elif kind == "content_block_stop":
            return self._stop(data)
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
                self.stop_reason = delta["stop_reason"]
            self._usage(data.get("usage"))
        elif kind == "message_stop":
            self.done = True
            events: list[StreamEvent] = [
                Usage(self.input_tokens, self.output_tokens, self.cached_tokens)
            ]
            reason = self.stop_reason or "end_turn"
            events.append(Finished(STOP_REASONS.get(reason, reason)))
            return events
        elif kind == "error":
            error = data.get("error") or {}
            error_type = error.get("type") if isinstance(error, dict) else None
            self.call.event_error(error, status=ERROR_STATUS.get(str(error_type)))
        return []  # ping, and event types newer than this adapter

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        # input_tokens leaves out the cached part; ours counts the whole prompt.
        parts = [usage.get(k) for k in ("input_tokens", "cache_read_input_tokens")]
        parts.append(usage.get("cache_creation_input_tokens"))
        if any(isinstance(p, int) for p in parts):
            self.input_tokens = sum(p for p in parts if isinstance(p, int))
            read = usage.get("cache_read_input_tokens")
            self.cached_tokens = read if isinstance(read, int) else 0
        if isinstance(usage.get("output_tokens"), int):
            self.output_tokens = usage["output_tokens"]

    def _start(self, data: dict[str, Any]) -> list[StreamEvent]:
        index, block = data.get("index"), data.get("content_block")
        if not isinstance(index, int) or not isinstance(block, dict):
            raise bad_response(self.config, "a content block without index")
        kind = str(block.get("type"))
        entry = _Block(kind)
        self.blocks[index] = entry
        if kind == "text" and block.get("text"):
            return [TextDelta(str(block["text"]))]
        if kind == "thinking" and block.get("thinking"):
            return [ReasoningDelta(str(block["thinking"]))]
        if kind == "tool_use":
            entry.id, entry.name = str(block.get("id") or ""), str(block.get("name") or "")
            entry.ordinal = self.tool_count
            self.tool_count += 1
            given = block.get("input")
            entry.initial = given if isinstance(given, dict) and given else None
            return [ToolCallStarted(entry.id, entry.name, entry.ordinal)]
        return []

    def _delta(self, data: dict[str, Any]) -> list[StreamEvent]:
        entry = self.blocks.get(data.get("index"))  # type: ignore[arg-type]
        delta = data.get("delta")
        if entry is None or not isinstance(delta, dict):
            raise bad_response(self.config, "a delta of no content block")
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [TextDelta(str(delta["text"]))]
        if kind == "thinking_delta" and delta.get("thinking"):
            return [ReasoningDelta(str(delta["thinking"]))]
        if kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            entry.arguments += delta["partial_json"]
        return []

    def _stop(self, data: dict[str, Any]) -> list[StreamEvent]:
        entry = self.blocks.get(data.get("index"))  # type: ignore[arg-type]
        if entry is None or entry.kind != "tool_use":
            return []
        if entry.arguments or entry.initial is None:
            arguments, problem = parse_arguments(entry.name, entry.arguments)
        else:
            arguments, problem = entry.initial, None
        return [ToolCallReady(ToolCall(entry.id, entry.name, arguments, problem))]
