"""Hard links to a secret or an outside file through every content path: read, grep, copy, agent."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.exceptions import AccessDenied
from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.ai.tools.base import ToolContext
from terax_jupyter.services.ai.tools.files import Grep, ReadFile
from terax_jupyter.services.fs.grep import GrepQuery, GrepSearch
from terax_jupyter.services.fs.manager import FileManager
from terax_jupyter.services.fs.search import FileSearch
from tests.services.ai.tools.tool_context import Ledger

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer

    Api = Callable[..., Awaitable[Any]]

SECRET = "TOKEN_5b1e_never_read"
OUTSIDE = "OUTSIDE_77c2_never_read"
NO_RIPGREP = "/nonexistent/bin/rg"


def link_secrets(root: Path, outside: Path) -> None:
    """``notes.txt`` is another name of ``.env``; ``src/vendor.txt`` of a file outside the root."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / ".env").write_text(f"{SECRET}=1 needle\n")
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "private.txt").write_text(f"{OUTSIDE} needle\n")
    (root / "src" / "plain.txt").write_text("plain needle\n")
    os.link(root / ".env", root / "notes.txt")
    os.link(outside / "private.txt", root / "src" / "vendor.txt")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    link_secrets(folder, tmp_path / "outside")
    return folder


@pytest.fixture
def security(terax_security: Callable[..., SecurityLayer], root: Path) -> SecurityLayer:
    return terax_security(root)


async def test_the_manager_neither_reads_nor_copies_them(
    security: SecurityLayer, root: Path
) -> None:
    files = FileManager(security)
    for path in ("notes.txt", "src/vendor.txt"):
        with pytest.raises(AccessDenied) as caught:
            await files.read(path)
        assert caught.value.reason == "hard_link"
        with pytest.raises(AccessDenied):
            await files.copy(path, f"{path}.copy")
        assert not (root / f"{path}.copy").exists()
    assert (await files.read("src/plain.txt"))["content"] == "plain needle\n"
    # Saving through Terax gives the name its own file; the other name keeps its content.
    await files.write("notes.txt", "mine\n", overwrite=True)
    assert (await files.read("notes.txt"))["content"] == "mine\n"
    assert SECRET in (root / ".env").read_text()


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_grep_does_not_return_them(security: SecurityLayer, engine: str) -> None:
    search = GrepSearch(security, ripgrep_path=NO_RIPGREP if engine == "python" else "")
    assert search.engine() == engine
    items = [item async for item in search.search(GrepQuery("needle"))]
    assert [i["path"] for i in items if i["type"] == "file"] == ["src/plain.txt"]
    assert SECRET not in repr(items)
    assert OUTSIDE not in repr(items)


async def test_the_agent_tools_do_not_read_them(security: SecurityLayer) -> None:
    context = ToolContext(
        session_id="s1",
        security=security,
        files=FileManager(security),
        search=FileSearch(security),
        grep=GrepSearch(security),
        reads=Ledger(),
        processes=None,  # type: ignore[arg-type]  # no tool here starts processes
        emit=lambda _event: None,
    )
    for path in ("notes.txt", "src/vendor.txt"):
        with pytest.raises(AccessDenied, match="hard links"):
            await ReadFile().run({"path": path}, context)
    found = await Grep().run({"pattern": "needle"}, context)
    assert "src/plain.txt" in found.content
    assert SECRET not in found.content
    assert OUTSIDE not in found.content


async def test_the_api_refuses_them_and_says_how_to_proceed(
    jp_root_dir: Path, tmp_path: Path, terax_api: Api
) -> None:
    link_secrets(jp_root_dir, tmp_path / "outside")
    for route, kwargs in [
        ("fs/file", {"params": {"path": "notes.txt"}}),
        ("fs/file", {"params": {"path": "src/vendor.txt"}}),
        ("fs/copy", {"method": "POST", "body": {"path": "notes.txt", "new_path": "n2.txt"}}),
    ]:
        with pytest.raises(HTTPClientError) as caught:
            await terax_api(route, **kwargs)
        body = error_of(caught.value)
        assert (caught.value.code, body["reason"]) == (403, "hard_link"), route
        assert "cp -p" in body["message"]
        assert SECRET not in body["message"]
    assert not (jp_root_dir / "n2.txt").exists()
    stream = await terax_api("fs/grep", params={"pattern": "needle"})
    assert '"src/plain.txt"' in stream
    assert SECRET not in stream
    assert OUTSIDE not in stream
    # The names are still listed (a name is not a secret); their content is what is refused.
    listing = await terax_api("fs/list", params={"path": ""})
    assert {"notes.txt", "src"} <= {entry["name"] for entry in listing["entries"]}


async def test_package_stores_are_read_by_default_over_the_api(
    jp_root_dir: Path, tmp_path: Path, terax_api: Api
) -> None:
    store = jp_root_dir / "node_modules" / ".pnpm" / "pkg@1.0.0" / "node_modules" / "pkg"
    store.mkdir(parents=True)
    cache = tmp_path / "pnpm-store"
    cache.mkdir()
    (cache / "index.js").write_text("module.exports = 1;\n")
    os.link(cache / "index.js", store / "index.js")
    path = "node_modules/.pnpm/pkg@1.0.0/node_modules/pkg/index.js"
    assert (await terax_api("fs/file", params={"path": path}))["content"] == "module.exports = 1;\n"


@pytest.mark.parametrize("terax_config", [{"TeraxApp": {"hard_links": "refuse"}}])
async def test_an_administrator_can_refuse_them_in_stores_too(
    jp_root_dir: Path, tmp_path: Path, terax_api: Api
) -> None:
    store = jp_root_dir / ".venv" / "lib" / "python3.11" / "site-packages" / "pkg"
    store.mkdir(parents=True)
    cache = tmp_path / "uv-cache"
    cache.mkdir()
    (cache / "mod.py").write_text("X = 1\n")
    os.link(cache / "mod.py", store / "mod.py")
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("fs/file", params={"path": ".venv/lib/python3.11/site-packages/pkg/mod.py"})
    assert error_of(caught.value)["reason"] == "hard_link"
