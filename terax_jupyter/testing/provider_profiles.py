"""What real providers demand of a conversation, for the model stub to enforce.

A profile names a provider (``gemini``, ``deepseek``, ``mistral``, ...). With one set
(``ModelStub(profile="gemini")``), the stub refuses a chat request the way that provider
does, with its status and error body, when the request breaks one of its rules: Gemini's
thought signatures must come back with the calls of the current turn, DeepSeek's thinking
mode wants the ``reasoning_content`` of every turn that called a tool, Mistral refuses
fields it does not know, empty assistant messages and call ids that are not nine letters
and digits. Every OpenAI-format profile also checks that each call is answered by a tool
message and each tool message answers a call, and that images come only as a user's
``image_url`` parts holding a base64 data URL of the image type they name; ``anthropic``
checks tool_use/tool_result pairing and the image blocks of tool results. The stub
remembers the signatures and thoughts it streamed, so a check can tell the ones it issued
from made-up ones.
"""

from __future__ import annotations

import base64
import json
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PROFILES", "Memory", "decorate", "refusal"]

# Every profile: the OpenAI-format ones (all but anthropic) check call/result pairing.
PROFILES = frozenset(
    {
        "openai",
        "anthropic",
        "gemini",
        "deepseek",
        "mistral",
        "mistral-template",  # a local server running a Mistral model's chat template
        "groq",
        "xai",
        "cerebras",
        "openrouter",
        "lmstudio",
        "mlx",
        "ollama",
        "vllm",
        "llamacpp",
    }
)
_NINE = re.compile(r"[A-Za-z0-9]{9}", re.ASCII)
# The fields of Mistral's chat request (it answers 422 "extra_forbidden" to any other).
_MISTRAL_FIELDS = frozenset(
    {
        "model",
        "messages",
        "temperature",
        "top_p",
        "max_tokens",
        "stream",
        "stop",
        "random_seed",
        "response_format",
        "tools",
        "tool_choice",
        "presence_penalty",
        "frequency_penalty",
        "n",
        "prediction",
        "parallel_tool_calls",
        "prompt_mode",
        "safe_prompt",
    }
)
_MISTRAL_MESSAGE_FIELDS = frozenset(
    {"role", "content", "tool_calls", "tool_call_id", "name", "prefix"}
)
_MISTRAL_CALL_FIELDS = frozenset({"id", "type", "function", "index"})

Refusal = tuple[int, Any]


@dataclass
class Memory:
    """What the stub streamed that a provider wants back: Gemini's thought signatures and
    the joined ``reasoning_content`` of each answer."""

    signatures: set[str] = field(default_factory=set)
    reasonings: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def remember(self, events: list[str]) -> None:
        """Note the signatures and thoughts in the OpenAI-format ``events`` of one answer."""
        thoughts: list[str] = []
        signatures: list[str] = []
        for delta in _deltas(events):
            if isinstance(delta.get("reasoning_content"), str):
                thoughts.append(delta["reasoning_content"])
            for call in delta.get("tool_calls") or []:
                signature = _signature(call)
                if signature:
                    signatures.append(signature)
        with self.lock:
            self.signatures.update(signatures)
            if "".join(thoughts):
                self.reasonings.add("".join(thoughts))

    def clear(self) -> None:
        with self.lock:
            self.signatures.clear()
            self.reasonings.clear()


def decorate(profile: str | None, events: list[str]) -> list[str]:
    """Scripted ``events`` as the profile's provider sends them: for ``gemini``, the first
    call of the answer carries a thought signature (parallel calls after it carry none)."""
    if profile != "gemini":
        return events
    decorated = []
    signed = False
    for event in events:
        data = _data(event)
        delta = _delta(data) if data is not None else None
        calls = delta.get("tool_calls") if delta is not None else None
        if not signed and isinstance(calls, list) and calls and calls[0].get("id"):
            signature = base64.b64encode(b"gemini-thought:" + os.urandom(12)).decode()
            calls[0]["extra_content"] = {"google": {"thought_signature": signature}}
            signed = True
            event = f"data: {json.dumps(data)}\n\n"
        decorated.append(event)
    return decorated


def refusal(
    profile: str | None, body: dict[str, Any], anthropic: bool, memory: Memory
) -> Refusal | None:
    """``(status, body)`` of the provider's refusal of the chat request ``body``, or None
    when the profile's provider would take it."""
    if profile is None:
        return None
    if anthropic:
        if profile != "anthropic":
            return None
        return _anthropic_pairs(body) or _anthropic_images(body)
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    checks = {
        "gemini": _gemini,
        "deepseek": _deepseek,
        "mistral": _mistral,
        "mistral-template": _template_ids,
        "groq": _groq,
    }
    check = checks.get(profile)
    found = check(body, messages, memory) if check is not None else None
    return found or _openai_images(messages) or _openai_pairs(messages)


