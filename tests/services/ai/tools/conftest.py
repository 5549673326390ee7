"""Fixtures of the tool tests: a workspace root and a tool context over it (a module that
needs files in its workspace overrides ``ws``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .tool_context import make_context

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.ai.tools.base import ToolContext


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace root, empty."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def context(terax_security: Callable[..., SecurityLayer], ws: Path) -> ToolContext:
    """A tool context over the workspace ``ws``, through the real security layer."""
    return make_context(terax_security(ws))
