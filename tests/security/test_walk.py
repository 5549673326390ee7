"""Walking a checked folder: nothing denied, no symlinked folders, bounded, breadth first."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.security.walk import WalkResult, walk_files

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.security.paths import CheckedPath


@pytest.fixture
def walk(security: SecurityLayer, check: Callable[..., CheckedPath]) -> Callable[..., WalkResult]:
    def run(path: str = ".", **options: Any) -> WalkResult:
        options.setdefault("skip_directory", lambda path, name: False)
        options.setdefault("max_files", 10_000)
        options.setdefault("time_limit", 60.0)
        return walk_files(check(path), security.deny, **options)

    return run


def make(root: Path, *files: str) -> None:
    for relative in files:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(relative)


def test_files_are_listed_relative_with_slashes(
    walk: Callable[..., WalkResult], root: Path
) -> None:
    make(root, "a/b/c.txt", ".gitignore", "docs/.hidden.md")
    result = walk()
    assert sorted(result.files) == [
        ".gitignore",
        "README.md",
        "a/b/c.txt",
        "docs/.hidden.md",
        "src/app.py",
    ]
    assert not result.truncated
    assert sorted(walk("a").files) == ["b/c.txt"]


def test_protected_files_and_folders_are_left_out(
    walk: Callable[..., WalkResult], root: Path
) -> None:
    make(
        root,
        "config/server.pem",
        "config/settings.toml",
        "deploy/id_ed25519",
        "repo/.git/config",
        "repo/.git/hooks/pre-commit",
        "repo/main.py",
        "home/.ssh/config",
        "home/.aws/credentials",
        "home/.config/gh/hosts.yml",
        "home/.config/other/ok.toml",
        "secrets.yaml",
    )
    assert sorted(walk().files) == [
        "README.md",
        "config/settings.toml",
        "home/.config/other/ok.toml",
        "repo/main.py",
        "src/app.py",
    ]


def test_symlinked_folders_are_not_entered_and_symlinked_files_are_listed(
    walk: Callable[..., WalkResult], root: Path, outside: Path
) -> None:
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "shortcut.txt").symlink_to(outside / "target.txt")
    files = walk().files
    assert "shortcut.txt" in files
    assert not any(f.startswith(("escape/", "loop/")) for f in files)


def test_skip_callbacks_prune_folders_and_files(
    walk: Callable[..., WalkResult], root: Path
) -> None:
    make(root, "node_modules/pkg/index.js", "build.log", "src/util.py")
    result = walk(
        skip_directory=lambda path, name: name == "node_modules",
        skip_file=lambda path: path.endswith(".log"),
    )
    assert sorted(result.files) == ["README.md", "src/app.py", "src/util.py"]


def test_the_file_bound_truncates(walk: Callable[..., WalkResult], root: Path) -> None:
    make(root, *(f"many/{i:03d}.txt" for i in range(50)))
    result = walk(max_files=10)
    assert result.truncated
    assert len(result.files) == 10


def test_the_time_bound_truncates(walk: Callable[..., WalkResult], root: Path) -> None:
    make(root, "deep/er/file.txt")
    result = walk(time_limit=0.0)
    assert result.truncated
    assert "deep/er/file.txt" not in result.files


def test_the_walk_is_breadth_first(walk: Callable[..., WalkResult], root: Path) -> None:
    # Whatever order the folders are listed in, a shallow file is found before a deep one.
    for name in ("README.md", ".env"):
        (root / name).unlink()
    shutil.rmtree(root / "src")
    make(root, "a/a1/a2/deep.txt", "b/shallow.txt", "c/c1/c2/deep.txt")
    assert walk(max_files=1).files == ["b/shallow.txt"]


def test_a_folder_swapped_for_a_link_after_it_was_queued_is_not_listed(
    walk: Callable[..., WalkResult], root: Path, outside: Path
) -> None:
    make(root, "later/inside.txt")
    (outside / "secret-plans.txt").write_text("x")

    def swap(path: str, name: str) -> bool:
        if name == "later":
            shutil.rmtree(path)
            (root / "later").symlink_to(outside, target_is_directory=True)
        return False

    files = walk(skip_directory=swap).files
    assert not any(f.startswith("later/") for f in files)
    assert "README.md" in files


def test_a_folder_that_vanishes_mid_walk_is_passed_over(
    walk: Callable[..., WalkResult], root: Path
) -> None:
    make(root, "gone/file.txt", "kept/file.txt")

    def remove(path: str, name: str) -> bool:
        if name == "gone":
            shutil.rmtree(path)
        return False

    files = walk(skip_directory=remove).files
    assert "kept/file.txt" in files
    assert "gone/file.txt" not in files
