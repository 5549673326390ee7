"""Inline code completion: the text to insert at the cursor, from the configured model.

Local OpenAI-compatible servers (Ollama, llama.cpp, LM Studio) are asked for
fill-in-the-middle first (``/completions`` with ``suffix``); a server or model without it is
asked through chat instead, and that is remembered per (provider, model) so the refusal is
paid once. Hosted providers and Anthropic always use chat.
"""

from __future__ import annotations

import re
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.ai.providers.base import ChatRequest, Message, TextDelta
from terax_jupyter.services.ai.providers.openai import OpenAIProvider

if TYPE_CHECKING:
    from terax_jupyter.services.ai.manager import AiManager
    from terax_jupyter.services.ai.providers.base import Provider

PREFIX_CHARS = 6000  # the end of the text before the cursor that is sent
SUFFIX_CHARS = 2000  # the start of the text after it
MAX_INPUT_CHARS = 1_000_000  # a longer prefix or suffix is refused, not cut
MAX_LINES = 20
FIELDS = {"prefix", "suffix", "path", "language", "provider", "model"}
TEMPERATURE = 0.2
CURSOR = "<CURSOR>"
SYSTEM_PROMPT = (
    "You are a code completion engine. The user sends a file with the marker <CURSOR> where "
    "the cursor is. Complete the code at <CURSOR>; output only the inserted text: no "
    "explanations, no code fences, no repetition of the code before or after the cursor. "
    "Output nothing if nothing fits."
)

_FENCED = re.compile(r"^\s*```[^\n`]*\n(?P<body>.*?)(?:\n?```[ \t]*(?:\n.*)?)?$", re.DOTALL)


class CompletionService:
    """Completions for ``AiManager``; settings are read from the manager on every call,
    so a changed default applies at once."""

    def __init__(self, manager: AiManager) -> None:
        self.manager = manager
        self.chat_only: set[tuple[str, str]] = set()  # (provider, model) without FIM
        self.in_flight = 0

    async def complete(self, body: Any) -> dict[str, Any]:
        """``{text, provider, model, mode, latency_ms}`` for a request body ``{prefix,
        suffix, path?, language?, provider?, model?}``."""
        fields = _checked(body)
        manager = self.manager
        provider_id = (
            fields.get("provider") or manager.completion_provider or manager.default_provider
        )
        model = fields.get("model") or manager.completion_model or manager.default_model
        if not provider_id or not model:
            raise InvalidRequest(
                "Choose a provider and a model for completions first "
                "(AiManager.completion_provider/completion_model, or the session defaults).",
                reason="no_model",
            )
        manager.catalog.get(provider_id)  # NotFound for an unknown provider
        prefix = fields["prefix"][-PREFIX_CHARS:]
        suffix = fields.get("suffix", "")[:SUFFIX_CHARS]
        started = time.perf_counter()
        self.in_flight += 1
        try:
            provider = await manager.provider(provider_id)
            text, mode = await self._ask(provider, model, prefix, suffix, fields)
        finally:
            self.in_flight -= 1
        return {
            "text": _cap_lines(text),
            "provider": provider_id,
            "model": model,
            "mode": mode,
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
        }

    async def _ask(
        self, provider: Provider, model: str, prefix: str, suffix: str, fields: dict[str, str]
    ) -> tuple[str, str]:
        config = provider.config
        key = (config.id, model)
        max_tokens = self.manager.completion_max_tokens
        if (
            isinstance(provider, OpenAIProvider)
            and config.kind == "openai"
            and config.local
            and key not in self.chat_only
        ):
            text = await provider.fill_in_middle(
                model, prefix, suffix, max_tokens=max_tokens, temperature=TEMPERATURE
            )
            if text is not None:
                return text, "fim"
            self.chat_only.add(key)
        text = await self._chat(provider, model, prefix, suffix, fields, max_tokens)
        return strip_fences(text), "chat"

    async def _chat(
        self,
        provider: Provider,
        model: str,
        prefix: str,
        suffix: str,
        fields: dict[str, str],
        max_tokens: int,
    ) -> str:
        about = []
        if fields.get("path"):
            about.append(f"File: {fields['path']}")
        if fields.get("language"):
            about.append(f"Language: {fields['language']}")
        header = "\n".join(about) + "\n\n" if about else ""
        request = ChatRequest(
            model=model,
            messages=[
                Message("system", SYSTEM_PROMPT),
                Message("user", f"{header}{prefix}{CURSOR}{suffix}"),
            ],
            tools=[],
            max_output_tokens=max_tokens,
            temperature=TEMPERATURE,
        )
        pieces: list[str] = []
        lines = 0
        async with aclosing(provider.stream(request)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    pieces.append(event.text)
                    lines += event.text.count("\n")
                    if lines > MAX_LINES + 2:  # room for a fence line; the rest is dropped
                        break
        return "".join(pieces)


def strip_fences(text: str) -> str:
    """The code inside a Markdown fence when a model wrapped its answer in one."""
    match = _FENCED.match(text)
    return match.group("body") if match else text


def _cap_lines(text: str) -> str:
    lines = text.split("\n")
    return "\n".join(lines[:MAX_LINES])


def _checked(body: Any) -> dict[str, str]:
    if not isinstance(body, dict):
        raise InvalidRequest("The body is a JSON object.", reason="invalid_parameter")
    unknown = set(body) - FIELDS
    if unknown:
        raise InvalidRequest(
            f"Unknown fields: {', '.join(sorted(unknown))}.", reason="invalid_parameter"
        )
    limits = {
        "prefix": MAX_INPUT_CHARS,
        "suffix": MAX_INPUT_CHARS,
        "path": 4096,
        "language": 100,
        "provider": 200,
        "model": 200,
    }
    fields: dict[str, str] = {}
    for name, limit in limits.items():
        value = body.get(name)
        if value is None and name != "prefix":
            continue
        if not isinstance(value, str) or len(value) > limit:
            raise InvalidRequest(
                f"'{name}' is text of at most {limit} characters.", reason="invalid_parameter"
            )
        if name in ("provider", "model") and not value:
            raise InvalidRequest(
                f"'{name}' is a name; leave it out for the default.", reason="invalid_parameter"
            )
        fields[name] = value
    return fields
