"""What Terax knows of models: context window, output limit, tools, reasoning, images."""

from __future__ import annotations

import builtins
import dataclasses
import json
import logging
import threading
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

from terax_jupyter.exceptions import Conflict, InvalidRequest, NotFound, TeraxError
from terax_jupyter.security.storage import read_private_json, write_private_file
from terax_jupyter.services.ai.providers.catalog import check_id

if TYPE_CHECKING:
    from collections.abc import Iterable

log = logging.getLogger(__name__)

# What a models file that is not JSON raises (it is never overwritten).
_CORRUPT = "{path} is not a models file; move it away to start over."

LOCAL_PROVIDERS = frozenset({"ollama", "lmstudio", "mlx"})
# Unknown models: a local server's usual context (Ollama and LM Studio load far less than a
# model's maximum unless told), and what most hosted models offer today.
LOCAL_DEFAULT = (32768, 4096)
HOSTED_DEFAULT = (128000, 8192)
MAX_CONTEXT = 10_000_000
# OpenRouter-style "vendor/model" ids: the vendor's table answers for them.
VENDORS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gemini",
    "x-ai": "xai",
    "mistralai": "mistral",
    "deepseek": "deepseek",
}
# Dated or tagged variants: "gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929", "grok-4:latest".
_VARIANT_SEPARATORS = ("-", ":", "@")


@dataclass(frozen=True)
class ModelInfo:
    provider: str
    id: str
    label: str
    context_window: int
    max_output_tokens: int
    tools: bool = True
    reasoning: bool = False
    source: Literal["builtin", "user", "default"] = "builtin"
    # Whether the model reads images (tool results then show them); False when unknown.
    # US dollars per million tokens, when the user or an administrator says; prices change
    # too often to ship, so a built-in model has none and its turns show no cost.
    input_price: float | None = None
    output_price: float | None = None
    vision: bool = False

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """What a call cost in US dollars, or None without prices."""
        if self.input_price is None or self.output_price is None:
            return None
        return (input_tokens * self.input_price + output_tokens * self.output_price) / 1e6


def _m(
    provider: str,
    model: str,
    label: str,
    context: int,
    output: int,
    *,
    tools: bool = True,
    reasoning: bool = False,
) -> ModelInfo:
    vision = model in READS_IMAGES.get(provider, ())
    return ModelInfo(provider, model, label, context, output, tools, reasoning, vision=vision)


# The built-in models that take images (a tool result's plots are shown to them).
READS_IMAGES = {
    "openai": {
        "gpt-5",
        "gpt-5-mini",
        "gpt-4.1",
        "gpt-4.1-mini",
        "gpt-4o",
        "gpt-4o-mini",
        "o3",
        "o4-mini",
    },
    "anthropic": {"claude-opus-4-1", "claude-sonnet-4-5", "claude-sonnet-4-0", "claude-haiku-4-5"},
    "gemini": {"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.0-flash"},
    "mistral": {"mistral-medium-latest"},
    "xai": {"grok-4"},
}


