"""Web preview: dev servers found in terminals, and the proxy that shows them in Lab."""

from __future__ import annotations

from typing import Any

from terax_jupyter.services.area import Area, Setup


def _build(setup: Setup, parts: Any) -> dict[str, Any]:
    serverapp = setup.serverapp
    preview = setup.manager_class(
        parts.pty,
        base_url=serverapp.base_url,
        own_ports=lambda: {serverapp.port},
        state_dir=setup.state_dir,
        parent=setup.parent,
    )
    preview.policy = parts.security.policy
    return {"preview": preview}


AREA = Area(
    "preview",
    handlers=("handlers",),
    openapi=("openapi",),
    manager="manager.PreviewManager",
    build=_build,
    help="The class of the web preview's manager (dev servers and their proxy).",
)
