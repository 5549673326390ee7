"""Races at the seams of grep, search, glob and watch: nothing protected or outside leaves.

A thread swaps, as fast as it can, a file for a symbolic link to ``.env`` and a folder for a
link to a folder outside the workspace (with ``renameat2(RENAME_EXCHANGE)``, so that the name
always exists), while real ripgrep searches run through the managers and the HTTP API.
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import json
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.exceptions import PathChanged, http_status_for
from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.fs.grep import GrepQuery, GrepSearch
from terax_jupyter.services.fs.search import FileSearch
from terax_jupyter.services.fs.watch import WatchService

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from terax_jupyter.security import SecurityLayer

    Api = Callable[..., Awaitable[Any]]

SECRET = "SECRET_MARKER_7f1d"
OUTSIDE = "OUTSIDE_MARKER_93ac"
OUTSIDE_NAME = "only_outside_0b2e.txt"
NO_RIPGREP = "/nonexistent/bin/rg"

_libc = ctypes.CDLL(None, use_errno=True)
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange(first: Path, second: Path) -> None:
    """Swap two names atomically (Linux ``renameat2``), or by three renames elsewhere."""
    renameat2 = getattr(_libc, "renameat2", None)
    if renameat2 is not None:
        result = renameat2(
            _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
        )
        if result == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.ENOSYS, errno.EINVAL):
            raise OSError(code, os.strerror(code), str(first))
    spare = first.with_name(first.name + ".spare")
    os.rename(first, spare)
    os.rename(second, first)
    os.rename(spare, second)


class Swapper:
    """Swaps each (name, alternative) pair over and over in a thread while in use."""

    def __init__(self, pairs: list[tuple[Path, Path]]) -> None:
        self.pairs = pairs
        self.swaps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for first, second in self.pairs:
                exchange(first, second)
                self.swaps += 1

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def plant(root: Path, outside: Path) -> list[tuple[Path, Path]]:
    """The race's props under ``root``; returns the pairs a Swapper swaps.

    ``swap.txt`` (an ordinary file) trades places with ``swap.alt`` (a link to ``.env``);
    ``dir`` (a folder) with ``dir.alt`` (a link to ``outside``, which holds a file of the same
    name as the one in ``dir`` and a name found nowhere in the workspace).
    """
    root.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    (root / ".env").write_text(f"{SECRET} needle\n")
    (outside / "x.txt").write_text(f"{OUTSIDE} needle\n")
    (outside / OUTSIDE_NAME).write_text(f"{OUTSIDE} needle\n")
    (root / "swap.txt").write_text("plain needle\n")
    (root / "swap.alt").symlink_to(root / ".env")
    (root / "dir").mkdir()
    (root / "dir" / "x.txt").write_text("inside needle\n")
    (root / "dir.alt").symlink_to(outside, target_is_directory=True)
    for index in range(8):
        (root / f"filler-{index}.txt").write_text("filler needle\n")
    return [(root / "swap.txt", root / "swap.alt"), (root / "dir", root / "dir.alt")]


def leaked(text: str) -> bool:
    return SECRET in text or OUTSIDE in text or OUTSIDE_NAME in text


@pytest.fixture
def raced(tmp_path: Path) -> tuple[Path, list[tuple[Path, Path]]]:
    root = tmp_path / "root"
    return root, plant(root, tmp_path / "outside")


@pytest.fixture
def security(
    terax_security: Callable[..., SecurityLayer], raced: tuple[Path, Any]
) -> SecurityLayer:
    return terax_security(raced[0])


# -- grep -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("engine", "greps"), [("ripgrep", 1000), ("python", 100)])
async def test_grep_under_a_swap_race_returns_nothing_protected_or_outside(
    security: SecurityLayer, raced: tuple[Path, list[tuple[Path, Path]]], engine: str, greps: int
) -> None:
    search = GrepSearch(security, ripgrep_path=NO_RIPGREP if engine == "python" else "")
    assert search.engine() == engine
    leaks: list[dict[str, Any]] = []
    seen_inside: set[str] = set()
    with Swapper(raced[1]) as swapper:
        for _ in range(greps):
            async for item in search.search(GrepQuery("needle")):
                if item["type"] != "file":
                    continue
                for match in item["matches"]:
                    if leaked(match["text"]) or leaked(item["path"]):
                        leaks.append(item)
                    seen_inside.add(match["text"])
    assert leaks == []
    assert swapper.swaps > 0
    # The race was real: the ordinary file and folder were found in their ordinary states.
    assert {"plain needle", "inside needle", "filler needle"} <= seen_inside


async def test_grep_race_through_the_api(
    jp_root_dir: Path, tmp_path: Path, terax_api: Api, jp_fetch: Any
) -> None:
    pairs = plant(jp_root_dir, tmp_path / "outside")
    with Swapper(pairs) as swapper:
        for _ in range(25):
            response = await jp_fetch("terax", "api", "fs", "grep", params={"pattern": "needle"})
            assert response.code == 200
            text = response.body.decode()
            assert not leaked(text)
            items = [json.loads(line) for line in text.splitlines()]
            assert items[-1]["type"] == "summary"
            assert {i["path"] for i in items[:-1]} >= {f"filler-{n}.txt" for n in range(8)}
    assert swapper.swaps > 0


async def test_grep_keeps_files_rg_transcodes_or_reads_far_into(
    tmp_path: Path, terax_security: Any
) -> None:
    """Re-reading what rg reported must agree with rg where its offsets are not plain."""
    root = tmp_path / "enc"
    root.mkdir()
    (root / "bom8.txt").write_bytes(b"\xef\xbb\xbfhello needle\nsecond needle \xff\n")
    (root / "le16.txt").write_bytes("hi\nneedle here é\n".encode("utf-16"))
    (root / "be16.txt").write_bytes(b"\xfe\xff" + "hi\nneedle be\n".encode("utf-16-be"))
    (root / "crlf.txt").write_bytes(b"x\r\nneedle crlf\r\nlast needle")
    (root / "latin.txt").write_bytes(b"caf\xe9 needle\n")
    (root / "far.txt").write_bytes(b"needle near\n" + b"z\n" * 100_000 + b"needle far\n")
    (root / "wide.txt").write_bytes(b"a" * 9000 + b"needle" + b"b" * 9000 + b"\n")
    search = GrepSearch(terax_security(root))
    found: dict[str, list[int]] = {}
    async for item in search.search(GrepQuery("needle")):
        if item["type"] == "file":
            found[item["path"]] = [m["line"] for m in item["matches"]]
    assert found == {
        "bom8.txt": [1, 2],
        "le16.txt": [2],
        "be16.txt": [2],
        "crlf.txt": [2, 3],
        "latin.txt": [1],
        "far.txt": [1, 100_002],
        "wide.txt": [1],
    }


async def test_grep_drops_a_file_whose_content_changed_after_rg_read_it(
    tmp_path: Path, terax_security: Any
) -> None:
    """What is sent is what the file holds where rg found it, or nothing."""
    root = tmp_path / "changing"
    root.mkdir()
    (root / "a.txt").write_text("one needle\n")
    (root / "b.txt").write_text("two needle\n")
    search = GrepSearch(terax_security(root))
    original = search._verified

    async def rewrite_then_verify(checks: Any, files: list[Any]) -> list[bool]:
        # Between rg's read and the check: the same length, other bytes.
        (root / "a.txt").write_text("six needle\n")
        return await original(checks, files)

    search._verified = rewrite_then_verify  # type: ignore[method-assign]
    paths = [i["path"] async for i in search.search(GrepQuery("needle")) if i["type"] == "file"]
    assert paths == ["b.txt"]


# -- search and glob ------------------------------------------------------------------------------


async def test_search_and_glob_under_a_swap_race_show_no_outside_names(
    security: SecurityLayer, raced: tuple[Path, list[tuple[Path, Path]]]
) -> None:
    search = FileSearch(security, fresh_wait=5.0)
    seen: set[str] = set()
    with Swapper(raced[1]) as swapper:
        for _ in range(150):
            search.invalidate()
            found = await search.search("only_outside", limit=50)
            globbed = await search.glob("**/*.txt", limit=5000)
            names = [r["path"] for r in found["results"]] + globbed["paths"]
            assert not [n for n in names if leaked(n)], names
            seen.update(globbed["paths"])
    assert swapper.swaps > 0
    assert "dir/x.txt" in seen
    await search.close()


async def test_search_drops_names_that_are_gone_and_rebuilds(
    terax_security: Any, tmp_path: Path
) -> None:
    root = tmp_path / "gone"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "keep_me.txt").write_text("x\n")
    (root / "sub" / "drop_me.txt").write_text("x\n")
    search = FileSearch(terax_security(root), index_ttl=3600.0, fresh_wait=5.0)
    assert len((await search.glob("**/*_me.txt"))["paths"]) == 2
    # Gone behind the index's back (no watch, no Terax call): not shown, and the index is redone.
    (root / "sub" / "drop_me.txt").unlink()
    assert (await search.glob("**/*_me.txt"))["paths"] == ["sub/keep_me.txt"]
    assert [r["path"] for r in (await search.search("drop_me"))["results"]] == []
    assert (await search.search("keep_me"))["total_files"] == 1
    await search.close()


# -- watch ----------------------------------------------------------------------------------------


class Batches:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(self, events: list[dict[str, Any]] | None) -> None:
        self.events.extend(events or [])

    def paths(self) -> set[str]:
        return {e["path"] for e in self.events} | {e["dest"] for e in self.events if "dest" in e}


async def wait_for(predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.05)


async def step(root: Path, batches: Batches, number: int) -> None:
    (root / f"step-{number}.txt").write_text("x\n")
    assert await wait_for(lambda: f"step-{number}.txt" in batches.paths())


async def test_watch_sends_nothing_from_a_folder_moved_out_of_the_workspace(
    terax_security: Any, tmp_path: Path
) -> None:
    root, outside = tmp_path / "wroot", tmp_path / "woutside"
    root.mkdir()
    outside.mkdir()
    service = WatchService(terax_security(root), debounce=0.1)
    try:
        batches = Batches()
        service.subscribe("", batches)
        (root / "sub").mkdir()
        (root / "sub" / "inside.txt").write_text("x\n")
        assert await wait_for(lambda: "sub/inside.txt" in batches.paths())
        # The observer keeps watching the folder where it went, under its old name. Each
        # step ends with a change inside the workspace that the next one waits for (the
        # events come in order), so that each outside change is judged in its own state.
        os.rename(root / "sub", outside / "sub")
        (outside / "sub" / "moved_out_1.txt").write_text("x\n")
        (outside / "sub" / "moved_out_1.txt").unlink()
        await step(root, batches, 1)
        # A link in its place: the name leads outside.
        (root / "sub").symlink_to(outside / "sub", target_is_directory=True)
        (outside / "sub" / "moved_out_2.txt").write_text("x\n")
        await step(root, batches, 2)
        # A new folder of that name: not the folder the observer watches.
        (root / "sub").unlink()
        (root / "sub").mkdir()
        (outside / "sub" / "moved_out_3.txt").write_text("x\n")
        (outside / "sub" / "moved_out_3.txt").write_text("y\n")
        (root / "sub" / "new_inside.txt").write_text("x\n")
        await step(root, batches, 3)
        assert "sub/new_inside.txt" in batches.paths()
        assert not [p for p in batches.paths() if "moved_out" in p], batches.events
        assert ("deleted", "sub") in {(e["kind"], e["path"]) for e in batches.events}
    finally:
        service.stop()


async def test_watch_turns_a_move_out_of_sight_into_what_can_be_seen(
    terax_security: Any, tmp_path: Path
) -> None:
    root = tmp_path / "mroot"
    (root / "a").mkdir(parents=True)
    service = WatchService(terax_security(root), debounce=0.1)
    try:
        batches = Batches()
        service.subscribe("", batches)
        (root / "a" / "one.txt").write_text("x\n")
        assert await wait_for(lambda: "a/one.txt" in batches.paths())
        os.rename(root / "a" / "one.txt", root / "a" / "two.txt")
        assert await wait_for(lambda: "a/two.txt" in batches.paths())
        moved = [e for e in batches.events if e.get("dest") == "a/two.txt"]
        assert [(e["kind"], e["path"]) for e in moved] == [("moved", "a/one.txt")]
    finally:
        service.stop()


# -- canonicalisation races over HTTP: 409, never 500 ---------------------------------------------


async def test_a_link_that_changes_while_it_is_resolved_answers_409(
    jp_root_dir: Path, terax_api: Api, jp_serverapp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """realpath saw a link, and the link was gone when it read it: a race, not a server fault."""
    real = jp_root_dir / "real"
    real.mkdir()
    (real / "file.txt").write_text("needle\n")
    # The spelling realpath builds: the canonical server root and the name.
    link = Path(jp_serverapp.web_app.settings["terax"].security.roots.server_root) / "link"
    original = os.readlink

    def swap_then_read(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path) == str(link) and link.is_symlink():
            link.unlink()
            link.mkdir()
        return original(path, *args, **kwargs)

    monkeypatch.setattr(os, "readlink", swap_then_read)
    calls = [
        ("fs/file", {"path": "link/file.txt"}),
        ("fs/stat", {"path": "link/file.txt"}),
        ("fs/list", {"path": "link"}),
        ("fs/grep", {"pattern": "needle", "path": "link"}),
        ("fs/search", {"q": "file", "path": "link"}),
        ("fs/glob", {"pattern": "*.txt", "path": "link"}),
    ]
    for route, params in calls:
        if link.is_dir() and not link.is_symlink():
            link.rmdir()
        link.symlink_to(real, target_is_directory=True)
        with pytest.raises(HTTPClientError) as caught:
            await terax_api(route, params=params)
        assert caught.value.code == 409, (route, error_of(caught.value))
        assert error_of(caught.value)["reason"] == "path_changed"


async def test_a_folder_swapped_after_its_check_answers_409(
    jp_root_dir: Path, tmp_path: Path, terax_api: Api, jp_serverapp: Any
) -> None:
    (jp_root_dir / "dir").mkdir()
    (jp_root_dir / "dir" / "x.txt").write_text("inside\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.txt").write_text(f"{OUTSIDE}\n")
    guard = jp_serverapp.web_app.settings["terax"].security.paths
    check = guard.check

    def check_then_swap(path: str, *args: Any, **kwargs: Any) -> Any:
        checked = check(path, *args, **kwargs)
        if path == "dir/x.txt":
            os.rename(jp_root_dir / "dir", jp_root_dir / "dir.old")
            (jp_root_dir / "dir").symlink_to(outside, target_is_directory=True)
        return checked

    guard.check = check_then_swap
    try:
        with pytest.raises(HTTPClientError) as caught:
            await terax_api("fs/file", params={"path": "dir/x.txt"})
    finally:
        guard.check = check
    assert (caught.value.code, error_of(caught.value)["reason"]) == (409, "path_changed")
    assert OUTSIDE not in error_of(caught.value)["message"]
    assert http_status_for(PathChanged("x")) == 409


async def test_api_under_a_swap_race_never_answers_500(
    jp_root_dir: Path, tmp_path: Path, terax_api: Api
) -> None:
    pairs = plant(jp_root_dir, tmp_path / "outside")
    calls = [
        ("fs/file", {"path": "dir/x.txt"}),
        ("fs/file", {"path": "swap.txt"}),
        ("fs/stat", {"path": "dir/x.txt"}),
        ("fs/list", {"path": "dir"}),
        ("fs/grep", {"pattern": "needle", "path": "dir"}),
        ("fs/search", {"q": "x", "path": "dir"}),
        ("fs/glob", {"pattern": "*", "path": "dir"}),
    ]
    statuses: set[int] = set()
    with Swapper(pairs):
        for _ in range(30):
            for route, params in calls:
                try:
                    text = json.dumps(await terax_api(route, params=params))
                    statuses.add(200)
                except HTTPClientError as error:
                    statuses.add(error.code)
                    text = json.dumps(error_of(error))
                assert SECRET not in text, (route, text)
                assert OUTSIDE not in text, (route, text)
    assert statuses <= {200, 403, 404, 409}, statuses
