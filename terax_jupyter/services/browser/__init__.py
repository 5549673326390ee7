"""The headless browser the agent drives: pages, workflows and their replays."""

from __future__ import annotations

from typing import Any

from terax_jupyter.services.area import Area, Setup


def _build(setup: Setup, context: Any) -> dict[str, Any]:
    browser = setup.manager_class(
        setup.state_dir, redactor=context.security.redactor, parent=setup.parent
    )
    browser.policy = context.security.policy
    return {"browser": browser}


AREA = Area(
    "browser",
    handlers=("handlers",),
    openapi=("openapi",),
    manager="manager.BrowserManager",
    build=_build,
    later=True,
    help="The class of the headless browser's manager (built on the browser's first use).",
)
