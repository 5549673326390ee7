"""Fixtures of the MCP tests: one live Terax server per module, one MCP session with it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest
from live_terax import LiveTerax, McpSession, start_live_terax
from mcp.client.stdio import StdioServerParameters

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveTerax]:
    server = start_live_terax(tmp_path_factory.mktemp("mcp-home"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def mcp_session(live: LiveTerax) -> Iterator[McpSession]:
    """``python -m terax_jupyter mcp`` started in a folder of the project with no URL or
    token: it finds the live server through its runtime file, as an agent's config would."""
    with (live.home / "mcp.log").open("w") as errlog:
        parameters = StdioServerParameters(
            command=sys.executable,
            args=["-m", "terax_jupyter", "mcp", "--log-level", "INFO"],
            env=live.environment(),
            cwd=str(live.root / "src"),
        )
        session = McpSession(parameters, errlog).start()
        try:
            yield session
        finally:
            session.close()
