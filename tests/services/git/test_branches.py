"""Branches: list local and remote, create, check out without ever losing local changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import AlreadyExists, Conflict, InvalidRequest, NotFound

from .conftest import commit_all, git, write

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.services.git.manager import GitManager


async def test_lists_local_and_remote_branches(
    manager: GitManager, project: Path, upstream: Path
) -> None:
    write(project, "ahead.txt", "ahead\n")
    commit_all(project, "ahead")
    listed = await manager.branches(str(project))
    assert (listed["current"], listed["detached"]) == ("main", False)
    local = {b["name"]: b for b in listed["local"]}
    assert set(local) == {"main", "feature"}
    assert (local["main"]["upstream"], local["main"]["ahead"], local["main"]["behind"]) == (
        "origin/main",
        1,
        0,
    )
    assert local["main"]["subject"] == "ahead"
    assert {(b["name"], b["remote"]) for b in listed["remote"]} == {
        ("origin/main", "origin"),
        ("origin/feature", "origin"),
    }


async def test_create_and_check_out(manager: GitManager, project: Path) -> None:
    listed = await manager.create_branch(str(project), "topic/one", start_point="HEAD~1")
    assert "topic/one" in {b["name"] for b in listed["local"]}
    assert listed["current"] == "main"
    with pytest.raises(AlreadyExists):
        await manager.create_branch(str(project), "topic/one")
    for bad in ("-x", "a..b", "bad name", "HEAD", "x\0y", "", "refs/heads/x"):
        with pytest.raises(InvalidRequest):
            await manager.create_branch(str(project), bad)
    with pytest.raises(NotFound):
        await manager.create_branch(str(project), "two", start_point="no-such-ref")
    status = await manager.checkout(str(project), "topic/one")
    assert status["branch"]["head"] == "topic/one"
    listed = await manager.create_branch(str(project), "three", checkout=True)
    assert listed["current"] == "three"


async def test_checkout_of_a_remote_branch_creates_a_tracking_one(
    manager: GitManager, project: Path, upstream: Path
) -> None:
    git(project, "branch", "-q", "-D", "feature")
    status = await manager.checkout(str(project), "origin/feature")
    assert (status["branch"]["head"], status["branch"]["upstream"]) == (
        "feature",
        "origin/feature",
    )


async def test_checkout_that_would_overwrite_changes_nothing(
    manager: GitManager, project: Path
) -> None:
    git(project, "switch", "-q", "-c", "other")
    write(project, "notes.txt", "other branch\n")
    commit_all(project, "other")
    git(project, "switch", "-q", "main")
    write(project, "notes.txt", "precious local work\n")
    with pytest.raises(Conflict) as caught:
        await manager.checkout(str(project), "other")
    assert caught.value.reason == "would_overwrite"
    assert "notes.txt" in caught.value.message
    assert (project / "notes.txt").read_text() == "precious local work\n"
    assert git(project, "branch", "--show-current").strip() == "main"
    with pytest.raises(NotFound):
        await manager.checkout(str(project), "nope")
    with pytest.raises(InvalidRequest):
        await manager.checkout(str(project), "--force")
