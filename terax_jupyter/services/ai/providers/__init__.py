"""Model providers: the neutral types, the two wire formats, the catalog and the factory."""

from __future__ import annotations

from terax_jupyter.services.ai.providers.anthropic import AnthropicProvider
from terax_jupyter.services.ai.providers.base import (
    ChatRequest,
    Finished,
    Message,
    Provider,
    ProviderConfig,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    ToolSpec,
    Usage,
)
from terax_jupyter.services.ai.providers.catalog import BUILTINS, ProviderCatalog
from terax_jupyter.services.ai.providers.factory import ProviderFactory
from terax_jupyter.services.ai.providers.openai import OpenAIProvider
from terax_jupyter.services.ai.providers.registry import ModelInfo, ModelRegistry
from terax_jupyter.services.ai.providers.retry import RetryPolicy

__all__ = [
    "BUILTINS",
    "AnthropicProvider",
    "ChatRequest",
    "Finished",
    "Message",
    "ModelInfo",
    "ModelRegistry",
    "OpenAIProvider",
    "Provider",
    "ProviderCatalog",
    "ProviderConfig",
    "ProviderFactory",
    "ReasoningDelta",
    "RetryPolicy",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallReady",
    "ToolCallStarted",
    "ToolSpec",
    "Usage",
]
