"""Reading ``rg --json`` in chunks: lines cut anywhere come out whole, and the caps still hold."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import Timeout
from terax_jupyter.services.fs import ripgrep
from terax_jupyter.services.fs.grep import GrepQuery, GrepSearch

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer

pytestmark = pytest.mark.skipif(ripgrep.find_ripgrep() is None, reason="needs rg")


@pytest.fixture
def grep(tmp_path: Path, terax_security: Callable[..., SecurityLayer]) -> GrepSearch:
    """40 files of 30 lines, 10 of them with "needle" after a non-ASCII word; one secret."""
    root = tmp_path / "project"
    for index in range(40):
        lines = [f"{n} héllo needle {index}" if n % 3 == 0 else f"plain {n}" for n in range(30)]
        (root / f"dir{index % 4}").mkdir(parents=True, exist_ok=True)
        (root / f"dir{index % 4}/file{index}.txt").write_text("\n".join(lines) + "\n")
    (root / ".env").write_text("needle in a secret\n")
    return GrepSearch(terax_security(root))


async def collect(grep: GrepSearch, **options: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    items = [item async for item in grep.search(GrepQuery(pattern="needle", **options))]
    summary = items.pop()
    summary.pop("elapsed_ms")
    # rg searches files in parallel: the order of files varies from run to run.
    return sorted(items, key=lambda item: str(item["path"])), summary


def assert_well_formed(files: list[dict[str, Any]], *, per_file_cap: bool) -> None:
    assert files
    assert all(".env" not in f["path"] for f in files)
    for found in files:
        assert found["truncated"] is per_file_cap
        for match in found["matches"]:
            (start, end), *_ = match["ranges"]
            assert match["text"][start:end] == "needle"


@pytest.mark.parametrize("caps", [{}, {"max_per_file": 2}])
async def test_small_reads_give_the_same_results(
    grep: GrepSearch, monkeypatch: pytest.MonkeyPatch, caps: dict[str, int]
) -> None:
    whole = await collect(grep, **caps)
    monkeypatch.setattr(ripgrep, "_READ_SIZE", 7)
    assert await collect(grep, **caps) == whole
    files, summary = whole
    assert (summary["files"], summary["matches"]) == (40, 40 * caps.get("max_per_file", 10))
    assert_well_formed(files, per_file_cap="max_per_file" in caps)


@pytest.mark.parametrize("per_file", [200, 4])
async def test_small_reads_keep_the_overall_cap(
    grep: GrepSearch, monkeypatch: pytest.MonkeyPatch, per_file: int
) -> None:
    monkeypatch.setattr(ripgrep, "_READ_SIZE", 7)
    files, summary = await collect(grep, max_results=25, max_per_file=per_file)
    assert (summary["matches"], summary["truncated"]) == (25, True)
    assert sum(len(f["matches"]) for f in files) == 25
    assert_well_formed(files, per_file_cap=per_file < 10)


async def test_a_line_past_the_bound_stops_the_search(
    grep: GrepSearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ripgrep, "_STDOUT_LIMIT", 64)
    monkeypatch.setattr(ripgrep, "_READ_SIZE", 16)
    with pytest.raises(Timeout):
        await collect(grep)