BUILTIN_MODELS: tuple[ModelInfo, ...] = (
    _m("openai", "gpt-5", "GPT-5", 400000, 128000, reasoning=True),
    _m("openai", "gpt-5-mini", "GPT-5 mini", 400000, 128000, reasoning=True),
    _m("openai", "gpt-4.1", "GPT-4.1", 1047576, 32768),
    _m("openai", "gpt-4.1-mini", "GPT-4.1 mini", 1047576, 32768),
    _m("openai", "gpt-4o", "GPT-4o", 128000, 16384),
    _m("openai", "gpt-4o-mini", "GPT-4o mini", 128000, 16384),
    _m("openai", "o3", "o3", 200000, 100000, reasoning=True),
    _m("openai", "o4-mini", "o4-mini", 200000, 100000, reasoning=True),
    _m("anthropic", "claude-opus-4-1", "Claude Opus 4.1", 200000, 32000, reasoning=True),
    _m("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5", 200000, 64000, reasoning=True),
    _m("anthropic", "claude-sonnet-4-0", "Claude Sonnet 4", 200000, 64000, reasoning=True),
    _m("anthropic", "claude-haiku-4-5", "Claude Haiku 4.5", 200000, 64000, reasoning=True),
    _m("anthropic", "claude-3-5-haiku", "Claude Haiku 3.5", 200000, 8192),
    _m("gemini", "gemini-2.5-pro", "Gemini 2.5 Pro", 1048576, 65536, reasoning=True),
    _m("gemini", "gemini-2.5-flash", "Gemini 2.5 Flash", 1048576, 65536, reasoning=True),
    _m("gemini", "gemini-2.0-flash", "Gemini 2.0 Flash", 1048576, 8192),
    _m("groq", "llama-3.3-70b-versatile", "Llama 3.3 70B", 131072, 32768),
    _m("groq", "openai/gpt-oss-120b", "GPT-OSS 120B", 131072, 65536, reasoning=True),
    _m("groq", "moonshotai/kimi-k2-instruct", "Kimi K2", 131072, 16384),
    _m("deepseek", "deepseek-chat", "DeepSeek Chat", 128000, 8192),
    _m("deepseek", "deepseek-reasoner", "DeepSeek Reasoner", 128000, 65536, reasoning=True),
    _m("mistral", "mistral-large-latest", "Mistral Large", 131072, 8192),
    _m("mistral", "mistral-medium-latest", "Mistral Medium", 131072, 8192),
    _m("mistral", "codestral-latest", "Codestral", 256000, 8192),
    _m("xai", "grok-4", "Grok 4", 256000, 64000, reasoning=True),
    _m("xai", "grok-code-fast-1", "Grok Code Fast", 256000, 10000, reasoning=True),
    _m("xai", "grok-3-mini", "Grok 3 mini", 131072, 16384, reasoning=True),
    _m("cerebras", "qwen-3-coder-480b", "Qwen 3 Coder 480B", 131072, 32768),
    _m("cerebras", "llama-3.3-70b", "Llama 3.3 70B", 65536, 8192),
)


class ModelRegistry:
    """The built-in table plus models a user added (kept in a private file).

    ``lookup`` always answers: a model nobody described gets defaults, so a new model works
    the day it ships.
    """

    def __init__(
        self, store_path: str | None, *, local_providers: Iterable[str] = LOCAL_PROVIDERS
    ) -> None:
        self._store_path = store_path
        self._local = frozenset(local_providers)
        self._builtin = {(m.provider, m.id): m for m in BUILTIN_MODELS}
        self._lock = threading.Lock()
        self._user: dict[tuple[str, str], ModelInfo] | None = None

    def lookup(self, provider: str, model: str, *, local: bool | None = None) -> ModelInfo:
        """What is known of ``model`` at ``provider``. ``local`` picks the defaults for an
        unknown model (None: whether ``provider`` is one of the local built-ins)."""
        with self._lock:
            user = self._user_models()
        found = user.get((provider, model)) or self._known(provider, model)
        if found is None and "/" in model:
            vendor, _, rest = model.partition("/")
            if vendor in VENDORS:
                found = self._known(VENDORS[vendor], rest)
        if found is not None:
            if (found.provider, found.id) == (provider, model):
                return found
            return dataclasses.replace(found, provider=provider, id=model, label=model)
        is_local = provider in self._local if local is None else local
        context, output = LOCAL_DEFAULT if is_local else HOSTED_DEFAULT
        return ModelInfo(provider, model, model, context, output, source="default")

    def _known(self, provider: str, model: str) -> ModelInfo | None:
        exact = self._builtin.get((provider, model))
        if exact is not None:
            return exact
        # The longest described id the name extends ("gpt-4o-mini-2024-07-18" -> gpt-4o-mini);
        # OpenRouter writes versions with dots ("claude-sonnet-4.5"), the vendors with dashes.
        wanted = model.replace(".", "-")
        best: ModelInfo | None = None
        for (owner, known), info in self._builtin.items():
            name = known.replace(".", "-")
            if owner != provider or not (
                wanted == name or any(wanted.startswith(name + s) for s in _VARIANT_SEPARATORS)
            ):
                continue
            if best is None or len(known) > len(best.id):
                best = info
        return best

    def list(self, provider: str | None = None) -> builtins.list[ModelInfo]:
        """Built-in models, then the user's (a user entry replaces a built-in of its name)."""
        with self._lock:
            user = self._user_models()
        models = [user.get(key, info) for key, info in self._builtin.items()]
        models += [info for key, info in user.items() if key not in self._builtin]
        return [m for m in models if provider is None or m.provider == provider]

    def add(
        self,
        provider: str,
        model: str,
        *,
        context_window: int,
        max_output_tokens: int | None = None,
        label: str | None = None,
        tools: bool = True,
        reasoning: bool = False,
        vision: bool = False,
        input_price: float | None = None,
        output_price: float | None = None,
    ) -> ModelInfo:
        """Describe a model (or correct a built-in's numbers); kept across restarts."""
        info = _checked(
            {
                "provider": provider,
                "id": model,
                "label": label if label is not None else model,
                "context_window": context_window,
                "max_output_tokens": (
                    max_output_tokens
                    if max_output_tokens is not None
                    else min(context_window, HOSTED_DEFAULT[1])
                ),
                "tools": tools,
                "reasoning": reasoning,
                "vision": vision,
                "input_price": input_price,
                "output_price": output_price,
            }
        )
        with self._lock:
            user = dict(self._user_models())
            user[(info.provider, info.id)] = info
            self._save(user)
        return info

    def remove(self, provider: str, model: str) -> None:
        """Forget a model the user added; built-in models stay."""
        with self._lock:
            user = dict(self._user_models())
            if user.pop((provider, model), None) is None:
                if (provider, model) in self._builtin:
                    raise Conflict(
                        f"{model} is a built-in model of {provider}; it cannot be removed.",
                        reason="builtin_model",
                    )
                raise NotFound(
                    f"No model {model!r} of {provider} was added.", reason="model_not_found"
                )
            self._save(user)

    # -- the store --------------------------------------------------------------------------

    def _user_models(self) -> dict[tuple[str, str], ModelInfo]:
        if self._user is not None:
            return self._user
        models: dict[tuple[str, str], ModelInfo] = {}
        data = read_private_json(self._store_path, _CORRUPT, reason="models_store_corrupt")
        stored = data.get("models") if isinstance(data, dict) else None
        for item in stored if isinstance(stored, list) else []:
            try:
                info = _checked(item)
            except (TeraxError, TypeError, AttributeError) as error:
                log.warning("Ignoring a stored model: %s", error)
                continue
            models[(info.provider, info.id)] = info
        self._user = models
        return models

    def _save(self, models: dict[tuple[str, str], ModelInfo]) -> None:
        if self._store_path:
            items = [
                {k: v for k, v in m.to_json().items() if k != "source"} for m in models.values()
            ]
            data = {"version": 1, "models": items}
            write_private_file(self._store_path, json.dumps(data, indent=2))
        self._user = models


