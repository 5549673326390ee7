"""The model registry: built-in numbers, defaults for unknown models, a user's additions."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import Conflict, InvalidRequest, NotFound
from terax_jupyter.services.ai.providers.registry import ModelInfo, ModelRegistry

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def store(tmp_path: Path) -> str:
    return str(tmp_path / "state" / "models.json")


def test_built_in_models() -> None:
    registry = ModelRegistry(None)
    sonnet = registry.lookup("anthropic", "claude-sonnet-4-5")
    assert (sonnet.context_window, sonnet.tools, sonnet.source) == (200000, True, "builtin")
    assert registry.lookup("openai", "gpt-4o-mini").max_output_tokens == 16384
    providers = {m.provider for m in registry.list()}
    assert {"openai", "anthropic", "gemini", "groq", "deepseek", "mistral", "xai"} <= providers
    assert all(m.provider == "gemini" for m in registry.list("gemini"))


def test_dated_and_routed_names_find_their_model() -> None:
    registry = ModelRegistry(None)
    dated = registry.lookup("openai", "gpt-4o-mini-2024-07-18")
    assert (dated.id, dated.context_window, dated.max_output_tokens) == (
        "gpt-4o-mini-2024-07-18",
        128000,
        16384,
    )
    assert registry.lookup("anthropic", "claude-sonnet-4-5-20250929").max_output_tokens == 64000
    routed = registry.lookup("openrouter", "anthropic/claude-sonnet-4.5")
    assert (routed.provider, routed.id, routed.context_window) == (
        "openrouter",
        "anthropic/claude-sonnet-4.5",
        200000,
    )
    assert registry.lookup("openrouter", "google/gemini-2.5-pro").context_window == 1048576
    # A prefix that is not a whole name part does not count.
    assert registry.lookup("openai", "gpt-4ox").source == "default"


def test_unknown_models_get_defaults() -> None:
    registry = ModelRegistry(None)
    local = registry.lookup("ollama", "qwen2.5-coder:7b")
    assert (local.context_window, local.tools, local.source) == (32768, True, "default")
    hosted = registry.lookup("groq", "brand-new-model")
    assert hosted.context_window == 128000
    assert registry.lookup("my-box", "m", local=True).context_window == 32768
    assert registry.lookup("ollama", "m", local=False).context_window == 128000


def test_added_models_persist_and_can_be_removed(store: str) -> None:
    registry = ModelRegistry(store)
    added = registry.add("ollama", "qwen2.5-coder:32b", context_window=65536, reasoning=True)
    assert added == ModelInfo(
        "ollama", "qwen2.5-coder:32b", "qwen2.5-coder:32b", 65536, 8192, True, True, "user"
    )
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    reopened = ModelRegistry(store)
    assert reopened.lookup("ollama", "qwen2.5-coder:32b") == added
    assert added in reopened.list("ollama")
    # A user entry corrects a built-in's numbers, and removing it brings them back.
    reopened.add("openai", "gpt-4o", context_window=64000, max_output_tokens=4000, tools=False)
    assert reopened.lookup("openai", "gpt-4o").tools is False
    assert [m.context_window for m in reopened.list("openai") if m.id == "gpt-4o"] == [64000]
    reopened.remove("openai", "gpt-4o")
    assert reopened.lookup("openai", "gpt-4o").context_window == 128000
    reopened.remove("ollama", "qwen2.5-coder:32b")
    assert ModelRegistry(store).lookup("ollama", "qwen2.5-coder:32b").source == "default"
    with pytest.raises(NotFound):
        reopened.remove("ollama", "qwen2.5-coder:32b")
    with pytest.raises(Conflict) as caught:
        reopened.remove("openai", "gpt-4o")
    assert caught.value.reason == "builtin_model"


@pytest.mark.parametrize(
    ("provider", "model", "options"),
    [
        ("Bad Provider", "m", {"context_window": 8192}),
        ("ollama", "", {"context_window": 8192}),
        ("ollama", "a\nb", {"context_window": 8192}),
        ("ollama", "m", {"context_window": 100}),
        ("ollama", "m", {"context_window": True}),
        ("ollama", "m", {"context_window": 8192, "max_output_tokens": 9000}),
        ("ollama", "m", {"context_window": 8192, "max_output_tokens": 0}),
        ("ollama", "m", {"context_window": 8192, "tools": "yes"}),
    ],
)
def test_bad_models_are_refused(
    store: str, provider: str, model: str, options: dict[str, object]
) -> None:
    with pytest.raises(InvalidRequest):
        ModelRegistry(store).add(provider, model, **options)  # type: ignore[arg-type]
    assert not os.path.exists(store)


def test_which_models_read_images(store: str) -> None:
    registry = ModelRegistry(store)
    assert registry.lookup("anthropic", "claude-sonnet-4-5-20250929").vision is True
    assert registry.lookup("openrouter", "openai/gpt-4o").vision is True  # routed
    assert registry.lookup("deepseek", "deepseek-chat").vision is False
    assert registry.lookup("ollama", "llava:13b").vision is False  # unknown: no images
    added = registry.add("ollama", "llava:13b", context_window=32768, vision=True)
    assert added.vision is True
    assert ModelRegistry(store).lookup("ollama", "llava:13b").vision is True  # kept
    with pytest.raises(InvalidRequest) as caught:
        registry.add("ollama", "m", context_window=32768, vision="yes")  # type: ignore[arg-type]
    assert "vision" in caught.value.message
    assert registry.lookup("ollama", "m").source == "default"  # nothing was added
