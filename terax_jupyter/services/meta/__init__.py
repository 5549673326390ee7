"""What the server is: version, settings a client needs, and the OpenAPI document."""

from __future__ import annotations

from terax_jupyter.services.area import Area

AREA = Area("meta", handlers=("handlers",), openapi=("openapi",))
