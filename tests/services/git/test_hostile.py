"""Repositories that name programs: no git read runs one, untrusted writes run none either.

Every test first proves the trap with plain git (the repository really would run it), then
drives the git service and checks the marker stays empty.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import AccessDenied, NotFound, TeraxError
from terax_jupyter.services.fs.watch import WatchService
from terax_jupyter.services.git.safety import (
    Safety,
    assess,
    parse_config_list,
)

from .conftest import commit_all, git, init_repo, write
from .hostile import (
    Trap,
    embedded_bare_clone,
    git_state,
    hostile_config,
    make_trap,
    plant_hooks,
    raw_git,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.git.manager import GitManager


@pytest.fixture
def trap(tmp_path: Path) -> Trap:
    return make_trap(tmp_path / "trap")


@pytest.fixture
def hostile(workspace_root: Path, trap: Trap) -> Path:
    root = hostile_config(workspace_root / "hostile", trap)
    # The trap is live: plain git status and log run fsmonitor, the clean filter, gpg.
    raw_git(root, "status", "--porcelain")
    raw_git(root, "log", "-1")
    fired = " ".join(trap.fired())
    assert "trap.sh 2 " in fired  # fsmonitor's protocol version
    assert "--verify" in fired  # gpg
    trap.reset()
    return root


async def read_everything(manager: GitManager, path: str) -> dict[str, Any]:
    """Every read the API offers, on the repository of ``path``."""
    repo = await manager.resolve(path)
    head = git(repo.root, "rev-parse", "HEAD").strip()
    return {
        "repository": await manager.repository(path),
        "status": await manager.status(path),
        "worktree": await manager.diff(path, "notes.txt"),
        "touched": await manager.diff(path, "touched.txt"),
        "untracked": await manager.diff(path, "new.txt"),
        "index": await manager.diff(path, "notes.txt", source="index"),
        "commit": await manager.diff(path, "notes.txt", source="commit", commit="HEAD~1"),
        "log": await manager.log(path),
        "detail": await manager.commit_detail(path, head),
        "branches": await manager.branches(path),
        "trust": await manager.trust_info(path),
    }


async def test_no_read_runs_what_the_repository_names(
    manager: GitManager, hostile: Path, trap: Trap
) -> None:
    write(hostile, "new.txt", "untracked, diffed with --no-index through the filter\n")
    before = git_state(hostile / ".git")
    seen = await read_everything(manager, str(hostile))
    assert trap.fired() == []
    # ... and the reads still tell the truth.
    assert [e["path"] for e in seen["status"]["unstaged"]] == ["notes.txt"]
    assert [e["path"] for e in seen["status"]["untracked"]] == ["new.txt"]
    assert [line["text"] for line in seen["worktree"]["hunks"][0]["lines"]][-1] == "four"
    assert seen["touched"]["status"] == "unmodified"
    assert seen["untracked"]["status"] == "added"
    assert seen["log"]["commits"][0]["subject"] == "A signed commit"
    assert seen["detail"]["message"] == "A signed commit"
    assert seen["branches"]["current"] == "main"
    # Nothing under .git changed: no index refresh, no commit-graph (the caller may not
    # write here: manager.repository and manager.log default to reads that write nothing).
    assert git_state(hostile / ".git") == before
    keys = {p["key"] for p in seen["trust"]["programs"]}
    assert {"core.fsmonitor", "filter.evil.clean", "gpg.program", "diff.evil.textconv"} <= keys
    assert seen["trust"]["trusted"] is False
    assert sorted(seen["trust"]["hooks"]) == sorted(
        ["post-index-change", "reference-transaction", "post-checkout", "pre-auto-gc"]
    )


async def test_each_read_route_alone_runs_nothing(
    manager: GitManager, hostile: Path, trap: Trap
) -> None:
    path = str(hostile)
    head = git(hostile, "rev-parse", "HEAD").strip()
    calls = {
        "status": lambda: manager.status(path),
        "diff": lambda: manager.diff(path, "notes.txt"),
        "diff of a stat-dirty file": lambda: manager.diff(path, "touched.txt"),
        "log": lambda: manager.log(path),
        "log of a file": lambda: manager.log(path, file="notes.txt"),
        "commit": lambda: manager.commit_detail(path, head),
        "branches": lambda: manager.branches(path),
        "repository": lambda: manager.repository(path),
    }
    for name, call in calls.items():
        await call()
        assert trap.fired() == [], name


NO_FILTER = (
    "-c",
    "filter.evil.process=",
    "-c",
    "filter.evil.clean=",
    "-c",
    "filter.evil.required=no",
)


async def test_the_same_reads_with_plain_git_would_fire(hostile: Path, trap: Trap) -> None:
    # The control: each vector the service closes is open in plain git on this repository.
    # (what plain git runs, a sign of that program in the marker)
    vectors = {
        "fsmonitor": (("status", "--porcelain"), "trap.sh 2 "),
        "process filter": (("-c", "core.fsmonitor=false", "diff", "--", "touched.txt"), None),
        "gpg": (("-c", "core.fsmonitor=false", "show", "-s", "HEAD"), "--verify"),
        # A patch for textconv or an external diff smudges the blob first: the filter runs.
        "textconv": (("-c", "core.fsmonitor=false", "log", "-p", "-1", "HEAD~1"), None),
        "hook": (("-c", "core.fsmonitor=false", *NO_FILTER, "diff"), "post-index-"),
    }
    for name, (args, sign) in vectors.items():
        raw_git(hostile, *args)
        fired = trap.fired()
        assert fired, name
        if sign is not None:
            assert sign in " ".join(fired), (name, fired)
        trap.reset()


async def test_staging_and_discarding_untrusted_run_no_filter(
    manager: GitManager, hostile: Path, trap: Trap
) -> None:
    await manager.stage(str(hostile), {"files": ["notes.txt", "touched.txt"]})
    await manager.unstage(str(hostile), {"files": ["touched.txt"]})
    confirmation = await manager.discard(str(hostile), {"files": ["touched.txt"]})
    await manager.discard(str(hostile), {"files": ["touched.txt"], "confirm": confirmation.token})
    assert trap.fired() == []
    # Without its filter, git stores the file as it is (cat-file converts nothing).
    assert git(hostile, "cat-file", "blob", ":notes.txt") == "one\ntwo\nthree\nfour\n"


async def test_an_embedded_bare_repository_is_stepped_over(
    manager: GitManager, workspace_root: Path, tmp_path: Path, trap: Trap
) -> None:
    clone = embedded_bare_clone(workspace_root, tmp_path / "source", trap)
    payload = clone / "docs" / "payload"
    raw_git(payload, "status")
    assert trap.fired(), "plain git inside docs/payload runs its fsmonitor"
    trap.reset()
    before = git_state(clone / ".git")
    for path in (payload, payload / "refs", payload / "objects" / "info"):
        repo = await manager.resolve(str(path))
        # The repository meant is the project that holds the payload as files.
        assert repo.root == str(clone)
        status = await manager.status(str(path))
        assert status["root"] == str(clone)
        info = await manager.repository(str(path))
        assert info["root"] == str(clone)
        await manager.log(str(path))
        await manager.branches(str(path))
    assert trap.fired() == []
    assert git_state(clone / ".git") == before


async def test_a_bare_repository_with_nothing_around_it_is_no_repository(
    manager: GitManager, workspace_root: Path, trap: Trap
) -> None:
    payload = workspace_root / "payload"
    write(payload, "HEAD", "ref: refs/heads/main\n")
    write(
        payload,
        "config",
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f"\tfsmonitor = {trap.program}\n",
    )
    (payload / "objects").mkdir()
    (payload / "refs").mkdir()
    raw_git(payload, "status")
    assert trap.fired()
    trap.reset()
    with pytest.raises(NotFound) as caught:
        await manager.status(str(payload))
    assert caught.value.reason == "not_a_repository"
    assert trap.fired() == []


async def test_a_git_dir_elsewhere_is_refused(
    manager: GitManager, workspace_root: Path, trap: Trap
) -> None:
    # core.worktree moves the work tree of a repository to another folder of the workspace:
    # git would treat that folder as the work tree of this git dir.
    store = init_repo(workspace_root / "store")
    target = workspace_root / "target"
    write(target, "file.txt", "x\n")
    git(store, "config", "core.worktree", str(target))
    git(store, "config", "core.fsmonitor", str(trap.program))
    raw_git(store, "status")
    assert trap.fired(), "plain git runs the fsmonitor, in the moved work tree"
    trap.reset()
    with pytest.raises(AccessDenied) as caught:
        await manager.status(str(store))
    assert caught.value.reason == "unexpected_git_dir"
    assert "core.worktree" in caught.value.message
    assert trap.fired() == []


async def test_worktrees_and_submodules_are_still_repositories(
    manager: GitManager, project: Path, workspace_root: Path
) -> None:
    linked = workspace_root / "linked"
    git(project, "worktree", "add", "-q", str(linked), "-b", "side")
    repo = await manager.resolve(str(linked))
    assert (repo.root, repo.common_dir) == (str(linked), str(project / ".git"))
    assert (await manager.status(str(linked)))["branch"]["head"] == "side"
    library = init_repo(workspace_root / "library")
    write(library, "lib.txt", "lib\n")
    commit_all(library, "lib")
    git(project, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(library), "lib")
    repo = await manager.resolve(str(project / "lib"))
    assert repo.root == str(project / "lib")
    assert repo.git_dir == str(project / ".git" / "modules" / "lib")


async def test_a_forged_worktree_link_is_refused(
    manager: GitManager, project: Path, workspace_root: Path
) -> None:
    # A .git file pointing into another repository's worktrees/ that does not list it.
    linked = workspace_root / "linked"
    git(project, "worktree", "add", "-q", str(linked), "-b", "side")
    forged = workspace_root / "forged"
    forged.mkdir()
    (forged / ".git").write_text(f"gitdir: {project / '.git' / 'worktrees' / 'linked'}\n")
    with pytest.raises(AccessDenied) as caught:
        await manager.status(str(forged))
    assert caught.value.reason == "unexpected_git_dir"
    # A git dir elsewhere whose core.worktree names that real worktree: its .git file does
    # not name this git dir.
    other = init_repo(workspace_root / "other")
    git(other, "config", "core.worktree", str(linked))
    with pytest.raises(AccessDenied) as caught:
        await manager.status(str(other))
    assert caught.value.reason == "unexpected_git_dir"
    assert (await manager.resolve(str(linked))).root == str(linked)


async def test_a_hostile_submodule_is_not_entered(
    manager: GitManager, project: Path, workspace_root: Path, trap: Trap
) -> None:
    library = init_repo(workspace_root / "library")
    write(library, ".gitattributes", "*.txt filter=sub\n")
    write(library, "lib.txt", "lib\n")
    commit_all(library, "lib")
    git(project, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(library), "lib")
    commit_all(project, "add lib")
    sub = project / "lib"
    git(sub, "config", "filter.sub.clean", str(trap.program))
    # Same content, newer time: git status inside the submodule must hash it (the filter).
    future = time.time() + 2
    os.utime(sub / "lib.txt", (future, future))
    raw_git(project, "status", "--porcelain")
    assert trap.fired(), "plain git status recurses into the submodule"
    trap.reset()
    await manager.status(str(project))
    await manager.diff(str(project), "notes.txt")
    assert trap.fired() == []
    # Staging the submodule would run git inside it: refused until trusted.
    with pytest.raises(AccessDenied) as caught:
        await manager.stage(str(project), {"files": ["lib"]})
    assert caught.value.reason == "untrusted_repository"
    assert trap.fired() == []


async def test_network_programs_of_an_untrusted_repository_are_refused(
    manager: GitManager, project: Path, upstream: Path, trap: Trap
) -> None:
    trap = make_trap(trap.marker.parent / "quick", passthrough=False)
    for key in ("remote.origin.uploadpack", "core.sshCommand", "credential.helper"):
        git(project, "config", key, str(trap.program))
        with pytest.raises(AccessDenied) as caught:
            await manager.remote_action("fetch", str(project))
        assert caught.value.reason == "untrusted_repository"
        assert key.lower() in caught.value.message.lower()
        git(project, "config", "--unset", key)
    git(project, "config", "remote.origin.uploadpack", str(trap.program))
    raw_git(project, "fetch", "origin")
    assert trap.fired(), "plain git fetch runs the repository's upload-pack"
    trap.reset()
    await manager.set_trust(str(project), True, user="ada")
    with pytest.raises(TeraxError):  # the trap is no upload-pack; what matters: it ran
        await manager.remote_action("fetch", str(project))
    assert trap.fired()


async def test_ext_transport_is_never_allowed(
    manager: GitManager, project: Path, tmp_path: Path
) -> None:
    made = tmp_path / "made-by-ext"
    git(project, "config", "protocol.ext.allow", "always")
    git(project, "remote", "add", "evil", f"ext::sh -c touch% {made}")
    raw_git(project, "fetch", "evil")
    assert made.exists(), "plain git would run ext::"
    made.unlink()
    await manager.set_trust(str(project), True, user="ada")  # not even when trusted
    with pytest.raises(TeraxError) as caught:
        await manager.remote_action("fetch", str(project), "evil")
    assert "not allowed" in str(caught.value)
    assert not made.exists()


async def test_signing_programs_fall_back_to_the_users(
    manager: GitManager, project: Path, trap: Trap
) -> None:
    git(project, "config", "commit.gpgSign", "true")
    git(project, "config", "gpg.program", str(trap.program))
    write(project, "notes.txt", "signed?\n")
    git(project, "add", "notes.txt")
    result = await manager.commit(str(project), "not signed by the repository's program")
    assert trap.fired() == []
    assert "gpgsig" not in git(project, "cat-file", "-p", result["oid"])


def test_assess_neutralises_only_the_repositorys_own_programs() -> None:
    listing = b"".join(
        scope.encode() + b"\0" + record.encode() + b"\0"
        for scope, record in (
            ("global", "filter.lfs.clean\ngit-lfs clean -- %f"),
            ("global", "gpg.program\n/usr/local/bin/gpg2"),
            ("local", "filter.lfs.clean\n/tmp/evil"),
            ("local", "filter.lfs.process\n/tmp/evil"),
            ("local", 'filter.a=b "q.smudge\n/tmp/evil'),
            ("local", "gpg.program\n/tmp/evil"),
            ("local", "core.sshcommand\n/tmp/evil"),
            ("worktree", "credential.https://example.com.helper\n!evil"),
            ("local", "core.bare"),  # a key without a value
            ("command", "filter.mine.clean\ncat"),
        )
    )
    entries = parse_config_list(listing)
    assert entries[8].value is None
    safety = assess(entries, trusted=False)
    overrides = dict(safety.overrides)
    # The user's git-lfs stays; what the repository added is blanked.
    assert overrides["filter.lfs.clean"] == "git-lfs clean -- %f"
    assert overrides["filter.lfs.process"] == ""
    assert overrides["filter.lfs.required"] == "false"
    assert overrides['filter.a=b "q.smudge'] == ""
    assert overrides["gpg.program"] == "/usr/local/bin/gpg2"
    assert "filter.mine.clean" not in overrides
    assert safety.network_programs == ("core.sshcommand", "credential.https://example.com.helper")
    env = safety.environment({"GIT_CONFIG_COUNT": "2"})
    assert env["GIT_CONFIG_COUNT"] == str(2 + len(safety.overrides))
    assert env["GIT_CONFIG_KEY_2"] == safety.overrides[0][0]
    trusted = assess(entries, trusted=True)
    assert trusted == Safety(trusted=True)
    assert "-c" in trusted.arguments(hooks=True)
    assert "core.hooksPath=/dev/null" not in trusted.arguments(hooks=True)
    assert "core.hooksPath=/dev/null" in trusted.arguments(hooks=False)
    assert "core.hooksPath=/dev/null" in safety.arguments(hooks=True)


async def test_the_watcher_finds_no_repository_in_a_payload(
    terax_security: Callable[..., SecurityLayer],
    workspace_root: Path,
    tmp_path: Path,
    trap: Trap,
) -> None:
    # The watch service finds repositories by their .git folder, without running git; a
    # payload's HEAD changing is a file change, never a "repository" event.
    clone = embedded_bare_clone(workspace_root, tmp_path / "source", trap)
    payload = clone / "docs" / "payload"
    watch = WatchService(terax_security(workspace_root), debounce=0.05)
    batches: list[list[dict[str, Any]] | None] = []
    subscription = watch.subscribe(str(payload), batches.append)
    assert {folder for folder, _ in subscription.git_watches} <= {
        str(clone / ".git"),
        str(clone / ".git" / "refs"),
    }
    try:
        write(payload, "HEAD", "ref: refs/heads/other\n")
        write(payload, "refs/heads/other", "0" * 40 + "\n")
        for _ in range(100):
            if batches:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        events = [e for batch in batches for e in batch or []]
        assert events
        assert not [e for e in events if e["kind"] == "repository"]
        git(clone, "commit", "-q", "--allow-empty", "-m", "elsewhere")
        for _ in range(100):
            if any(e["kind"] == "repository" for b in batches for e in b or []):
                break
            await asyncio.sleep(0.05)
        repository = [e for b in batches for e in b or [] if e["kind"] == "repository"]
        assert repository
        assert {e["path"] for e in repository} == {"clone"}
    finally:
        watch.unsubscribe(subscription)
        watch.stop()
    assert trap.fired() == []


async def test_hooks_do_not_run_on_reads_even_when_trusted(
    manager: GitManager, project: Path, trap: Trap
) -> None:
    plant_hooks(project / ".git", trap, ("post-index-change", "reference-transaction"))
    await manager.set_trust(str(project), True, user="ada")
    write(project, "notes.txt", "changed\n")
    future = time.time() + 2  # keep.txt is stat-dirty: git diff would refresh the index
    os.utime(project / "keep.txt", (future, future))
    raw_git(project, "diff")
    assert trap.fired(), "git diff refreshes the index and fires post-index-change"
    trap.reset()
    await manager.status(str(project))
    await manager.diff(str(project), "notes.txt")
    await manager.log(str(project))
    await manager.branches(str(project))
    assert trap.fired() == []
