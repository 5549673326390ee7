"""Red team of continue / skip / abort, take ours / theirs, the conflicted diff and the identity
in an untrusted repository: a shared folder or archive brings its whole git folder, with the
state files of an operation "in progress". Each test builds the hostile repository for real
and proves, with a marker file, that nothing it names ran."""

from __future__ import annotations

import asyncio
import os
import stat
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import AccessDenied, Conflict, TeraxError

from .conftest import commit_all, git, init_repo, submodule_conflict, two_branches, write

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.services.git.manager import GitManager
    from tests.second_user import OtherUser


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def exists(path: Path) -> bool:
    return path.exists()


def is_link(path: Path) -> bool:
    return os.path.islink(path)


async def refused(manager: GitManager, root: Path, operation: str, action: str) -> str:
    with pytest.raises(AccessDenied) as caught:
        await manager.operation_action(str(root), operation, action)
    assert caught.value.reason == "untrusted_repository"
    return str(caught.value)


# -- the rebase todo list and strategy, as git reads them ------------------------------------


async def test_a_todo_exec_hidden_behind_a_nul_byte_is_refused(
    manager: GitManager, rebasing: Path, tmp_path: Path
) -> None:
    """git reads the todo list up to its first NUL; a diff of a file with a NUL in it says
    only "Binary files differ", which hid every line from the check."""
    marker = tmp_path / "ran"
    todo = rebasing / ".git" / "rebase-merge" / "git-rebase-todo"
    todo.write_bytes(todo.read_bytes() + f"exec touch {marker}\n".encode() + b"\0\n")
    await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    for action in ("continue", "skip"):
        await refused(manager, rebasing, "rebase", action)
    assert not exists(marker)
    assert (await manager.status(str(rebasing)))["operation"] == "rebase"


async def test_a_todo_exec_hidden_by_a_big_file_threshold_is_refused(
    manager: GitManager, rebasing: Path, tmp_path: Path
) -> None:
    """core.bigFileThreshold (the repository's own configuration) makes git diff call every
    file bigger than it binary: the todo list's lines did not show."""
    marker = tmp_path / "ran"
    git(rebasing, "config", "core.bigFileThreshold", "1")
    todo = rebasing / ".git" / "rebase-merge" / "git-rebase-todo"
    todo.write_text(todo.read_text() + f"exec touch {marker}\n")
    await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    await refused(manager, rebasing, "rebase", "continue")
    assert not exists(marker)


@pytest.mark.parametrize("where", ["info", "tree"])
async def test_a_todo_exec_hidden_by_an_encoding_attribute_is_refused(
    manager: GitManager, rebasing: Path, tmp_path: Path, where: str
) -> None:
    """Attributes apply to a git diff --no-index too: working-tree-encoding=UTF-16LE for
    git-rebase-todo (in .git/info/attributes, or the work tree's .gitattributes) turned its
    lines into other characters for the check; the sequencer reads the bytes."""
    marker = tmp_path / "ran"
    rule = "git-rebase-todo working-tree-encoding=UTF-16LE\n"
    if where == "info":
        (rebasing / ".git" / "info" / "attributes").write_text(rule)
    else:
        (rebasing / ".gitattributes").write_text(rule)
    todo = rebasing / ".git" / "rebase-merge" / "git-rebase-todo"
    todo.write_text(todo.read_text() + f"exec touch {marker}\n")
    await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    await refused(manager, rebasing, "rebase", "continue")
    assert not exists(marker)


async def test_a_todo_list_that_is_a_link_is_refused(
    manager: GitManager, rebasing: Path, tmp_path: Path
) -> None:
    """git follows a link to read the todo list; a diff of a link shows where it points."""
    marker = tmp_path / "ran"
    todo = rebasing / ".git" / "rebase-merge" / "git-rebase-todo"
    elsewhere = rebasing / ".git" / "elsewhere"
    elsewhere.write_text(todo.read_text() + f"exec touch {marker}\n")
    todo.unlink()
    todo.symlink_to(elsewhere)
    await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    await refused(manager, rebasing, "rebase", "continue")
    assert not exists(marker)


