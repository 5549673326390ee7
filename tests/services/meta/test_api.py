"""Server facts: version, root, read-only mode, engines and limits."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter import __version__

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    Api = Callable[..., Awaitable[Any]]

pytestmark = pytest.mark.every_base_url


@pytest.fixture
def server_root(jp_root_dir: Path) -> str:
    return os.path.realpath(jp_root_dir)


async def test_info(server_root: str, terax_api: Api) -> None:
    info = await terax_api("info")
    assert info == {
        "version": __version__,
        "server_root": server_root,
        "read_only": False,
        "search_engine": "ripgrep",
        "grep_engine": "ripgrep",
        "limits": {"max_read_bytes": 10 * 1024 * 1024, "max_write_bytes": 50 * 1024 * 1024},
    }


@pytest.mark.parametrize(
    "terax_config",
    [
        {
            "TeraxApp": {"read_only": True},
            "FileManager": {"max_read_bytes": 1000, "max_write_bytes": 2000},
            "GrepSearch": {"ripgrep_path": "/nonexistent/rg"},
            "FileSearch": {"ripgrep_path": "/nonexistent/rg"},
        }
    ],
)
async def test_info_reflects_configuration(terax_api: Api) -> None:
    info = await terax_api("info")
    assert info["read_only"] is True
    assert (info["search_engine"], info["grep_engine"]) == ("python", "python")
    assert info["limits"] == {"max_read_bytes": 1000, "max_write_bytes": 2000}


async def test_openapi_names_the_base_url(terax_api: Api, jp_base_url: str) -> None:
    document = await terax_api("openapi.json")
    assert document["servers"] == [{"url": jp_base_url.rstrip("/") or "/"}]
