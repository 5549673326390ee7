"""Inline code completion: the text to insert at the cursor, from the configured model.

Local OpenAI-compatible servers (Ollama, llama.cpp, LM Studio) are asked for
fill-in-the-middle first (``/completions`` with ``suffix``); a server or model without it is
asked through chat instead, and that is remembered per (provider, model) so the refusal is
paid once. Hosted providers and Anthropic always use chat.

Without a model set for completions (in the request or ``AiManager.completion_*``), completion
follows the chat: the provider and model of the newest session that names both; the session
defaults come last.
"""

from __future__ import annotations

import re
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Protocol

from terax_jupyter.exceptions import InvalidRequest, TeraxError
from terax_jupyter.services.ai.providers.base import ChatRequest, Message, TextDelta
from terax_jupyter.services.ai.providers.openai import OpenAIProvider

if TYPE_CHECKING:
    from terax_jupyter.services.ai.governance import AgentPolicy
    from terax_jupyter.services.ai.providers.base import Provider
    from terax_jupyter.services.ai.providers.catalog import ProviderCatalog
    from terax_jupyter.services.ai.store import AiStore
    from terax_jupyter.services.ai.worker import StoreWorker

PREFIX_CHARS = 6000  # the end of the text before the cursor that is sent
SUFFIX_CHARS = 2000  # the start of the text after it
MAX_INPUT_CHARS = 1_000_000  # a longer prefix or suffix is refused, not cut
MAX_LINES = 20
CHAT_SESSIONS_LOOKED_AT = 20  # the newest sessions searched for the chat's model
FIELDS = {
    "prefix",
    "suffix",
    "path",
    "language",
    "provider",
    "model",
    "chat_provider",
    "chat_model",
}
TEMPERATURE = 0.2
CURSOR = "<CURSOR>"
SYSTEM_PROMPT = (
    "You are a code completion engine. The user sends a file with the marker <CURSOR> where "
    "the cursor is. Complete the code at <CURSOR>; output only the inserted text: no "
    "explanations, no code fences, no repetition of the code before or after the cursor. "
    "Output nothing if nothing fits."
)

_FENCED = re.compile(r"^\s*```[^\n`]*\n(?P<body>.*?)(?:\n?```[ \t]*(?:\n.*)?)?$", re.DOTALL)


class CompletionSettings(Protocol):
    """What completions read of their host (``AiManager``), on every call."""

    completion_provider: str
    completion_model: str
    completion_max_tokens: int
    catalog: ProviderCatalog
    governance: AgentPolicy
    worker: StoreWorker

    @property
    def store(self) -> AiStore: ...

    def defaults(self) -> tuple[str, str]: ...

    async def provider(self, provider_id: str) -> Provider: ...


class CompletionService:
    """Completions for ``AiManager``; settings are read from the manager on every call,
    so a changed default applies at once."""

    def __init__(self, manager: CompletionSettings) -> None:
        self.manager = manager
        self.chat_only: set[tuple[str, str]] = set()  # (provider, model) without FIM
        self.in_flight = 0

    async def complete(self, body: Any) -> dict[str, Any]:
        """``{text, provider, model, mode, latency_ms}`` for a request body ``{prefix,
        suffix, path?, language?, provider?, model?, chat_provider?, chat_model?}``."""
        fields = _checked(body)
        manager = self.manager
        provider_id, model = await self._choice(fields)
        # NotFound for an unknown provider; 403 for one the administrator does not allow.
        manager.governance.check_model(manager.catalog.get(provider_id), model)
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

    async def _choice(self, fields: dict[str, str]) -> tuple[str, str]:
        """(provider, model) of a completion: the request's, else the completion settings,
        else the chat's (``chat_provider``/``chat_model``: what the page's chat uses now;
        without them the newest session that names both), else the session defaults.

        A model belongs to its provider: one from a source that names the chosen provider (or
        none) comes before one of another provider.
        """
        manager = self.manager
        sources = [
            (fields.get("provider", ""), fields.get("model", "")),
            (manager.completion_provider, manager.completion_model),
        ]
        if not _resolved(sources):
            chat = (fields.get("chat_provider", ""), fields.get("chat_model", ""))
            sources.append(chat if chat[0] else await self._chat_choice())
        sources.append(manager.defaults())
        provider_id, model = _resolved(sources) or ("", "")
        if not provider_id or not model:
            raise InvalidRequest(
                "No model is connected for completions: choose a provider and a model in the "
                "AI panel (completions use the chat's model), or set "
                "AiManager.completion_provider and completion_model.",
                reason="no_model",
            )
        return provider_id, model

    async def _chat_choice(self) -> tuple[str, str]:
        """The provider and model of the newest chat session that names both, or ("", "")."""
        manager = self.manager
        try:
            sessions = await manager.worker.call(
                manager.store.list_sessions, query=None, limit=CHAT_SESSIONS_LOOKED_AT, offset=0
            )
        except TeraxError:  # the agent's store is out of service: no chat to follow
            return "", ""
        for session in sessions:
            if session.get("provider") and session.get("model"):
                return str(session["provider"]), str(session["model"])
        return "", ""

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


def _resolved(sources: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The first provider named, with the first model of a source that has no provider or
    that one (else the first model named: a provider chosen alone takes the default model);
    None while either is missing."""
    provider_id = next((provider for provider, _ in sources if provider), "")
    models = [(provider, chosen) for provider, chosen in sources if chosen]
    model = next((chosen for provider, chosen in models if provider in ("", provider_id)), "")
    if not model and models:
        model = models[0][1]
    return (provider_id, model) if provider_id and model else None


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
        "chat_provider": 200,
        "chat_model": 200,
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
        if name in ("provider", "model", "chat_provider", "chat_model") and not value:
            raise InvalidRequest(
                f"'{name}' is a name; leave it out for the default.", reason="invalid_parameter"
            )
        fields[name] = value
    return fields
