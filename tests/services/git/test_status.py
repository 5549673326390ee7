"""Status from porcelain v2: entries of every kind, branch, upstream, and the workspace rule."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import NotFound, OutsideWorkspace
from terax_jupyter.services.git.status import parse_status

from .conftest import commit_all, git, init_repo, write

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.git.manager import GitManager


def test_parser_reads_every_record_kind() -> None:
    raw = (
        b"# branch.oid 1111111111111111111111111111111111111111\0"
        b"# branch.head topic\0"
        b"# branch.upstream origin/topic\0"
        b"# branch.ab +2 -3\0"
        b"1 M. N... 100644 100644 100644 aaaa bbbb staged file.txt\0"
        b"1 .D N... 100644 100644 000000 aaaa aaaa gone.txt\0"
        b"1 .T N... 100644 100644 120000 aaaa aaaa link\0"
        b"2 R. N... 100644 100644 100644 aaaa aaaa R100 new name.txt\0old name.txt\0"
        b"2 C. N... 100644 100644 100644 aaaa aaaa C75 copy.txt\0source.txt\0"
        b"1 .M SC.. 160000 160000 160000 aaaa aaaa lib/sub\0"
        b"u UU N... 100644 100644 100644 100644 aaaa bbbb cccc both.txt\0"
        b"? new\xc3\xa9 file.txt\0"
    )
    status = parse_status(raw)
    branch = status.branch
    assert (branch.head, branch.upstream, branch.ahead, branch.behind) == (
        "topic",
        "origin/topic",
        2,
        3,
    )
    assert [(e.path, e.old_path, e.status) for e in status.staged] == [
        ("staged file.txt", None, "modified"),
        ("new name.txt", "old name.txt", "renamed"),
        ("copy.txt", "source.txt", "copied"),
    ]
    assert [(e.path, e.status, e.submodule) for e in status.unstaged] == [
        ("gone.txt", "deleted", False),
        ("link", "typechange", False),
        ("lib/sub", "modified", True),
    ]
    assert [(e.path, e.status) for e in status.conflicted] == [("both.txt", "unmerged")]
    assert [e.path for e in status.untracked] == ["newé file.txt"]


def test_parser_reads_unborn_and_detached() -> None:
    unborn = parse_status(b"# branch.oid (initial)\0# branch.head main\0")
    assert (unborn.branch.unborn, unborn.branch.oid, unborn.branch.head) == (True, None, "main")
    detached = parse_status(b"# branch.oid " + b"1" * 40 + b"\0# branch.head (detached)\0")
    assert (detached.branch.detached, detached.branch.head) == (True, None)


async def test_status_of_a_real_repository(manager: GitManager, project: Path) -> None:
    write(project, "notes.txt", "changed\n")
    write(project, "untracked dir/new.txt", "new\n")
    write(project, ".env", "SECRET=1\n")
    git(project, "mv", "keep.txt", "kept.txt")
    status = await manager.status(str(project / "notes.txt"))
    assert status["root"] == str(project)
    assert status["branch"]["head"] == "main"
    assert status["branch"]["upstream"] is None
    assert [(e["path"], e["old_path"]) for e in status["staged"]] == [("kept.txt", "keep.txt")]
    assert [e["path"] for e in status["unstaged"]] == ["notes.txt"]
    assert {(e["path"], e["denied"]) for e in status["untracked"]} == {
        ("untracked dir/new.txt", False),
        (".env", True),
    }
    assert status["index_locked"] is False


async def test_ahead_and_behind_the_upstream(
    manager: GitManager, project: Path, other_clone: Path
) -> None:
    write(other_clone, "theirs.txt", "theirs\n")
    commit_all(other_clone, "theirs")
    git(other_clone, "push", "-q")
    git(project, "fetch", "-q")
    write(project, "ours.txt", "ours\n")
    commit_all(project, "ours")
    branch = (await manager.status(str(project)))["branch"]
    assert (branch["upstream"], branch["ahead"], branch["behind"]) == ("origin/main", 1, 1)


async def test_conflicts_and_detached_head(manager: GitManager, project: Path) -> None:
    git(project, "switch", "-q", "-c", "left")
    write(project, "notes.txt", "left\n")
    commit_all(project, "left")
    git(project, "switch", "-q", "main")
    write(project, "notes.txt", "right\n")
    commit_all(project, "right")
    git(project, "merge", "left", check=False)
    status = await manager.status(str(project))
    assert [(e["path"], e["status"]) for e in status["conflicted"]] == [("notes.txt", "unmerged")]
    git(project, "merge", "--abort")
    git(project, "switch", "-q", "--detach", "HEAD~1")
    branch = (await manager.status(str(project)))["branch"]
    assert branch["detached"] is True
    assert branch["head"] is None


async def test_submodule_entries(manager: GitManager, project: Path, workspace_root: Path) -> None:
    library = init_repo(workspace_root / "library")
    write(library, "lib.txt", "lib\n")
    commit_all(library, "lib")
    git(project, "submodule", "-q", "add", str(library), "lib")
    commit_all(project, "add lib")
    write(project / "lib", "lib.txt", "changed\n")
    # Untrusted, git does not look inside a submodule (its own configuration could name
    # programs): only a change of the commit it records shows.
    assert (await manager.status(str(project)))["unstaged"] == []
    await manager.set_trust(str(project), True, user="ada")
    status = await manager.status(str(project))
    assert [(e["path"], e["submodule"]) for e in status["unstaged"]] == [("lib", True)]
    await manager.set_trust(str(project), False, user="ada")
    commit_all(project / "lib", "lib moves on")
    status = await manager.status(str(project))
    assert [(e["path"], e["submodule"]) for e in status["unstaged"]] == [("lib", True)]


async def test_unborn_repository(manager: GitManager, workspace_root: Path) -> None:
    root = init_repo(workspace_root / "empty")
    branch = (await manager.status(str(root)))["branch"]
    assert (branch["unborn"], branch["head"], branch["oid"]) == (True, "main", None)
    info = await manager.repository(str(root))
    assert info["head"] == {"branch": "main", "oid": None, "detached": False, "unborn": True}


async def test_jupyter_checkpoints_are_not_listed_untracked(
    manager: GitManager, workspace_root: Path
) -> None:
    root = init_repo(workspace_root / "nb")
    write(root, "analysis.ipynb", "{}\n")
    write(root, ".ipynb_checkpoints/analysis-checkpoint.ipynb", "{}\n")
    write(root, "sub/.ipynb_checkpoints/x-checkpoint.py", "x\n")
    write(root, "sub/keep.py", "y\n")
    write(root, "ipynb_checkpoints_not/file.txt", "z\n")  # only the exact folder name
    status = await manager.status(str(root))
    assert sorted(e["path"] for e in status["untracked"]) == [
        "analysis.ipynb",
        "ipynb_checkpoints_not/file.txt",
        "sub/keep.py",
    ]
    assert status["hidden_untracked"] == 2
    # Stage All stages what is listed: the checkpoints stay out of the index.
    status = await manager.stage(str(root), {"files": [e["path"] for e in status["untracked"]]})
    assert not any(".ipynb_checkpoints" in e["path"] for e in status["staged"])
    # An admin who wants them listed says so.
    manager.hidden_untracked = []
    status = await manager.status(str(root))
    assert status["hidden_untracked"] == 0
    assert sorted(e["path"] for e in status["untracked"]) == [
        ".ipynb_checkpoints/analysis-checkpoint.ipynb",
        "sub/.ipynb_checkpoints/x-checkpoint.py",
    ]


async def test_status_says_which_operation_is_in_progress(
    manager: GitManager, workspace_root: Path
) -> None:
    root = init_repo(workspace_root / "ops")
    write(root, "f.txt", "base\n")
    commit_all(root, "base")
    assert (await manager.status(str(root)))["operation"] is None
    git(root, "switch", "-q", "-c", "other")
    write(root, "f.txt", "other\n")
    commit_all(root, "other")
    git(root, "switch", "-q", "main")
    write(root, "f.txt", "main\n")
    commit_all(root, "main")
    git(root, "merge", "-q", "other", check=False)  # a conflict: the merge stops half way
    status = await manager.status(str(root))
    assert status["operation"] == "merge"
    assert [e["path"] for e in status["conflicted"]] == ["f.txt"]
    git(root, "merge", "--abort")
    git(root, "cherry-pick", "other", check=False)
    assert (await manager.status(str(root)))["operation"] == "cherry-pick"
    git(root, "cherry-pick", "--abort")
    git(root, "rebase", "other", check=False)
    assert (await manager.status(str(root)))["operation"] == "rebase"
    git(root, "rebase", "--abort")
    assert (await manager.status(str(root)))["operation"] is None


async def test_repository_reports_remotes_without_credentials(
    manager: GitManager, project: Path
) -> None:
    git(project, "remote", "add", "origin", "https://user:hunter2secret@github.com/o/r.git")
    info = await manager.repository(str(project / "notes.txt"))
    assert info["root"] == str(project)
    assert info["relative_root"].endswith("project")
    assert info["remotes"] == [
        {"name": "origin", "url": "https://github.com/o/r.git", "web_url": "https://github.com/o/r"}
    ]


async def test_a_folder_outside_any_repository(manager: GitManager, workspace_root: Path) -> None:
    (workspace_root / "plain").mkdir()
    with pytest.raises(NotFound) as caught:
        await manager.status(str(workspace_root / "plain"))
    assert caught.value.reason == "not_a_repository"


async def test_a_repository_that_starts_outside_the_workspace(
    terax_security: Callable[..., SecurityLayer], tmp_path: Path
) -> None:
    from terax_jupyter.services.git.manager import GitManager

    outer = init_repo(tmp_path / "outer")
    inner = outer / "inner"
    inner.mkdir()
    write(inner, "a.txt", "a\n")
    manager = GitManager(terax_security(inner))
    with pytest.raises(OutsideWorkspace):
        await manager.status(str(inner))


async def test_status_serialises_as_asdict_did_without_deep_copies(
    manager: GitManager, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every kind of entry and every field set: a merge in progress with a conflict, a staged
    # rename, unstaged changes, untracked files (one denied, some hidden), an upstream.
    git(project, "switch", "-q", "-c", "left")
    write(project, "notes.txt", "left\n")
    commit_all(project, "left")
    git(project, "switch", "-q", "main")
    write(project, "notes.txt", "right\n")
    commit_all(project, "right")
    git(project, "merge", "left", check=False)
    git(project, "mv", "keep.txt", "kept.txt")
    write(project, "feature.txt", "edited\n")
    write(project, ".env", "SECRET=1\n")
    write(project, "new/file.txt", "new\n")
    write(project, ".ipynb_checkpoints/x-checkpoint.txt", "x\n")
    git(project, "remote", "add", "origin", str(project))
    git(project, "update-ref", "refs/remotes/origin/main", "HEAD~1")
    git(project, "branch", "-q", "--set-upstream-to=origin/main")
    repo = await manager.resolve(str(project))
    status = await manager._status(repo)
    assert status.staged
    assert status.unstaged
    assert status.conflicted
    assert status.operation == "merge"
    assert status.hidden_untracked == 1
    assert any(e.denied for e in status.untracked)
    assert any(e.old_path for e in status.staged)
    assert status.branch.upstream == "origin/main"

    expected = dataclasses.asdict(status)
    # The dict is written out: asdict deep-copied every value of every entry (half the time
    # of a status with 20k untracked files).
    copies = 0
    deepcopy = copy.deepcopy

    def counting(value: object, memo: object = None) -> object:
        nonlocal copies
        copies += 1
        return deepcopy(value, memo)  # type: ignore[arg-type]

    monkeypatch.setattr(copy, "deepcopy", counting)
    result = status.to_dict()
    assert copies == 0
    monkeypatch.undo()
    assert result == expected
    assert json.dumps(result) == json.dumps(expected)  # the same keys in the same order
    # Nothing is shared with the status: changing the answer changes no entry.
    result["untracked"][0]["path"] = "changed"
    result["staged"].clear()
    assert status.untracked[0].path != "changed"
    assert status.staged
    assert await manager.status(str(project)) == expected
