"""Structured diffs: hunks with line numbers, three sources, binary and too-large files."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import NotFound, PathDenied
from terax_jupyter.services.git.diff import parse_diff

from .conftest import PNG, TEN_LINES, commit_all, git, write

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.services.git.manager import GitManager


def test_parser_numbers_lines_and_marks_missing_newlines() -> None:
    raw = (
        b"diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n"
        b"@@ -3,3 +3,3 @@ def f():\n keep\n-old\n+new\n last\n\\ No newline at end of file\n"
    )
    parsed = parse_diff(raw)
    assert parsed.status == "modified"
    (hunk,) = parsed.hunks
    assert hunk.header == "@@ -3,3 +3,3 @@ def f():"
    assert [(x.kind, x.old, x.new, x.text, x.no_newline) for x in hunk.lines] == [
        ("context", 3, 3, "keep", False),
        ("delete", 4, None, "old", False),
        ("add", None, 4, "new", False),
        ("context", 5, 5, "last", True),
    ]


async def test_worktree_index_and_commit_sources(manager: GitManager, project: Path) -> None:
    write(project, "notes.txt", TEN_LINES.replace("line 5\n", "line five\n"))
    worktree = await manager.diff(str(project), "notes.txt")
    assert worktree["source"] == "worktree"
    (hunk,) = worktree["hunks"]
    assert (hunk["old_start"], hunk["old_lines"], hunk["new_start"], hunk["new_lines"]) == (
        2,
        7,
        2,
        7,
    )
    changed = [
        (x["kind"], x["old"], x["new"], x["text"]) for x in hunk["lines"] if x["kind"] != "context"
    ]
    assert changed == [("delete", 5, None, "line 5"), ("add", None, 5, "line five")]
    assert len(worktree["fingerprint"]) == 40
    index = await manager.diff(str(project), "notes.txt", source="index")
    assert index["hunks"] == []
    assert index["status"] == "unmodified"
    git(project, "add", "notes.txt")
    index = await manager.diff(str(project), "notes.txt", source="index")
    assert index["hunks"] == worktree["hunks"]
    first = git(project, "rev-list", "--max-parents=0", "HEAD").strip()
    root_commit = await manager.diff(str(project), "notes.txt", source="commit", commit=first)
    assert root_commit["status"] == "added"
    assert len(root_commit["hunks"][0]["lines"]) == 10
    merge = await manager.diff(str(project), "feature.txt", source="commit", commit="HEAD")
    assert merge["status"] == "added"  # against the first parent


async def test_untracked_file_is_all_added(manager: GitManager, project: Path) -> None:
    write(project, "fresh.txt", "one\ntwo")
    diff = await manager.diff(str(project), "fresh.txt")
    assert diff["status"] == "added"
    lines = diff["hunks"][0]["lines"]
    assert [(x["kind"], x["new"], x["text"], x["no_newline"]) for x in lines] == [
        ("add", 1, "one", False),
        ("add", 2, "two", True),
    ]


async def test_binary_and_too_large(make_git: Callable[..., GitManager], project: Path) -> None:
    manager = make_git(max_diff_bytes=300)
    write(project, "image.png", PNG + b"more")
    binary = await manager.diff(str(project), "image.png")
    assert (binary["binary"], binary["hunks"]) == (True, [])
    write(project, "notes.txt", "".join(f"changed {n}\n" for n in range(100)))
    large = await manager.diff(str(project), "notes.txt")
    assert (large["too_large"], large["hunks"]) == (True, [])
    assert large["size"] > 300
    capped = make_git(output_cap=200)
    huge = await capped.diff(str(project), "notes.txt")
    assert huge["too_large"] is True
    assert len(huge["fingerprint"]) == 40


async def test_rename_with_old_name(manager: GitManager, project: Path) -> None:
    git(project, "mv", "keep.txt", "kept.txt")
    diff = await manager.diff(str(project), "kept.txt", source="index", old_file="keep.txt")
    assert (diff["status"], diff["old_file"]) == ("renamed", "keep.txt")


async def test_denied_files_and_unknown_commits(manager: GitManager, project: Path) -> None:
    write(project, "server.pem", "-----BEGIN PRIVATE KEY-----\n")
    with pytest.raises(PathDenied):
        await manager.diff(str(project), "server.pem")
    commit_all(project, "oops, a key")
    with pytest.raises(PathDenied):
        await manager.diff(str(project), "server.pem", source="commit", commit="HEAD")
    with pytest.raises(NotFound):
        await manager.diff(str(project), "notes.txt", source="commit", commit="nope")
