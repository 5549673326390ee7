"""Keys: provider API keys kept on the server (keychain or a 0600 file), never sent out."""

from __future__ import annotations

from typing import Any

from terax_jupyter.services.area import Area, Setup


def _build(setup: Setup, parts: Any) -> dict[str, Any]:
    return {"secrets": setup.manager_class(parts.security, setup.state_dir, parent=setup.parent)}


AREA = Area(
    "secrets",
    handlers=("handlers",),
    openapi=("openapi",),
    manager="manager.SecretsManager",
    build=_build,
    help="The class of the keys manager (provider API keys kept on the server).",
)