# -- the rules ------------------------------------------------------------------------------


def _openai_pairs(messages: list[dict[str, Any]]) -> Refusal | None:
    """OpenAI's rule, which every server copying its API enforces in some form."""
    open_ids: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_ids:
                return _openai_error(
                    f"Invalid parameter: messages[{index}] with role 'tool' must be a response "
                    "to a preceeding message with 'tool_calls'."
                )
            open_ids.remove(message["tool_call_id"])
            continue
        if open_ids:
            return _openai_error(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(open_ids)}"
            )
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                arguments = (call.get("function") or {}).get("arguments")
                if not isinstance(arguments, str):
                    return _openai_error(f"messages[{index}]: arguments must be a string.")
                open_ids.append(str(call.get("id")))
    if open_ids:
        return _openai_error(
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(open_ids)}"
        )
    return None


IMAGE_SIGNATURES = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff",
    "image/gif": b"GIF8",
    "image/webp": b"RIFF",
}
_DATA_URL = re.compile(r"data:(image/[a-z]+);base64,([A-Za-z0-9+/=]+)")


def _image_problem(media_type: Any, data: Any) -> str | None:
    """Why base64 ``data`` is not a ``media_type`` image the providers take, or None."""
    signature = IMAGE_SIGNATURES.get(media_type) if isinstance(media_type, str) else None
    if signature is None:
        return f"unsupported image type {media_type!r}"
    try:
        raw = base64.b64decode(data, validate=True) if isinstance(data, str) else b""
    except ValueError:
        return "the image data is not valid base64"
    if not raw.startswith(signature):
        return f"the image data does not match the provided media type {media_type}"
    return None


def _openai_images(messages: list[dict[str, Any]]) -> Refusal | None:
    """Content parts: images only in user messages, as data URLs of real images."""
    for index, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        role = message.get("role")
        for number, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                continue
            if kind != "image_url":
                return _openai_error(f"Invalid 'messages[{index}].content[{number}]'.")
            if role != "user":
                return _openai_error(
                    f"Invalid 'messages[{index}]'. Image URLs are only allowed for messages "
                    f"with role 'user', but this message with role '{role}' contains an "
                    "image URL."
                )
            url = (part.get("image_url") or {}).get("url")
            found = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
            problem = _image_problem(found.group(1), found.group(2)) if found else "not a data URL"
            if problem:
                return _openai_error(
                    f"Invalid 'messages[{index}].content[{number}].image_url': {problem}."
                )
    return None


def _anthropic_images(body: dict[str, Any]) -> Refusal | None:
    """A tool_result's content: a string, or text and base64 image blocks."""
    for index, message in enumerate(body.get("messages") or []):
        blocks = message.get("content") if isinstance(message, dict) else None
        for number, block in enumerate(blocks if isinstance(blocks, list) else []):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            content = block.get("content")
            if isinstance(content, str):
                continue
            where = f"messages.{index}.content.{number}.tool_result.content"
            if not isinstance(content, list):
                return _anthropic_error(f"{where}: Input should be a valid list")
            for part_number, part in enumerate(content):
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text" and isinstance(part.get("text"), str):
                    continue
                source = part.get("source") if kind == "image" else None
                if not isinstance(source, dict) or source.get("type") != "base64":
                    return _anthropic_error(f"{where}.{part_number}: Input tag is not valid")
                problem = _image_problem(source.get("media_type"), source.get("data"))
                if problem:
                    return _anthropic_error(f"{where}.{part_number}.image.source: {problem}")
    return None


def _gemini(body: dict[str, Any], messages: list[dict[str, Any]], memory: Memory) -> Refusal | None:
    # Strict for the current turn: the calls after the last user message.
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    position = 0
    for message in messages[start:]:
        calls = message.get("tool_calls") or [] if message.get("role") == "assistant" else []
        for number, call in enumerate(calls):
            position += 1
            signature = _signature(call)
            with memory.lock:
                known = signature in memory.signatures
            if number == 0 and not known:
                name = (call.get("function") or {}).get("name")
                text = (
                    "Function call is missing a thought_signature in functionCall parts. This "
                    "is required for tools to work correctly, and missing thought_signature "
                    "may lead to degraded model performance. Additional data, function call "
                    f"`default_api:{name}` , position {position}. Please refer to "
                    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
                )
                if signature:
                    text = f"Corrupted thought signature for function call `{name}`."
                error = {"code": 400, "message": text, "status": "INVALID_ARGUMENT"}
                return 400, [{"error": error}]
    return None


def _deepseek(
    body: dict[str, Any], messages: list[dict[str, Any]], memory: Memory
) -> Refusal | None:
    for message in messages:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            with memory.lock:
                known = message.get("reasoning_content") in memory.reasonings
            if not known:
                return _openai_error(
                    "The `reasoning_content` in the thinking mode must be passed back to the API.",
                    kind="invalid_request_error",
                )
    return None


