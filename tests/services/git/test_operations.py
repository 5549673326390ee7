"""Commits (hooks, amend, sign-off), fetch, pull fast-forward only, push with upstreams."""

from __future__ import annotations

import asyncio
import contextlib
import stat
from typing import TYPE_CHECKING

import psutil
import pytest

from terax_jupyter.exceptions import (
    AccessDenied,
    Conflict,
    InvalidRequest,
    NotFound,
    Timeout,
    Unavailable,
)
from terax_jupyter.services.git.operations import remote_error
from terax_jupyter.services.git.repository import Repo
from terax_jupyter.services.git.runner import GitFailed, GitRunner
from terax_jupyter.services.git.safety import TRUSTED_SAFETY

from .conftest import commit_all, git, write

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.services.git.manager import GitManager


def trusted(project: Path) -> Repo:
    """The repository as a trusted one (its hooks may run)."""
    return Repo(str(project), str(project / ".git"), "", safety=TRUSTED_SAFETY)


async def test_commit_amend_and_signoff(manager: GitManager, project: Path) -> None:
    write(project, "notes.txt", "new\n")
    git(project, "add", "notes.txt")
    result = await manager.commit(str(project), "Change notes\n\nBody.", signoff=True)
    assert result["summary"] == "Change notes"
    assert result["oid"] == git(project, "rev-parse", "HEAD").strip()
    assert "Signed-off-by: Ada Lovelace <ada@example.com>" in git(
        project, "log", "-1", "--format=%B"
    )
    assert result["status"]["staged"] == []
    amended = await manager.commit(str(project), "Reworded", amend=True)
    assert amended["oid"] != result["oid"]
    assert git(project, "log", "-1", "--format=%s").strip() == "Reworded"


async def test_commit_refusals(manager: GitManager, project: Path) -> None:
    with pytest.raises(Conflict) as caught:
        await manager.commit(str(project), "nothing")
    assert caught.value.reason == "nothing_to_commit"
    write(project, "notes.txt", "new\n")
    git(project, "add", "notes.txt")
    for message in ("", "  \n", None, "a\0b"):
        with pytest.raises(InvalidRequest):
            await manager.commit(str(project), message)
    assert git(project, "diff", "--cached", "--name-only") == "notes.txt\n"


async def test_failing_hook_output_comes_back(manager: GitManager, project: Path) -> None:
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint: trailing whitespace in notes.txt'\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    write(project, "notes.txt", "new\n")
    git(project, "add", "notes.txt")
    head = git(project, "rev-parse", "HEAD")
    await manager.set_trust(str(project), True, user="ada")
    with pytest.raises(Conflict) as caught:
        await manager.commit(str(project), "blocked")
    assert caught.value.reason == "hook_failed"
    assert "lint: trailing whitespace in notes.txt" in caught.value.message
    assert git(project, "rev-parse", "HEAD") == head
    assert git(project, "diff", "--cached", "--name-only") == "notes.txt\n"


async def test_push_sets_the_upstream_when_missing(
    manager: GitManager, project: Path, upstream: Path
) -> None:
    git(project, "switch", "-q", "-c", "topic")
    write(project, "topic.txt", "topic\n")
    commit_all(project, "topic")
    result = await manager.remote_action("push", str(project))
    assert result["status"]["branch"]["upstream"] == "origin/topic"
    assert git(upstream, "rev-parse", "topic") == git(project, "rev-parse", "topic")


