"""Terminal service: shells on PTYs with flow control, shell integration and command blocks."""

from __future__ import annotations

from typing import Any

from terax_jupyter.services.area import Area, Setup


def _build(setup: Setup, parts: Any) -> dict[str, Any]:
    return {"pty": setup.manager_class(parts.security, setup.state_dir, parent=setup.parent)}


AREA = Area(
    "pty",
    handlers=("handlers",),
    openapi=("openapi",),
    manager="manager.PtyManager",
    build=_build,
    help="The class of the terminal manager (shells on PTYs).",
)
