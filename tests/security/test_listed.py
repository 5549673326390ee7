"""Names a listing produced, re-checked through verified descriptors; the guard under a race."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import InvalidPath, NotFound, PathChanged, Unsupported
from terax_jupyter.security import fileio

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security.paths import CheckedPath, PathGuard


@pytest.fixture(autouse=True, params=["openat2", "folder by folder"])
def walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways ``ListedFiles`` opens a file: Linux's openat2, and one folder at a time."""
    if request.param == "openat2":
        release = tuple(int(p) for p in os.uname().release.split(".")[:2] if p.isdigit())
        if fileio._OPENAT2 is None:
            assert not (sys.platform.startswith("linux") and release >= (5, 6)), release
            pytest.skip("this kernel has no openat2; the other parameter covers the fallback")
    else:
        monkeypatch.setattr(fileio, "_OPENAT2", None)
    return str(request.param)


@pytest.fixture
def listed(root: Path, check: Callable[..., CheckedPath]) -> Any:
    with fileio.ListedFiles(check(str(root))) as files:
        yield files


def test_listed_names_are_looked_at_where_they_are(root: Path, listed: Any) -> None:
    assert listed.lstat("src/app.py").st_size == len("print('hello')\n")
    assert listed.lstat("src/missing.py") is None
    (root / "src" / "link.py").symlink_to(root / "README.md")
    info = listed.lstat("src/link.py")
    assert info is not None
    assert not os.path.samestat(info, os.stat(root / "README.md"))  # the link, not its target
    assert listed.read_ranges("src/app.py", [(0, 5), (5, 7)]) == [b"print", b"('hello"]
    assert listed.read_ranges("src/app.py", [(10, 100)]) == [b"lo')\n"]
    with pytest.raises(PathChanged):
        listed.read_ranges("src/link.py", [(0, 1)])
    with pytest.raises(Unsupported):
        listed.read_ranges("src", [(0, 1)])
    with pytest.raises(NotFound):
        listed.read_ranges("nothing/here.txt", [(0, 1)])


def test_far_apart_ranges_are_read_one_by_one(root: Path, listed: Any) -> None:
    (root / "big.bin").write_bytes(b"A" * 10 + b"\0" * 200_000 + b"Z" * 10)
    assert listed.read_ranges("big.bin", [(0, 10), (200_010, 10), (300_000, 5)]) == [
        b"A" * 10,
        b"Z" * 10,
        b"",
    ]


@pytest.mark.parametrize("name", ["../README.md", "src/../README.md", "./README.md", "a//b", ""])
def test_names_that_are_not_plain_are_refused(listed: Any, name: str) -> None:
    with pytest.raises(InvalidPath):
        listed.lstat(name)


def test_a_folder_swapped_for_a_link_is_not_looked_through(
    root: Path, outside: Path, check: Callable[..., CheckedPath]
) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "target.txt").write_text("inside\n")
    top = check(str(root))
    os.rename(root / "sub", root / "sub.old")
    (root / "sub").symlink_to(outside, target_is_directory=True)
    with fileio.ListedFiles(top) as files:
        with pytest.raises(PathChanged):
            files.lstat("sub/target.txt")
        with pytest.raises(PathChanged):
            files.read_ranges("sub/target.txt", [(0, 100)])
    # A link higher up: the descriptor of "deep/sub" is not the folder that name had.
    (root / "deep").mkdir()
    (root / "deep" / "sub").mkdir()
    os.rename(root / "deep", root / "deep.old")
    (root / "deep").symlink_to(root / "deep.old", target_is_directory=True)
    with fileio.ListedFiles(top) as files, pytest.raises(PathChanged):
        files.lstat("deep/sub/x")
    # And the searched folder itself.
    os.rename(root / "src", root / "src.old")
    (root / "src").symlink_to(outside, target_is_directory=True)
    with fileio.ListedFiles(check(str(root / "src.old"))) as files:
        assert files.lstat("app.py") is not None
    renamed = check(str(root / "src.old"))
    os.rename(root / "src.old", root / "src.older")
    (root / "src.old").symlink_to(outside, target_is_directory=True)
    with fileio.ListedFiles(renamed) as files, pytest.raises(PathChanged):
        files.lstat("target.txt")


def test_without_descriptor_paths_a_link_on_the_way_is_still_seen(
    root: Path, outside: Path, check: Callable[..., CheckedPath], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the OS cannot say a descriptor's path, the path must still be its canonical self."""
    (root / "sub").mkdir()
    (root / "sub" / "inner").mkdir()
    (outside / "inner").mkdir()
    checked = check("sub/inner")
    os.rename(root / "sub", root / "sub.old")
    (root / "sub").symlink_to(root / "sub.old", target_is_directory=True)
    monkeypatch.setattr(fileio, "_descriptor_path", lambda fd: None)
    with pytest.raises(PathChanged), fileio.open_directory(checked.path):
        pass


def test_the_guard_answers_a_link_changing_while_it_resolves_with_path_changed(
    root: Path, guard: PathGuard, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "real").mkdir()
    link = root / "link"
    link.symlink_to(root / "real", target_is_directory=True)
    original = os.readlink

    def swap_then_read(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path) == str(link) and link.is_symlink():
            link.unlink()
            link.mkdir()
        return original(path, *args, **kwargs)

    monkeypatch.setattr(os, "readlink", swap_then_read)
    with pytest.raises(PathChanged, match="try again"):
        guard.check("link/file.txt")


def test_a_checked_folder_that_became_a_link_is_a_change_not_a_file(
    root: Path, outside: Path, check: Callable[..., CheckedPath]
) -> None:
    """Swapped after the check: PathChanged (409), not "not a folder" (400) or the link's stat."""
    (root / "sub").mkdir()
    checked = check("sub")
    os.rename(root / "sub", root / "sub.old")
    (root / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathChanged):
        fileio.is_directory(checked)
    with pytest.raises(PathChanged):
        fileio.stat_path(checked)
    # Checked without following the last link, a link there is what is described.
    assert fileio.stat_path(check("sub", follow=False)).st_mode & 0o170000 == 0o120000