async def test_rejected_push_then_pull_fast_forward_and_diverged(
    manager: GitManager, project: Path, other_clone: Path
) -> None:
    write(other_clone, "theirs.txt", "theirs\n")
    commit_all(other_clone, "theirs")
    git(other_clone, "push", "-q")
    # Behind only: pull fast-forwards.
    result = await manager.remote_action("pull", str(project))
    assert (project / "theirs.txt").exists()
    assert result["status"]["branch"]["behind"] == 0
    # Both sides move: push is rejected, pull refuses to merge.
    write(other_clone, "theirs2.txt", "again\n")
    commit_all(other_clone, "theirs again")
    git(other_clone, "push", "-q")
    write(project, "ours.txt", "ours\n")
    commit_all(project, "ours")
    head = git(project, "rev-parse", "HEAD")
    with pytest.raises(Conflict) as caught:
        await manager.remote_action("push", str(project))
    assert caught.value.reason == "push_rejected"
    with pytest.raises(Conflict) as caught:
        await manager.remote_action("pull", str(project))
    assert caught.value.reason == "not_fast_forward"
    assert git(project, "rev-parse", "HEAD") == head
    fetched = await manager.remote_action("fetch", str(project), "origin")
    assert fetched["status"]["branch"]["behind"] == 1


async def test_unreachable_remote_and_unknown_remote(manager: GitManager, project: Path) -> None:
    git(project, "remote", "add", "gone", str(project.parent / "no-such-repo.git"))
    with pytest.raises(Unavailable) as caught:
        await manager.remote_action("fetch", str(project), "gone")
    assert caught.value.reason == "remote_unavailable"
    with pytest.raises(NotFound) as unknown:
        await manager.remote_action("fetch", str(project), "nowhere")
    assert unknown.value.reason == "unknown_remote"
    with pytest.raises(InvalidRequest):
        await manager.remote_action("fetch", str(project), "--upload-pack=touch x")


@pytest.mark.parametrize(
    ("stderr", "kind", "reason"),
    [
        (
            "fatal: could not read Username for 'https://github.com': terminal prompts disabled",
            AccessDenied,
            "credentials_required",
        ),
        (
            "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote "
            "repository.",
            AccessDenied,
            "credentials_required",
        ),
        (
            "fatal: unable to access 'https://x/': Could not resolve host: x",
            Unavailable,
            "remote_unavailable",
        ),
        (
            " ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs",
            Conflict,
            "push_rejected",
        ),
    ],
)
def test_remote_errors_are_classified(stderr: str, kind: type, reason: str) -> None:
    error = remote_error(GitFailed("git push failed", stderr=stderr), "push")
    assert isinstance(error, kind)
    assert error.reason == reason


async def test_runner_times_out_and_never_prompts(project: Path) -> None:
    runner = GitRunner(timeout=0.5)
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nsleep 30\n")
    hook.chmod(0o755)
    write(project, "notes.txt", "x\n")
    git(project, "add", "notes.txt")
    started = asyncio.get_running_loop().time()
    with pytest.raises(Timeout):
        await runner.run(trusted(project), "commit", "-m", "slow", hooks=True)
    assert asyncio.get_running_loop().time() - started < 5
    result = await runner.run(str(project), "var", "GIT_EDITOR")
    assert result.text.strip() == "true"


async def test_a_git_starting_as_the_runner_closes_is_stopped(project: Path) -> None:
    # close() may come while a git is being started, before the runner knows its process
    # (seen on a loaded machine: a commit and its hook then ran on for 30 s).
    runner = GitRunner(timeout=60)
    await runner.close()
    with pytest.raises(GitFailed) as stopped:
        await runner.run(trusted(project), "status")
    assert stopped.value.reason == "git_stopped"


async def test_closing_the_runner_ends_git_and_its_hooks(project: Path) -> None:
    # The server stops while a commit's hook still runs: neither git nor the hook outlives it.
    runner = GitRunner(timeout=60)
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho $$ > hook.pid\nexec sleep 30\n")
    hook.chmod(0o755)
    write(project, "notes.txt", "x\n")
    git(project, "add", "notes.txt")
    commit = asyncio.ensure_future(runner.run(trusted(project), "commit", "-m", "slow", hooks=True))
    pid_file = project / "hook.pid"
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.025)
    hook_pid = int(pid_file.read_text())
    await runner.close()
    with pytest.raises(GitFailed):
        await commit
    # SIGKILL is sent; on a loaded machine the hook may need a moment to be scheduled and die.
    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.wait_procs([psutil.Process(hook_pid)], timeout=10)
    assert not psutil.pid_exists(hook_pid) or psutil.Process(hook_pid).status() == "zombie"
