"""Commit detail: files with renames, binaries and line counts, the message, the web page."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import InvalidRequest, NotFound
from terax_jupyter.security.denylist import DenyList
from terax_jupyter.services.git.commits import commit_detail, parse_changes

from .history_fixtures import (
    commit,
    git,
    history,  # noqa: F401 (fixture)
    init,
    repo_of,
    runner,  # noqa: F401 (fixture)
)

if TYPE_CHECKING:
    from terax_jupyter.services.git.repository import Repo
    from terax_jupyter.services.git.runner import GitRunner

    History = tuple[Repo, dict[str, str]]


def test_parse_changes() -> None:
    raw = (
        ":000000 100644 0000 1111 A\0new.txt\0"
        ":100644 100644 2222 3333 R087\0old name.txt\0new name.txt\0"
        ":100644 000000 4444 0000 D\0gone.bin\0"
        "3\t0\tnew.txt\0"
        "1\t2\t\0old name.txt\0new name.txt\0"
        "-\t-\tgone.bin\0"
    )
    assert parse_changes(raw.encode()) == [
        {
            "path": "new.txt",
            "old_path": None,
            "status": "added",
            "additions": 3,
            "deletions": 0,
            "binary": False,
        },
        {
            "path": "new name.txt",
            "old_path": "old name.txt",
            "status": "renamed",
            "additions": 1,
            "deletions": 2,
            "binary": False,
        },
        {
            "path": "gone.bin",
            "old_path": None,
            "status": "deleted",
            "additions": 0,
            "deletions": 0,
            "binary": True,
        },
    ]
    assert parse_changes(b"") == []


async def test_rename_binary_and_counts(runner: GitRunner, history: History) -> None:  # noqa: F811
    repo, c = history
    detail = await commit_detail(runner, repo, c["c3"])
    assert detail["oid"] == c["c3"]
    assert detail["parents"] == [c["c2"]]
    assert detail["message"] == "third: rename a to b, add a binary"
    assert (detail["author"], detail["email"]) == ("Ada Lovelace", "ada@example.com")
    assert (detail["committer"], detail["committer_email"]) == (
        "Charles Babbage",
        "charles@example.com",
    )
    assert detail["date"].endswith("+01:00")
    files = {f["path"]: f for f in detail["files"]}
    assert files["b.txt"]["status"] == "renamed"
    assert files["b.txt"]["old_path"] == "a.txt"
    assert files["image.bin"]["binary"] is True
    assert files["image.bin"]["status"] == "added"
    assert (files["README.md"]["additions"], files["README.md"]["deletions"]) == (1, 0)
    assert detail["stats"] == {"files": 3, "additions": 1, "deletions": 0}
    assert detail["web_url"] == f"https://github.com/terax/demo/commit/{c['c3']}"
    assert detail["files_truncated"] is False


async def test_merge_is_against_its_first_parent(runner: GitRunner, history: History) -> None:  # noqa: F811
    repo, c = history
    detail = await commit_detail(runner, repo, c["m1"][:10])
    assert detail["oid"] == c["m1"]
    assert detail["parents"] == [c["c3"], c["f2"]]
    assert [f["path"] for f in detail["files"]] == ["feature.txt"]
    assert {"kind": "tag", "name": "v2"} in detail["refs"]
    octopus = await commit_detail(runner, repo, c["m2"])
    assert len(octopus["parents"]) == 3
    assert sorted(f["path"] for f in octopus["files"]) == ["a.txt", "b.txt"]


async def test_root_commit_and_multiline_message(runner: GitRunner, tmp_path: Path) -> None:  # noqa: F811
    root = init(tmp_path / "r")
    oid = commit(root, "Subject\n\nBody line one.\nBody line two.", {"x.txt": "1\n2\n"}, when=1)
    detail = await commit_detail(runner, repo_of(root), oid.upper())
    assert detail["parents"] == []
    assert detail["message"] == "Subject\n\nBody line one.\nBody line two."
    assert detail["files"][0]["status"] == "added"
    assert detail["stats"] == {"files": 1, "additions": 2, "deletions": 0}
    assert detail["web_url"] is None  # no remote


async def test_denied_files_are_flagged(runner: GitRunner, tmp_path: Path) -> None:  # noqa: F811
    root = init(tmp_path / "d")
    oid = commit(root, "oops", {".env": "TOKEN=x\n", "ok.txt": "ok\n"}, when=1)
    detail = await commit_detail(runner, repo_of(root), oid, DenyList())
    assert {f["path"]: f["denied"] for f in detail["files"]} == {".env": True, "ok.txt": False}


async def test_web_url_prefers_origin(runner: GitRunner, tmp_path: Path) -> None:  # noqa: F811
    root = init(tmp_path / "w")
    git(root, "remote", "add", "fork", "https://gitlab.com/me/fork.git")
    git(root, "remote", "add", "origin", "https://user:secret@bitbucket.org/team/repo.git")
    oid = commit(root, "x", {"x": "x"}, when=1)
    detail = await commit_detail(runner, repo_of(root), oid)
    assert detail["web_url"] == f"https://bitbucket.org/team/repo/commits/{oid}"


@pytest.mark.parametrize("oid", ["", "main", "--output=/tmp/x", "abc", "g" * 40, "a" * 65, 5, None])
async def test_bad_oid(runner: GitRunner, history: History, oid: object) -> None:  # noqa: F811
    repo, _ = history
    with pytest.raises(InvalidRequest) as caught:
        await commit_detail(runner, repo, oid)
    assert caught.value.reason == "invalid_oid"


async def test_unknown_oid(runner: GitRunner, history: History) -> None:  # noqa: F811
    repo, _ = history
    with pytest.raises(NotFound):
        await commit_detail(runner, repo, "0" * 40)
    # A blob's id is not a commit.
    blob = git(repo.root, "rev-parse", "HEAD:README.md").strip()
    with pytest.raises(NotFound):
        await commit_detail(runner, repo, blob)