async def test_a_strategy_file_that_is_a_link_is_refused(
    manager: GitManager, rebasing: Path, tmp_path: Path
) -> None:
    """The strategy names a program (git-merge-<name>, a path relative to the work tree
    when it has a slash): read through a link it must still be seen."""
    marker = tmp_path / "ran"
    (rebasing / "git-merge-").mkdir()
    executable(rebasing / "payload.sh", f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    target = rebasing / ".git" / "strategy-target"
    target.write_text("/../payload.sh\n")
    (rebasing / ".git" / "rebase-merge" / "strategy").symlink_to(target)
    await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    await refused(manager, rebasing, "rebase", "continue")
    assert not exists(marker)


async def test_a_sequencer_strategy_on_the_section_line_is_refused(
    manager: GitManager, picking: Path, tmp_path: Path
) -> None:
    """sequencer/opts is a git config file: "[options] strategy = x" is one valid line, and
    the strategy runs git-merge-<x> for the next picks."""
    marker = tmp_path / "ran"
    (picking / "git-merge-").mkdir()
    executable(picking / "payload.sh", f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    opts = picking / ".git" / "sequencer" / "opts"
    opts.write_text("[options] strategy = /../payload.sh\n")
    await manager.resolve_conflict(str(picking), ["f.txt"], "theirs")
    await refused(manager, picking, "cherry-pick", "continue")
    assert not exists(marker)


# -- signing asked for by the state ----------------------------------------------------------


@pytest.fixture
def user_gpg(tmp_path: Path) -> Path:
    """The user's own gpg.program (global configuration): a marker that signs nothing."""
    marker = tmp_path / "signed"
    program = executable(tmp_path / "gpg.sh", f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    git(tmp_path, "config", "--global", "gpg.program", str(program))
    return marker


async def test_a_rebase_state_asking_to_sign_is_refused(
    manager: GitManager, rebasing: Path, user_gpg: Path
) -> None:
    """rebase-merge/gpg_sign_opt makes every rebased commit signed with the user's key: an
    untrusted repository would get the user's signature on its commits (commit.gpgsign of
    the repository is set back to false; this file is not configuration)."""
    (rebasing / ".git" / "rebase-merge" / "gpg_sign_opt").write_text("-S\n")
    await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    for action in ("continue", "skip"):
        await refused(manager, rebasing, "rebase", action)
    assert not exists(user_gpg)


async def test_a_sequencer_state_asking_to_sign_is_refused(
    manager: GitManager, picking: Path, user_gpg: Path
) -> None:
    # What git writes for "git cherry-pick -S main..other".
    (picking / ".git" / "sequencer" / "opts").write_text("[options]\n\tgpg-sign = \n")
    await manager.resolve_conflict(str(picking), ["f.txt"], "theirs")
    await refused(manager, picking, "cherry-pick", "continue")
    assert not exists(user_gpg)


# -- identity --------------------------------------------------------------------------------


async def test_local_identity_is_not_written_through_a_linked_config(
    manager: GitManager, workspace_root: Path, tmp_path: Path
) -> None:
    """An archive's .git/config can be a link to a file elsewhere (here: one that does not
    exist yet): git config writes through it."""
    root = two_branches(workspace_root / "linked")
    outside = tmp_path / "outside" / "profile"
    outside.parent.mkdir()
    config = root / ".git" / "config"
    outside.write_text(config.read_text())
    config.unlink()
    config.symlink_to(outside)
    before = outside.read_text()
    with pytest.raises(AccessDenied):
        await manager.set_identity(str(root), "Mallory", "m@example.com", "local")
    assert outside.read_text() == before
    assert is_link(config)


# -- what taking a side, the conflicted diff and abort may run (guards: none ran before) -------


def conflicted_merge(root: Path, name: str = "f.txt") -> Path:
    """main and other change the same line of ``name``; merged: conflicted."""
    init_repo(root)
    write(root, name, "one\n")
    write(root, "keep.txt", "keep\n")
    commit_all(root, "base")
    git(root, "switch", "-q", "-c", "other")
    write(root, name, "theirs\n")
    commit_all(root, "theirs")
    git(root, "switch", "-q", "main")
    write(root, name, "ours\n")
    commit_all(root, "ours")
    assert "CONFLICT" in git(root, "merge", "other", check=False)
    return root


async def test_taking_a_side_runs_no_filter_the_repository_names(
    manager: GitManager, workspace_root: Path, tmp_path: Path
) -> None:
    """checkout --theirs smudges, add cleans: the repository's filter drivers (in an
    included file, too) are set back to nothing; its diff drivers do not run for the
    conflicted diff."""
    root = conflicted_merge(workspace_root / "filters")
    marker = tmp_path / "ran"
    program = executable(tmp_path / "program.sh", f"#!/bin/sh\ntouch {marker}\n")
    (root / ".git" / "evil.cfg").write_text(
        f'[filter "x"]\n\tsmudge = touch {marker}; cat\n\tclean = touch {marker}; cat\n'
        f'[diff "x"]\n\ttextconv = touch {marker}; cat\n'
        f"[diff]\n\texternal = {program}\n[core]\n\tfsmonitor = {program}\n"
    )
    git(root, "config", "include.path", "evil.cfg")
    git(root, "config", f"includeIf.gitdir:{root}/.git.path", "evil.cfg")
    (root / ".git" / "info" / "attributes").write_text("* filter=x diff=x\n")
    diff = await manager.diff(str(root), "f.txt")
    assert diff["status"] == "conflicted"
    await manager.resolve_conflict(str(root), ["f.txt"], "theirs")
    assert (root / "f.txt").read_text() == "theirs\n"
    assert not exists(marker)


async def test_hooks_named_through_an_include_do_not_run(
    manager: GitManager, workspace_root: Path, tmp_path: Path
) -> None:
    """core.hooksPath from an included file (or .git/hooks) for continue and abort."""
    root = conflicted_merge(workspace_root / "hooks")
    marker = tmp_path / "hook"
    hooks = tmp_path / "evil-hooks"
    hooks.mkdir()
    for name in (
        "pre-commit",
        "commit-msg",
        "post-commit",
        "post-checkout",
        "post-merge",
        "prepare-commit-msg",
        "pre-merge-commit",
        "reference-transaction",
    ):
        executable(hooks / name, f"#!/bin/sh\ntouch {marker}\n")
        executable(root / ".git" / "hooks" / name, f"#!/bin/sh\ntouch {marker}\n")
    (root / ".git" / "evil.cfg").write_text(f"[core]\n\thooksPath = {hooks}\n")
    git(root, "config", "include.path", "evil.cfg")
    await manager.resolve_conflict(str(root), ["f.txt"], "ours")
    result = await manager.operation_action(str(root), "merge", "continue")
    assert result["status"]["operation"] is None
    assert not exists(marker)


async def test_taking_a_side_stays_in_the_repository_and_off_protected_files(
    manager: GitManager, workspace_root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("precious\n")
    # A conflicted file whose work-tree copy became a link to a file outside.
    root = conflicted_merge(workspace_root / "linked-file")
    (root / "f.txt").unlink()
    (root / "f.txt").symlink_to(outside / "f.txt")
    with pytest.raises(TeraxError):
        await manager.resolve_conflict(str(root), ["f.txt"], "theirs")
    # A conflicted file below a folder that became a link to a folder outside.
    nested = conflicted_merge(workspace_root / "linked-dir", "d/f.txt")
    (nested / "d" / "f.txt").unlink()
    (nested / "d").rmdir()
    (nested / "d").symlink_to(outside)
    with pytest.raises(TeraxError):
        await manager.resolve_conflict(str(nested), ["d/f.txt"], "theirs")
    assert (outside / "f.txt").read_text() == "precious\n"
    # Names that leave the repository, and a protected file.
    for name in ("../linked-file/f.txt", "/etc/passwd", "d/../../x"):
        with pytest.raises(TeraxError):
            await manager.resolve_conflict(str(nested), [name], "theirs")
    secret = conflicted_merge(workspace_root / "secret", ".env")
    with pytest.raises(TeraxError) as caught:
        await manager.resolve_conflict(str(secret), [".env"], "theirs")
    assert isinstance(caught.value, AccessDenied)
    assert "<<<<<<<" in (secret / ".env").read_text()


async def test_conflicted_diff_caps_and_binary_sides(
    make_git: Callable[..., GitManager], workspace_root: Path
) -> None:
    """Sides bigger than the cap are not read; binary ones are not decoded as text."""
    manager = make_git(max_diff_bytes=64 * 1024)
    root = init_repo(workspace_root / "sizes")
    write(root, "f.txt", "base\n")
    commit_all(root, "base")
    git(root, "switch", "-q", "-c", "other")
    write(root, "f.txt", b"\0binary\0" * 10)
    commit_all(root, "theirs")
    git(root, "switch", "-q", "main")
    write(root, "f.txt", "x" * (1024 * 1024) + "\n")
    commit_all(root, "ours")
    git(root, "merge", "other", check=False)
    diff = await manager.diff(str(root), "f.txt")
    assert diff["status"] == "conflicted"
    sides = diff["conflict"]["sides"]
    assert sides["ours"]["too_large"] is True
    assert sides["ours"]["text"] is None
    assert sides["theirs"]["binary"] is True
    assert sides["theirs"]["text"] is None
    assert sides["base"]["text"] == "base\n"


async def test_a_bisect_start_that_is_an_option_is_refused(
    manager: GitManager, workspace_root: Path
) -> None:
    """git bisect reset runs "git checkout <BISECT_START> --": "-f" there threw away the
    user's uncommitted work without a word."""
    root = init_repo(workspace_root / "bisect")
    write(root, "a.txt", "a\n")
    commit_all(root, "a")
    write(root, "a.txt", "a\nmy uncommitted work\n")
    (root / ".git" / "BISECT_START").write_text("-f\n")
    (root / ".git" / "BISECT_LOG").write_text("")
    with pytest.raises(Conflict) as caught:
        await manager.operation_action(str(root), "bisect", "reset")
    assert caught.value.reason == "invalid_state"
    assert (root / "a.txt").read_text() == "a\nmy uncommitted work\n"
    # A real starting point still ends the bisect.
    (root / ".git" / "BISECT_START").write_text("main\n")
    result = await manager.operation_action(str(root), "bisect", "reset")
    assert result["status"]["operation"] is None
    assert (root / "a.txt").read_text() == "a\nmy uncommitted work\n"


async def test_the_conflicted_diff_of_a_submodule(
    manager: GitManager, workspace_root: Path
) -> None:
    """Both branches moved a submodule: its sides are commits of another repository (not in
    this one's objects), shown as such, and nothing runs inside the submodule."""
    root = submodule_conflict(workspace_root)
    diff = await manager.diff(str(root), "sub")
    assert diff["status"] == "conflicted"
    for name in ("base", "ours", "theirs"):
        side = diff["conflict"]["sides"][name]
        assert side["present"] is True
        assert side["binary"] is True
        assert side["text"] is None


async def test_another_users_repository_in_progress_runs_nothing(
    manager: GitManager, rebasing: Path, tmp_path: Path, second_user: OtherUser
) -> None:
    """A repository another account owns (a shared folder), with a rebase "in progress" whose
    todo list runs a command: git refuses a repository of another owner (safe.directory is
    never set by Terax), so neither Continue nor taking a side runs anything."""
    marker = tmp_path / "ran"
    todo = rebasing / ".git" / "rebase-merge" / "git-rebase-todo"
    todo.write_text(todo.read_text() + f"exec touch {marker}\n")
    for folder, _, names in os.walk(rebasing):
        for name in [".", *names]:
            os.lchown(os.path.join(folder, name), second_user.uid, second_user.gid)
    with pytest.raises(TeraxError):
        await manager.resolve_conflict(str(rebasing), ["f.txt"], "theirs")
    with pytest.raises(TeraxError):
        await manager.operation_action(str(rebasing), "rebase", "continue")
    assert not exists(marker)


async def test_a_conflicted_path_that_became_a_fifo_does_not_hang(
    manager: GitManager, workspace_root: Path
) -> None:
    """An archive can hold a FIFO where the conflicted file was: reading it would wait for a
    writer forever."""
    root = conflicted_merge(workspace_root / "fifo")
    (root / "f.txt").unlink()
    os.mkfifo(root / "f.txt")
    try:
        diff = await asyncio.wait_for(manager.diff(str(root), "f.txt"), timeout=60)
        assert diff["status"] == "conflicted"
    except TeraxError:
        pass  # refused is fine too: the point is that it returns
    await asyncio.wait_for(manager.resolve_conflict(str(root), ["f.txt"], "theirs"), timeout=60)
    assert (root / "f.txt").read_text() == "theirs\n"
