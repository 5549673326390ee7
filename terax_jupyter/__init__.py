"""terax-jupyter: a terminal-first, AI-native development environment inside JupyterLab."""

from __future__ import annotations

from typing import Any

from terax_jupyter._version import __version__

__all__ = ["__version__"]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from terax_jupyter.app import TeraxApp

    return [{"module": "terax_jupyter", "app": TeraxApp}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "terax-jupyter"}]
