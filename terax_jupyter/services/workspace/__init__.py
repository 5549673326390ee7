"""Workspace roots: list them, and add or remove a user root by an explicit, audited action."""

from __future__ import annotations

from terax_jupyter.services.area import Area

# The roots are the security layer's own (no manager of their own).
AREA = Area("workspace", handlers=("handlers",), openapi=("openapi",))