def _mistral(
    body: dict[str, Any], messages: list[dict[str, Any]], memory: Memory
) -> Refusal | None:
    extra: list[list[Any]] = [["body", name] for name in body if name not in _MISTRAL_FIELDS]
    for index, message in enumerate(messages):
        for name in message:
            if name not in _MISTRAL_MESSAGE_FIELDS:
                extra.append(["body", "messages", index, message.get("role"), name])
        for number, call in enumerate(message.get("tool_calls") or []):
            for name in call:
                if name not in _MISTRAL_CALL_FIELDS:
                    extra.append(["body", "messages", index, "tool_calls", number, name])
    if extra:
        detail = [
            {"type": "extra_forbidden", "loc": loc, "msg": "Extra inputs are not permitted"}
            for loc in extra
        ]
        return 422, {
            "object": "error",
            "message": {"detail": detail},
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    for message in messages:
        empty = not message.get("content") and not message.get("tool_calls")
        if message.get("role") == "assistant" and empty:
            return _mistral_error(
                "Assistant message must have either content or tool_calls, but not none.",
                "3230",
            )
        for call_id in _call_ids(message):
            if not _NINE.fullmatch(call_id):
                return _mistral_error(
                    f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9.",
                    "3280",
                )
    return None


def _template_ids(
    body: dict[str, Any], messages: list[dict[str, Any]], memory: Memory
) -> Refusal | None:
    """A Mistral model's chat template on vLLM, llama.cpp or MLX raises for other ids."""
    for message in messages:
        for call_id in _call_ids(message):
            if not _NINE.fullmatch(call_id):
                return _openai_error(
                    "Error rendering the chat template: Tool call IDs should be alphanumeric "
                    "strings with length 9!"
                )
    return None


def _groq(body: dict[str, Any], messages: list[dict[str, Any]], memory: Memory) -> Refusal | None:
    for index, message in enumerate(messages):
        for name in ("reasoning_content", "extra_content"):
            if name in message:
                return _openai_error(
                    f"'messages.{index}' : for 'role:{message.get('role')}' the following must "
                    f"be satisfied[('messages.{index}' : property '{name}' is unsupported)]"
                )
    return None


def _anthropic_pairs(body: dict[str, Any]) -> Refusal | None:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for index, message in enumerate(messages):
        expected = "user" if index % 2 == 0 else "assistant"
        if message.get("role") != expected:
            return _anthropic_error(f"messages.{index}: roles must alternate user and assistant.")
        blocks = message.get("content")
        if message.get("role") != "assistant" or not isinstance(blocks, list):
            continue
        uses = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        if not uses:
            continue
        following = messages[index + 1].get("content") if index + 1 < len(messages) else []
        results = [
            b.get("tool_use_id")
            for b in (following if isinstance(following, list) else [])
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        missing = [u for u in uses if u not in results]
        if missing:
            return _anthropic_error(
                f"messages.{index + 1}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(map(str, missing))}. Each `tool_use` block must "
                "have a corresponding `tool_result` block in the next message."
            )
    return None


# -- helpers --------------------------------------------------------------------------------


def _call_ids(message: dict[str, Any]) -> list[str]:
    ids = [str(c.get("id")) for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    if message.get("role") == "tool":
        ids.append(str(message.get("tool_call_id")))
    return ids


def _signature(call: Any) -> str | None:
    if not isinstance(call, dict):
        return None
    extra = call.get("extra_content")
    google = extra.get("google") if isinstance(extra, dict) else None
    signature = google.get("thought_signature") if isinstance(google, dict) else None
    return signature if isinstance(signature, str) else None


def _data(event: str) -> dict[str, Any] | None:
    lines = [line[5:].strip() for line in event.splitlines() if line.startswith("data:")]
    if not lines or lines[0] == "[DONE]":
        return None
    try:
        value = json.loads("\n".join(lines))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _delta(data: dict[str, Any]) -> dict[str, Any] | None:
    choices = data.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        delta = choices[0].get("delta")
        return delta if isinstance(delta, dict) else None
    return None


def _deltas(events: list[str]) -> list[dict[str, Any]]:
    found = []
    for event in events:
        data = _data(event)
        delta = _delta(data) if data is not None else None
        if delta is not None:
            found.append(delta)
    return found


def _openai_error(message: str, kind: str = "invalid_request_error") -> Refusal:
    return 400, {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _mistral_error(message: str, code: str) -> Refusal:
    return 400, {
        "object": "error",
        "message": message,
        "type": "invalid_request_error",
        "param": None,
        "code": code,
    }


def _anthropic_error(message: str) -> Refusal:
    return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
