"""The provider-neutral conversation, request and stream event types, and the Provider base.

The runtime speaks only these types; each adapter translates them to and from one wire
format (OpenAI chat completions, Anthropic Messages). Everything here is plain data that
round-trips through JSON, because messages and tool calls are stored in SQLite.
"""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

Role = Literal["system", "user", "assistant", "tool"]
WireKind = Literal["openai", "anthropic"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: a name, what it does, and a JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class ToolCall:
    """One call the model asked for. ``arguments_error`` is set when the model's argument
    text was not a JSON object; ``arguments`` is then empty and the call must fail.

    ``extra`` is what the provider attached to the call and wants back with it (Gemini's
    thought signature), opaque to everything but the adapter that read it: it names that
    provider (``{"provider": id, ...}``), so it is sent back to that provider only. It is
    stored with the call and kept when the runtime gives the call its own id.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    arguments_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.extra:
            del data["extra"]  # most calls have none; stored rows stay as they were
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolCall:
        extra = data.get("extra")
        return cls(
            id=data["id"],
            name=data["name"],
            arguments=dict(data.get("arguments") or {}),
            arguments_error=data.get("arguments_error"),
            extra=dict(extra) if isinstance(extra, dict) else {},
        )


@dataclass(frozen=True)
class ImagePart:
    """An image a tool result shows the model: base64 ``data`` of a PNG or JPEG, its pixel
    size (for the token estimate) and ``label``, the words that stand for it in the text."""

    media_type: Literal["image/png", "image/jpeg"]
    data: str
    width: int
    height: int
    label: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> ImagePart | None:
        """The part ``data`` describes, or None for anything malformed (left out)."""
        if not isinstance(data, dict) or data.get("media_type") not in IMAGE_MEDIA_TYPES:
            return None
        width, height, label = data.get("width"), data.get("height"), data.get("label")
        if not isinstance(data.get("data"), str) or not (_size(width) and _size(height)):
            return None
        return cls(
            data["media_type"], data["data"], width, height, label if isinstance(label, str) else ""
        )


def _size(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


IMAGE_MEDIA_TYPES = ("image/png", "image/jpeg")


@dataclass
class Message:
    """One turn of a conversation.

    ``assistant`` messages may carry ``tool_calls`` (and ``reasoning``, which adapters send
    back only to a provider that wants it: DeepSeek after a tool call); a ``tool`` message
    answers exactly one call, by ``tool_call_id``, with ``name`` the tool's name and
    ``is_error`` when it failed, and may show ``images`` (sent only to a model that reads
    them; never stored, so they last only for the run that made them).
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str = ""
    is_error: bool = False
    images: list[ImagePart] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "role": self.role,
            "content": self.content,
            "tool_calls": [call.to_json() for call in self.tool_calls],
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "reasoning": self.reasoning,
            "is_error": self.is_error,
        }
        if self.images:
            data["images"] = [image.to_json() for image in self.images]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        return cls(
            role=data["role"],
            content=data.get("content") or "",
            tool_calls=[ToolCall.from_json(call) for call in data.get("tool_calls") or []],
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            reasoning=data.get("reasoning") or "",
            is_error=bool(data.get("is_error")),
            images=[
                part
                for part in map(ImagePart.from_json, data.get("images") or [])
                if part is not None
            ],
        )


@dataclass
class ChatRequest:
    """One model call. ``messages`` may start with a ``system`` message; adapters move it
    where their wire format wants it."""

    model: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_output_tokens: int | None = None
    temperature: float | None = None
    reasoning: bool = False


# -- stream events ------------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ReasoningDelta:
    text: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True)
class ToolCallStarted:
    """The model began a tool call; its arguments are still streaming."""

    id: str
    name: str
    index: int
    type: Literal["tool_call_started"] = "tool_call_started"


@dataclass(frozen=True)
class ToolCallReady:
    """A tool call whose arguments are complete (emitted before ``Finished``)."""

    call: ToolCall
    type: Literal["tool_call_ready"] = "tool_call_ready"


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int
    cached_tokens: int = 0
    type: Literal["usage"] = "usage"


@dataclass(frozen=True)
class Finished:
    """The last event of a complete answer. ``reason`` is normalized: ``stop``,
    ``tool_calls``, ``length``, ``content_filter``, or the provider's own word."""

    reason: str
    type: Literal["finished"] = "finished"


StreamEvent = TextDelta | ReasoningDelta | ToolCallStarted | ToolCallReady | Usage | Finished


# -- providers ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ProviderConfig:
    """Where a provider lives and how to reach it.

    ``key_name`` names the secret holding its key (``OPENAI_API_KEY``), or is None for a
    keyless local server. ``local`` allows loopback and private addresses for this provider
    only (the guarded network refuses them otherwise). ``product`` names the server software
    in messages ("is Ollama running?").
    """

    id: str
    label: str
    kind: WireKind
    base_url: str
    key_name: str | None = None
    local: bool = False
    product: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    source: Literal["builtin", "config", "user"] = "builtin"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["headers"] = dict(self.headers)
        return data


class Provider(abc.ABC):
    """One configured provider, ready to call."""

    config: ProviderConfig

    @abc.abstractmethod
    def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Stream one answer. Ends with ``Finished`` or raises a ``ProviderError``
        (``StreamCut`` when the stream stops before its end). A caller that stops reading
        early closes it (``contextlib.aclosing``)."""

    @abc.abstractmethod
    async def list_models(self) -> list[dict[str, Any]]:
        """The models the provider offers: ``[{"id": ..., ...}]``."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release the provider's connections."""