MAX_PRICE = 10_000


def _checked(item: Any) -> ModelInfo:
    if not isinstance(item, dict):
        raise InvalidRequest("A model is an object.", reason="invalid_model")
    provider = check_id(item.get("provider"))
    model = _name(item.get("id"), "The model id", 200)
    label = _name(item.get("label", model), "The label", 100)
    context = item.get("context_window")
    output = item.get("max_output_tokens")
    if not _count(context, 1024, MAX_CONTEXT):
        raise InvalidRequest(
            f"context_window is a whole number from 1024 to {MAX_CONTEXT}.",
            reason="invalid_model",
        )
    if not _count(output, 1, context):
        raise InvalidRequest(
            "max_output_tokens is a whole number from 1 to the context window.",
            reason="invalid_model",
        )
    tools, reasoning = item.get("tools", True), item.get("reasoning", False)
    vision = item.get("vision", False)
    if not all(isinstance(flag, bool) for flag in (tools, reasoning, vision)):
        raise InvalidRequest(
            "tools, reasoning and vision are true or false.", reason="invalid_model"
        )
    prices = [item.get("input_price"), item.get("output_price")]
    for price in prices:
        if price is not None and not (
            isinstance(price, (int, float))
            and not isinstance(price, bool)
            and 0 <= price <= MAX_PRICE
        ):
            raise InvalidRequest(
                f"input_price and output_price are US dollars per million tokens, 0 to "
                f"{MAX_PRICE}, or null.",
                reason="invalid_model",
            )
    input_price, output_price = (float(p) if p is not None else None for p in prices)
    return ModelInfo(
        provider,
        model,
        label,
        context,
        output,
        tools,
        reasoning,
        "user",
        input_price,
        output_price,
        vision,
    )


def _name(value: Any, what: str, limit: int) -> str:
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > limit
        or any(unicodedata.category(c)[0] in "CZ" and c != " " for c in value)
    ):
        raise InvalidRequest(
            f"{what} is 1 to {limit} characters without control characters or line breaks.",
            reason="invalid_model",
        )
    return value.strip()


def _count(value: Any, low: int, high: int) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
