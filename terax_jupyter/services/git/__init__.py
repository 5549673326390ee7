"""Source control: repository discovery, status, diffs, hunk staging, commits, branches, history."""

from __future__ import annotations

from typing import Any

from terax_jupyter.services.area import Area, Setup


def _build(setup: Setup, parts: Any) -> dict[str, Any]:
    return {"git": setup.manager_class(parts.security, setup.state_dir, parent=setup.parent)}


AREA = Area(
    "git",
    handlers=("handlers", "history_handlers"),
    openapi=("openapi", "history_openapi"),
    manager="manager.GitManager",
    build=_build,
    help="The class of the source control manager (the git CLI on checked repositories).",
)
