"""The agent: chat sessions, tools, approvals and plans over the other areas' managers."""

from __future__ import annotations

from typing import Any

from terax_jupyter.services.area import Area, Setup


def _build(setup: Setup, context: Any) -> dict[str, Any]:
    ai = setup.manager_class(
        context.security,
        setup.state_dir,
        files=context.files,
        search=context.search,
        grep=context.grep,
        pty=context.pty,
        kernels=context.kernels,
        secrets=context.secrets,
        browser_source=lambda: context.browser,
        parent=setup.parent,
    )
    return {"ai": ai}


AREA = Area(
    "ai",
    handlers=("handlers", "settings_handlers"),
    openapi=("openapi",),
    manager="manager.AiManager",
    build=_build,
    later=True,
    help="The class of the agent's manager (built on the agent's first use).",
)
