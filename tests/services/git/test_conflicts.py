"""Conflicts made for real (merge, rebase, cherry-pick, revert, bisect): the conflicted diff
with its sides, take ours / theirs, continue / abort / skip, and the commit identity."""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import AccessDenied, Conflict, InvalidRequest, ReadOnlyMode

from .conftest import (
    BASE,
    IDENTITY,
    OURS,
    THEIRS,
    commit_all,
    git,
    init_repo,
    submodule_conflict,
    two_branches,
    write,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.services.git.manager import GitManager


# -- the conflicted diff ---------------------------------------------------------------------


async def test_a_conflicted_file_shows_its_markers_and_sides(
    manager: GitManager, merging: Path
) -> None:
    diff = await manager.diff(str(merging), "f.txt")
    # Before: status "modified" and no hunks (git's combined diff has @@@ headers).
    assert diff["status"] == "conflicted"
    assert diff["hunks"], diff
    added = [line["text"] for h in diff["hunks"] for line in h["lines"] if line["kind"] == "add"]
    assert added[0].startswith("<<<<<<< ")
    assert "=======" in added
    assert "two (theirs)" in added
    assert added[-1].startswith(">>>>>>> other")
    conflict = diff["conflict"]
    assert conflict["regions"] == 1
    assert conflict["operation"] == "merge"
    assert conflict["sides"]["base"]["text"] == BASE
    assert conflict["sides"]["ours"]["text"] == OURS
    assert conflict["sides"]["theirs"]["text"] == THEIRS
    # Not stageable hunk by hunk: the whole file is resolved.
    with pytest.raises(InvalidRequest) as caught:
        await manager.stage(
            str(merging),
            {"file": "f.txt", "fingerprint": diff["fingerprint"], "selection": [{"hunk": 0}]},
        )
    assert caught.value.reason == "not_selectable"
    # A file that is not conflicted keeps its kind.
    write(merging, "keep.txt", "changed\n")
    plain = await manager.diff(str(merging), "keep.txt")
    assert plain["status"] == "modified"
    assert plain["conflict"] is None


async def test_a_side_that_deleted_the_file(manager: GitManager, workspace_root: Path) -> None:
    root = init_repo(workspace_root / "deleted")
    write(root, "f.txt", BASE)
    commit_all(root, "base")
    git(root, "switch", "-q", "-c", "other")
    git(root, "rm", "-q", "f.txt")
    commit_all(root, "delete")
    git(root, "switch", "-q", "main")
    write(root, "f.txt", OURS)
    commit_all(root, "ours")
    git(root, "merge", "other", check=False)
    diff = await manager.diff(str(root), "f.txt")
    assert diff["status"] == "conflicted"
    assert diff["conflict"]["sides"]["theirs"]["present"] is False
    assert diff["conflict"]["sides"]["ours"]["text"] == OURS
    status = await manager.resolve_conflict(str(root), ["f.txt"], "theirs")
    assert status["conflicted"] == []
    assert not (root / "f.txt").exists()
    assert "f.txt" not in git(root, "ls-files")


# -- take ours / theirs ------------------------------------------------------------------------


@pytest.mark.parametrize(("side", "expected"), [("ours", OURS), ("theirs", THEIRS)])
async def test_take_a_side_in_a_merge(
    manager: GitManager, merging: Path, side: str, expected: str
) -> None:
    status = await manager.resolve_conflict(str(merging), ["f.txt"], side)
    assert (merging / "f.txt").read_text() == expected
    assert status["conflicted"] == []
    assert git(merging, "show", ":f.txt") == expected
    assert status["operation"] == "merge"


async def test_take_a_side_is_refused_unless_conflicted(manager: GitManager, merging: Path) -> None:
    before = (merging / "f.txt").read_bytes()
    write(merging, "keep.txt", "changed\n")
    with pytest.raises(Conflict) as caught:
        # One conflicted, one not: nothing changes at all.
        await manager.resolve_conflict(str(merging), ["f.txt", "keep.txt"], "ours")
    assert caught.value.reason == "not_conflicted"
    assert "keep.txt" in str(caught.value)
    assert (merging / "f.txt").read_bytes() == before
    assert (merging / "keep.txt").read_text() == "changed\n"
    assert git(merging, "ls-files", "-u")
    for side in ("mine", "", None):
        with pytest.raises(InvalidRequest):
            await manager.resolve_conflict(str(merging), ["f.txt"], side)
    for files in ([], None, ["../x"], "f.txt"):
        with pytest.raises(InvalidRequest):
            await manager.resolve_conflict(str(merging), files, "ours")
    assert git(merging, "ls-files", "-u")


async def test_take_a_side_in_a_rebase_uses_gits_meaning(
    manager: GitManager, rebasing: Path
) -> None:
    diff = await manager.diff(str(rebasing), "f.txt")
    assert diff["conflict"]["operation"] == "rebase"
    # During a rebase "ours" is the branch rebased onto (main), "theirs" the commit replayed.
    assert diff["conflict"]["sides"]["ours"]["text"] == OURS
    await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    assert (rebasing / "f.txt").read_text() == THEIRS


# -- continue / abort / skip ---------------------------------------------------------------------


async def test_merge_continue_refused_with_conflicts_then_commits(
    manager: GitManager, merging: Path
) -> None:
    head = git(merging, "rev-parse", "HEAD").strip()
    with pytest.raises(Conflict) as caught:
        await manager.operation_action(str(merging), "merge", "continue")
    assert caught.value.reason == "unmerged_files"
    assert git(merging, "rev-parse", "HEAD").strip() == head
    await manager.resolve_conflict(str(merging), ["f.txt"], "theirs")
    # GIT_EDITOR=true: git's prepared message, no editor, no hang.
    result = await manager.operation_action(str(merging), "merge", "continue")
    assert result["stopped"] is False
    assert result["status"]["operation"] is None
    assert git(merging, "log", "-1", "--format=%s").strip() == "Merge branch 'other'"
    assert git(merging, "rev-parse", "HEAD^2").strip() == git(merging, "rev-parse", "other").strip()


async def test_merge_abort(manager: GitManager, merging: Path) -> None:
    head = git(merging, "rev-parse", "HEAD").strip()
    result = await manager.operation_action(str(merging), "merge", "abort")
    assert result["status"]["operation"] is None
    assert result["status"]["conflicted"] == []
    assert (merging / "f.txt").read_text() == OURS
    assert git(merging, "rev-parse", "HEAD").strip() == head


async def test_rebase_continue_skip_and_abort(
    manager: GitManager, rebasing: Path, workspace_root: Path
) -> None:
    await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    result = await manager.operation_action(str(rebasing), "rebase", "continue")
    assert result["stopped"] is False
    assert result["status"]["operation"] is None
    subjects = git(rebasing, "log", "--format=%s", "main..other").split()
    assert subjects == ["add", "h", "add", "g", "theirs"]
    # Another rebase, skipped past its conflicting commit.
    again = two_branches(workspace_root / "skipping")
    git(again, "switch", "-q", "other")
    git(again, "rebase", "main", check=False)
    skipped = await manager.operation_action(str(again), "rebase", "skip")
    assert skipped["status"]["operation"] is None
    assert git(again, "log", "--format=%s", "main..other").splitlines() == ["add h", "add g"]
    # And one aborted: the branch is as it was.
    third = two_branches(workspace_root / "aborting")
    git(third, "switch", "-q", "other")
    before = git(third, "rev-parse", "other").strip()
    git(third, "rebase", "main", check=False)
    aborted = await manager.operation_action(str(third), "rebase", "abort")
    assert aborted["status"]["operation"] is None
    assert git(third, "rev-parse", "HEAD").strip() == before
    assert git(third, "symbolic-ref", "--short", "HEAD").strip() == "other"


async def test_cherry_pick_continue_and_abort(
    manager: GitManager, picking: Path, workspace_root: Path
) -> None:
    await manager.resolve_conflict(str(picking), ["f.txt"], "theirs")
    result = await manager.operation_action(str(picking), "cherry-pick", "continue")
    assert result["status"]["operation"] is None
    # The conflicting pick kept its message; the two after it were picked too.
    assert git(picking, "log", "-3", "--format=%s").splitlines() == ["add h", "add g", "theirs"]
    other = two_branches(workspace_root / "picking-abort")
    head = git(other, "rev-parse", "HEAD").strip()
    git(other, "cherry-pick", "main..other", check=False)
    await manager.operation_action(str(other), "cherry-pick", "abort")
    assert git(other, "rev-parse", "HEAD").strip() == head
    assert (await manager.status(str(other)))["operation"] is None


async def test_revert_continue(manager: GitManager, workspace_root: Path) -> None:
    root = init_repo(workspace_root / "reverting")
    write(root, "f.txt", BASE)
    commit_all(root, "base")
    write(root, "f.txt", OURS)
    commit_all(root, "change")
    write(root, "f.txt", THEIRS)
    commit_all(root, "change again")
    git(root, "revert", "--no-edit", "HEAD~1", check=False)
    assert (await manager.status(str(root)))["operation"] == "revert"
    await manager.resolve_conflict(str(root), ["f.txt"], "theirs")
    result = await manager.operation_action(str(root), "revert", "continue")
    assert result["status"]["operation"] is None
    assert git(root, "log", "-1", "--format=%s").startswith('Revert "change"')


async def test_bisect_reset(manager: GitManager, merging: Path) -> None:
    git(merging, "merge", "--abort")
    git(merging, "bisect", "start")
    git(merging, "bisect", "bad")
    git(merging, "bisect", "good", "HEAD~1")
    assert (await manager.status(str(merging)))["operation"] == "bisect"
    with pytest.raises(InvalidRequest):
        await manager.operation_action(str(merging), "bisect", "continue")
    result = await manager.operation_action(str(merging), "bisect", "reset")
    assert result["status"]["operation"] is None
    assert git(merging, "symbolic-ref", "--short", "HEAD").strip() == "main"


async def test_operation_refusals(manager: GitManager, merging: Path, project: Path) -> None:
    with pytest.raises(Conflict) as caught:
        await manager.operation_action(str(project), "merge", "abort")
    assert caught.value.reason == "no_operation"
    # The client saw a rebase; a merge is in progress: nothing is done.
    with pytest.raises(Conflict) as caught:
        await manager.operation_action(str(merging), "rebase", "abort")
    assert caught.value.reason == "no_operation"
    assert "merge is in progress" in str(caught.value)
    for operation, action in (
        ("merge", "skip"),
        ("merge", "reset"),
        ("stash", "continue"),
        (None, "abort"),
        ("merge", "--abort"),
        ("merge", None),
    ):
        with pytest.raises(InvalidRequest):
            await manager.operation_action(str(merging), operation, action)
    assert (await manager.status(str(merging)))["operation"] == "merge"


async def test_continue_with_nothing_to_commit_says_why(manager: GitManager, picking: Path) -> None:
    # The conflict resolved with what main has: the picked commit would be empty.
    await manager.resolve_conflict(str(picking), ["f.txt"], "ours")
    with pytest.raises(Conflict) as caught:
        await manager.operation_action(str(picking), "cherry-pick", "continue")
    assert caught.value.reason == "empty_commit"
    assert "skip it" in str(caught.value)
    assert (await manager.status(str(picking)))["operation"] == "cherry-pick"
    result = await manager.operation_action(str(picking), "cherry-pick", "skip")
    assert result["status"]["operation"] is None
    assert git(picking, "log", "-2", "--format=%s").splitlines() == ["add h", "add g"]


async def test_continue_stops_again_on_the_next_conflict(
    manager: GitManager, workspace_root: Path
) -> None:
    root = two_branches(workspace_root / "twice")
    git(root, "switch", "-q", "other")
    write(root, "f.txt", "one\ntwo (theirs, again)\nthree\n")
    commit_all(root, "theirs again")
    git(root, "rebase", "main", check=False)
    # Resolved by hand: the later commit's change of that line conflicts again.
    write(root, "f.txt", "one\ntwo (both)\nthree\n")
    await manager.stage(str(root), {"files": ["f.txt"]})
    result = await manager.operation_action(str(root), "rebase", "continue")
    assert result["stopped"] is True
    assert result["status"]["operation"] == "rebase"
    assert [e["path"] for e in result["status"]["conflicted"]] == ["f.txt"]


# -- the safety layer ------------------------------------------------------------------------------


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


async def test_untrusted_rebase_todo_exec_is_refused(
    manager: GitManager, rebasing: Path, tmp_path: Path
) -> None:
    """A shared folder or archive brings .git/rebase-merge with its todo list: an exec line
    there would run with the user's authority when Continue is pressed."""
    marker = tmp_path / "ran"
    todo = rebasing / ".git" / "rebase-merge" / "git-rebase-todo"
    todo.write_text(todo.read_text() + f"exec touch {marker}\n")
    await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    for action in ("continue", "skip"):
        with pytest.raises(AccessDenied) as caught:
            await manager.operation_action(str(rebasing), "rebase", action)
        assert caught.value.reason == "untrusted_repository"
        assert "exec touch" in str(caught.value)
    assert not marker.exists()
    assert (await manager.status(str(rebasing)))["operation"] == "rebase"
    # Aborting runs nothing of the todo list.
    await manager.operation_action(str(rebasing), "rebase", "abort")
    assert not marker.exists()


async def test_trusted_rebase_todo_exec_runs(
    manager: GitManager, rebasing: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    todo = rebasing / ".git" / "rebase-merge" / "git-rebase-todo"
    todo.write_text(todo.read_text() + f"exec touch {marker}\n")
    await manager.set_trust(str(rebasing), True, user="test")
    await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    result = await manager.operation_action(str(rebasing), "rebase", "continue")
    assert result["status"]["operation"] is None
    assert marker.exists()


async def test_untrusted_merge_driver_and_hooks(
    manager: GitManager, picking: Path, tmp_path: Path
) -> None:
    """A merge driver in the repository's configuration would run for the next picks; the
    repository's hooks never run untrusted (as for a commit)."""
    marker = tmp_path / "driver-ran"
    git(picking, "config", "merge.evil.driver", f"touch {marker}; false")
    (picking / ".git" / "info" / "attributes").write_text("* merge=evil\n")
    await manager.resolve_conflict(str(picking), ["f.txt"], "theirs")
    with pytest.raises(AccessDenied) as caught:
        await manager.operation_action(str(picking), "cherry-pick", "continue")
    assert "merge.evil.driver" in str(caught.value)
    git(picking, "config", "--unset", "merge.evil.driver")
    hook_marker = tmp_path / "hook-ran"
    executable(picking / ".git" / "hooks" / "post-commit", f"#!/bin/sh\ntouch {hook_marker}\n")
    executable(picking / ".git" / "hooks" / "commit-msg", "#!/bin/sh\nexit 1\n")
    result = await manager.operation_action(str(picking), "cherry-pick", "continue")
    assert result["status"]["operation"] is None
    assert not marker.exists()
    assert not hook_marker.exists()
    assert "post-commit" in result["hooks_skipped"]


async def test_continue_never_opens_the_repositorys_editor(
    manager: GitManager, merging: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "editor-ran"
    editor = executable(tmp_path / "editor.sh", f"#!/bin/sh\ntouch {marker}\nsleep 600\n")
    git(merging, "config", "core.editor", str(editor))
    git(merging, "config", "sequence.editor", str(editor))
    await manager.resolve_conflict(str(merging), ["f.txt"], "ours")
    result = await manager.operation_action(str(merging), "merge", "continue")
    assert result["status"]["operation"] is None
    assert not marker.exists()


async def test_read_only_refuses(
    make_git: Callable[..., GitManager], merging: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = make_git()
    monkeypatch.setattr(manager.security.paths, "read_only", True)
    with pytest.raises(ReadOnlyMode):
        await manager.resolve_conflict(str(merging), ["f.txt"], "ours")
    with pytest.raises(ReadOnlyMode):
        await manager.operation_action(str(merging), "merge", "abort")
    with pytest.raises(ReadOnlyMode):
        await manager.set_identity(str(merging), "A", "a@b.c")
    assert git(merging, "ls-files", "-u")


# -- identity ------------------------------------------------------------------------------------


@pytest.fixture
def no_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No identity anywhere: an empty HOME, no system or global file, no GIT_* names."""
    home = tmp_path / "empty-home"
    home.mkdir()
    for name in IDENTITY:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("EMAIL", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    return home


async def test_commit_without_identity_then_set_locally(
    manager: GitManager, project: Path, no_identity: Path
) -> None:
    write(project, "notes.txt", "new\n")
    git(project, "add", "notes.txt")
    assert (await manager.identity(str(project)))["configured"] is False
    with pytest.raises(Conflict) as caught:
        await manager.commit(str(project), "Change")
    assert caught.value.reason == "identity_unknown"
    assert "user.name and user.email are not set" in str(caught.value)
    identity = await manager.set_identity(str(project), " Grace Hopper ", "grace@example.com")
    assert identity == {
        "name": "Grace Hopper",
        "email": "grace@example.com",
        "name_scope": "local",
        "email_scope": "local",
        "configured": True,
    }
    assert git(project, "config", "--local", "user.name").strip() == "Grace Hopper"
    assert not (no_identity / ".gitconfig").exists()
    await manager.commit(str(project), "Change")
    assert git(project, "log", "-1", "--format=%an <%ae>").strip() == (
        "Grace Hopper <grace@example.com>"
    )


async def test_set_identity_globally(
    manager: GitManager, project: Path, no_identity: Path, workspace_root: Path
) -> None:
    await manager.set_identity(str(project), "Grace", "grace@example.com", "global")
    assert "Grace" in (no_identity / ".gitconfig").read_text()
    # Every repository has it now.
    other = init_repo(workspace_root / "another")
    identity = await manager.identity(str(other))
    assert identity["name"] == "Grace"
    assert identity["name_scope"] == "global"


async def test_set_identity_refusals(manager: GitManager, project: Path, no_identity: Path) -> None:
    for name, email, scope in (
        ("", "a@b.c", "local"),
        ("A", "  ", "local"),
        ("A\nB", "a@b.c", "local"),
        ("A", "a@b.c\0", "local"),
        ("A <x>", "a@b.c", "local"),
        ("A", "<a@b.c>", "local"),
        ("A", "a@b.c", "system"),
        ("A", "a@b.c", None),
        (None, "a@b.c", "local"),
        ("x" * 300, "a@b.c", "local"),
    ):
        with pytest.raises(InvalidRequest):
            await manager.set_identity(str(project), name, email, scope)
    assert "user." not in git(project, "config", "--list", "--local")
    assert not (no_identity / ".gitconfig").exists()


async def test_merge_continue_without_identity(
    manager: GitManager, merging: Path, no_identity: Path
) -> None:
    await manager.resolve_conflict(str(merging), ["f.txt"], "ours")
    with pytest.raises(Conflict) as caught:
        await manager.operation_action(str(merging), "merge", "continue")
    assert caught.value.reason == "identity_unknown"
    await manager.set_identity(str(merging), "Grace", "grace@example.com")
    await manager.operation_action(str(merging), "merge", "continue")
    assert git(merging, "log", "-1", "--format=%an").strip() == "Grace"


async def test_taking_a_side_of_a_submodule_is_refused_untrusted(
    manager: GitManager, workspace_root: Path
) -> None:
    """Both branches moved the submodule: staging a side of it runs git inside the
    submodule (its own configuration), which an untrusted repository may not make run."""
    root = submodule_conflict(workspace_root)
    assert git(root, "ls-files", "-u", "--", "sub")
    with pytest.raises(AccessDenied) as caught:
        await manager.resolve_conflict(str(root), ["sub"], "theirs")
    assert caught.value.reason == "untrusted_repository"
    assert git(root, "ls-files", "-u", "--", "sub")
