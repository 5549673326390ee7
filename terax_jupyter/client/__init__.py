"""A client of a running Terax server: find it (``discovery``), call its REST API (``api``).

Used by ``jupyter terax mcp``; nothing here touches files, git, terminals or the browser
itself: every operation is a request to the server, under its security layer.
"""

from __future__ import annotations

from terax_jupyter.client.api import SyncTeraxClient, TeraxAPIError, TeraxClient
from terax_jupyter.client.discovery import DiscoveryError, ServerTarget, discover

__all__ = [
    "DiscoveryError",
    "ServerTarget",
    "SyncTeraxClient",
    "TeraxAPIError",
    "TeraxClient",
    "discover",
]
