"""A repository reaches nothing beyond itself: no unnamed filter driver, no lazy fetch, no
submodule's programs, no file through a swapped folder, no git data outside the workspace.

Like test_hostile.py, every hostile repository is first proven live with plain git (the trap
fires, the outside content shows), then the git service must leave the marker empty.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.exceptions import AccessDenied, PathChanged, TeraxError
from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.security.paths import Access
from terax_jupyter.services.git.diff import parse_diff, read_diff, verify_worktree
from terax_jupyter.services.git.repository import checked_file
from terax_jupyter.services.git.runner import GitFailed
from terax_jupyter.services.git.safety import assess, parse_config_list

from .conftest import commit_all, git, init_repo, write
from .hostile import Trap, make_trap, partial_clone, raw_git

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from terax_jupyter.services.git.manager import GitManager

    Api = Callable[..., Awaitable[Any]]


@pytest.fixture
def trap(tmp_path: Path) -> Trap:
    return make_trap(tmp_path / "trap")


@pytest.fixture
def quick_trap(tmp_path: Path) -> Trap:
    """A trap that exits at once (an upload-pack git would otherwise wait on)."""
    return make_trap(tmp_path / "quick-trap", passthrough=False)


def stat_dirty(path: Path) -> None:
    """Same content, a newer time: git must read the file again (through its filter)."""
    future = time.time() + 2
    os.utime(path, (future, future))


# -- 1. filter drivers of any name -------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "a.b", "UPPER", 'q"x', "x=y"])
async def test_a_filter_driver_of_any_name_is_blanked(
    manager: GitManager, workspace_root: Path, trap: Trap, name: str
) -> None:
    # `filter=` names the driver "" ([filter ""] in the configuration, key filter..clean).
    root = init_repo(workspace_root / "named")
    write(root, ".gitattributes", f"*.txt filter={name}\n")
    write(root, "notes.txt", "one\n")
    commit_all(root, "first")
    for variable in ("clean", "smudge", "process"):
        git(root, "config", f"filter.{name}.{variable}", str(trap.program))
    git(root, "config", f"filter.{name}.required", "true")
    stat_dirty(root / "notes.txt")
    raw_git(root, "status", "--porcelain")
    assert trap.fired(), f"plain git status runs the driver {name!r}"
    trap.reset()
    write(root, "new.txt", "untracked\n")
    status = await manager.status(str(root))
    assert [e["path"] for e in status["untracked"]] == ["new.txt"]
    assert (await manager.diff(str(root), "notes.txt"))["status"] == "unmodified"
    assert (await manager.diff(str(root), "new.txt"))["status"] == "added"
    write(root, "notes.txt", "one\ntwo\n")
    changed = await manager.diff(str(root), "notes.txt")
    assert [line["text"] for line in changed["hunks"][0]["lines"]] == ["one", "two"]
    assert trap.fired() == []
    shown = {p["key"] for p in (await manager.trust_info(str(root)))["programs"]}
    assert {f"filter.{name}.clean", f"filter.{name}.process"} <= shown


def test_driver_names_are_split_as_git_splits_them() -> None:
    listing = b"".join(
        b"local\0" + key.encode() + b"\n/tmp/evil\0"
        for key in ("filter..clean", "filter.a.b.smudge", "filter.Up Per.process", "diff..textconv")
    )
    safety = assess(parse_config_list(listing), trusted=False)
    overrides = dict(safety.overrides)
    for name in ("", "a.b", "Up Per"):
        assert overrides[f"filter.{name}.clean"] == ""
        assert overrides[f"filter.{name}.required"] == "false"
    assert "filter.a.clean" not in overrides  # "a.b" is one name, not "a"
    assert {key for key, _ in safety.programs} == {
        "filter..clean",
        "filter.a.b.smudge",
        "filter.Up Per.process",
        "diff..textconv",
    }


# -- 2. partial clones -------------------------------------------------------------------------


async def test_a_read_never_fetches_a_missing_blob(
    manager: GitManager, workspace_root: Path, quick_trap: Trap
) -> None:
    root = workspace_root / "partial"
    partial_clone(root, quick_trap, missing="blob")
    raw_git(root, "diff", "HEAD~1", "HEAD")
    assert quick_trap.fired(), "plain git fetches the blob through the remote's upload-pack"
    quick_trap.reset()
    path = str(root)
    head = git(root, "rev-parse", "HEAD").strip()
    for call in (
        lambda: manager.diff(path, "d/f.txt", source="commit", commit=head),
        lambda: manager.commit_detail(path, head),
    ):
        with pytest.raises(GitFailed) as caught:
            await call()
        assert quick_trap.fired() == []
        assert caught.value.reason == "missing_objects"
        assert "does not have" in caught.value.message
    # What needs no missing object still works.
    assert (await manager.status(path))["branch"]["head"] == "main"
    assert (await manager.log(path))["commits"][0]["subject"] == "two"
    assert quick_trap.fired() == []


async def test_status_never_fetches_a_missing_tree(
    manager: GitManager, workspace_root: Path, quick_trap: Trap
) -> None:
    root = workspace_root / "partial"
    partial_clone(root, quick_trap, missing="tree")
    raw_git(root, "status", "--porcelain")
    assert quick_trap.fired(), "plain git status fetches the tree"
    quick_trap.reset()
    with pytest.raises(GitFailed) as caught:
        await manager.status(str(root))
    assert quick_trap.fired() == []
    assert caught.value.reason == "missing_objects"
    with pytest.raises(GitFailed):
        await manager.diff(str(root), "d/f.txt", source="index")
    assert quick_trap.fired() == []


async def test_a_missing_object_is_a_409_over_http(
    terax_api: Api, jp_root_dir: Path, tmp_path: Path
) -> None:
    trap = make_trap(tmp_path / "http-trap", passthrough=False)
    partial_clone(jp_root_dir / "partial", trap, missing="tree")
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("git/status", params={"path": "partial"})
    assert trap.fired() == []
    assert caught.value.code == 409
    assert error_of(caught.value)["reason"] == "missing_objects"


# -- 3. submodules -----------------------------------------------------------------------------


def add_submodule(project: Path, library: Path, name: str = "lib") -> Path:
    git(project, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(library), name)
    commit_all(project, f"add {name}")
    return project / name


@pytest.mark.parametrize("where", ["gitmodules", "config"])
async def test_a_submodule_set_to_ignore_none_is_not_entered(
    manager: GitManager, project: Path, workspace_root: Path, trap: Trap, where: str
) -> None:
    library = init_repo(workspace_root / "library")
    write(library, ".gitattributes", "*.txt filter=sub\n")
    write(library, "lib.txt", "lib\n")
    commit_all(library, "lib")
    sub = add_submodule(project, library)
    # submodule.<name>.ignore beats diff.ignoreSubmodules, from .gitmodules (committed by
    # the project) or from the repository's configuration.
    if where == "gitmodules":
        git(project, "config", "-f", ".gitmodules", "submodule.lib.ignore", "none")
        commit_all(project, "never ignore lib")
    else:
        git(project, "config", "submodule.lib.ignore", "none")
    git(sub, "config", "filter.sub.clean", str(trap.program))
    git(sub, "config", "filter.sub.required", "true")
    stat_dirty(sub / "lib.txt")
    raw_git(project, "-c", "diff.ignoreSubmodules=dirty", "status", "--porcelain")
    assert trap.fired(), "the per-submodule setting beats diff.ignoreSubmodules=dirty"
    trap.reset()
    await manager.status(str(project))
    assert (await manager.diff(str(project), "lib"))["status"] == "unmodified"
    await manager.diff(str(project), "lib", source="index")
    assert trap.fired() == []


@pytest.mark.parametrize("trusted", [False, True])
async def test_a_gitlink_diff_never_runs_git_in_the_submodule(
    manager: GitManager, project: Path, workspace_root: Path, trap: Trap, trusted: bool
) -> None:
    library = init_repo(workspace_root / "library")
    write(library, ".gitattributes", "*.txt filter=sub diff=sub\n")
    write(library, "lib.txt", "lib\n")
    commit_all(library, "lib")
    write(library, "more.txt", "more\n")
    commit_all(library, "more")
    sub = add_submodule(project, library)
    git(sub, "checkout", "-q", "HEAD~1")
    commit_all(project, "lib at its first commit")
    git(sub, "checkout", "-q", "main")
    commit_all(project, "lib at its second commit")
    # diff.submodule=diff: a diff of the gitlink runs "git diff" inside the submodule, with
    # the submodule's own configuration and without --no-ext-diff or --no-textconv.
    git(project, "config", "diff.submodule", "diff")
    for key in ("filter.sub.smudge", "filter.sub.clean", "diff.sub.textconv", "diff.external"):
        git(sub, "config", key, str(trap.program))
    raw_git(project, "diff", "--no-ext-diff", "--no-textconv", "HEAD~1", "HEAD", "--", "lib")
    assert trap.fired(), "plain git runs the submodule's programs for a gitlink's diff"
    trap.reset()
    if trusted:
        await manager.set_trust(str(project), True, user="ada")
    head = git(project, "rev-parse", "HEAD").strip()
    diff = await manager.diff(str(project), "lib", source="commit", commit=head)
    lines = [line["text"] for hunk in diff["hunks"] for line in hunk["lines"]]
    assert [text.split()[:2] for text in lines] == [["Subproject", "commit"]] * 2
    await manager.commit_detail(str(project), head)
    assert trap.fired() == []


# -- 4. a folder swapped for a link while git reads -----------------------------------------

RACER = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, started = (os.fsencode(p) for p in sys.argv[1:4])
swaps = 0
while True:
    if libc.renameat2(-100, a, -100, b, 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
    swaps += 1
    if swaps == 2:
        open(started, "w").close()
    time.sleep(0.0005)
"""


async def test_a_swapped_folder_never_shows_an_outside_file(
    manager: GitManager, workspace_root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside" / "d"
    write(outside, "tracked.txt", "SECRET tracked\n")
    write(outside, "untracked.txt", "SECRET untracked\n")
    root = init_repo(workspace_root / "raced")
    write(root, "d/tracked.txt", "benign\n")
    commit_all(root, "first")
    write(root, "d/tracked.txt", "benign, changed\n")
    write(root, "d/untracked.txt", "benign, new\n")
    (root / "dlink").symlink_to(outside)
    assert (
        "SECRET"
        in raw_git(root, "diff", "--no-index", "/dev/null", "dlink/tracked.txt").stdout.decode()
    )
    started = tmp_path / "racer-started"
    racer = await asyncio.create_subprocess_exec(
        sys.executable, "-c", RACER, str(root / "d"), str(root / "dlink"), str(started)
    )
    outcomes: dict[str, int] = {}
    try:
        for _ in range(2000):
            if started.exists() or racer.returncode is not None:
                break
            await asyncio.sleep(0.005)
        assert started.exists(), "the racer swaps the folder and the link"
        for _ in range(120):
            for name in ("d/tracked.txt", "d/untracked.txt"):
                try:
                    shown = str(await manager.diff(str(root), name))
                    outcome = "leak" if "SECRET" in shown else "ok"
                except TeraxError as error:
                    outcome = error.reason
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
    finally:
        if racer.returncode is None:
            racer.kill()
        await racer.wait()
    assert racer.returncode != 1, "the racer failed"
    assert "leak" not in outcomes, outcomes
    assert outcomes.get("ok", 0) > 0, outcomes


def added(diff: dict[str, Any]) -> list[str]:
    return [
        line["text"] for hunk in diff["hunks"] for line in hunk["lines"] if line["kind"] == "add"
    ]


async def verified(manager: GitManager, path: Path, file: str, **options: Any) -> dict[str, Any]:
    return await manager.diff(str(path), file, **options)


async def test_a_diff_of_other_content_than_the_checked_file_is_refused(
    manager: GitManager, project: Path
) -> None:
    write(project, "notes.txt", "changed\n")
    repo = await manager.resolve(str(project))
    other = checked_file(manager.security, repo, "keep.txt", Access.READ)
    mine = checked_file(manager.security, repo, "notes.txt", Access.READ)
    # What git would show if it had read another file than the one checked.
    with pytest.raises(PathChanged) as caught:
        await read_diff(
            manager.runner,
            repo,
            "notes.txt",
            "worktree",
            max_bytes=1 << 20,
            checked=[("notes.txt", other)],
        )
    assert caught.value.reason == "path_changed"
    diff, raw = await read_diff(
        manager.runner,
        repo,
        "notes.txt",
        "worktree",
        max_bytes=1 << 20,
        checked=[("notes.txt", mine)],
    )
    # Lines that are not the file's under the right blob id (git's two reads disagreeing).
    forged = raw.replace(b"+changed", b"+SECRETS")
    assert forged != raw
    with pytest.raises(PathChanged):
        await verify_worktree(
            manager.runner, repo, forged, parse_diff(forged), [("notes.txt", mine)], cap=1 << 20
        )
    await verify_worktree(
        manager.runner, repo, raw, parse_diff(raw), [("notes.txt", mine)], cap=1 << 20
    )
    assert [line.text for line in diff.hunks[0].lines if line.kind == "add"] == ["changed"]


async def test_conversions_and_special_files_pass_the_check(
    manager: GitManager, workspace_root: Path, tmp_path: Path
) -> None:
    root = init_repo(workspace_root / "converted")
    write(
        root,
        ".gitattributes",
        "crlf.txt text eol=crlf\nident.txt ident\nutf16.txt working-tree-encoding=UTF-16\n"
        "bom.txt working-tree-encoding=UTF-16LE-BOM\nupper.txt filter=upper\n",
    )
    write(root, "crlf.txt", b"one\r\ntwo\r\n")
    write(root, "ident.txt", "$Id$\nbody\n")
    write(root, "utf16.txt", "one\n".encode("utf-16"))
    write(root, "bom.txt", b"\xff\xfe" + "one\n".encode("utf-16-le"))
    write(root, "upper.txt", "one\n")
    write(root, "plain.txt", "no newline")
    write(root, "empty.txt", "")
    write(root, "gone.txt", "gone\n")
    write(root, "image.bin", b"\0\1\2")
    write(root, "run.sh", "echo\n")
    (root / "link").symlink_to("plain.txt")
    commit_all(root, "first")
    write(root, "crlf.txt", b"one\r\ntwo\r\nthree\r\n")
    write(root, "ident.txt", "$Id: 0123 $\nbody\nmore\n")
    write(root, "utf16.txt", "one\ntwo\n".encode("utf-16"))
    write(root, "bom.txt", b"\xff\xfe" + "one\ntwo\n".encode("utf-16-le"))
    write(root, "upper.txt", "one\ntwo\n")
    write(root, "plain.txt", "no newline, still")
    write(root, "empty.txt", "now something\n")
    (root / "gone.txt").unlink()
    write(root, "image.bin", b"\0\1\2\3")
    (root / "run.sh").chmod(0o755)
    (root / "link").unlink()
    (root / "link").symlink_to("empty.txt")
    write(root, "new.txt", b"a\r\nb")
    # A trusted repository's clean filter: only the blob id can be checked for its files.
    git(root, "config", "filter.upper.clean", "tr a-z A-Z")
    await manager.set_trust(str(root), True, user="ada")

    assert added(await verified(manager, root, "crlf.txt")) == ["three"]
    assert added(await verified(manager, root, "ident.txt")) == ["more"]
    assert added(await verified(manager, root, "utf16.txt")) == ["two"]
    assert added(await verified(manager, root, "bom.txt")) == ["two"]
    assert added(await verified(manager, root, "upper.txt")) == ["ONE", "TWO"]
    assert added(await verified(manager, root, "plain.txt")) == ["no newline, still"]
    assert added(await verified(manager, root, "empty.txt")) == ["now something"]
    assert (await verified(manager, root, "gone.txt"))["status"] == "deleted"
    assert (await verified(manager, root, "image.bin"))["binary"] is True
    assert (await verified(manager, root, "run.sh"))["hunks"] == []
    assert added(await verified(manager, root, "link")) == ["empty.txt"]
    assert added(await verified(manager, root, "new.txt")) == ["a\r", "b"]


async def test_an_encoding_that_cannot_be_checked_is_not_shown(
    manager: GitManager, workspace_root: Path
) -> None:
    # git converts EBCDIC-US with iconv; Python has no such codec, so the lines git shows
    # cannot be compared with the file: refused rather than shown unchecked.
    root = init_repo(workspace_root / "ebcdic")
    write(root, ".gitattributes", "e.txt working-tree-encoding=EBCDIC-US\n")
    write(root, "e.txt", "one\n".encode("cp037"))
    commit_all(root, "first")
    assert git(root, "show", ":e.txt") == "one\n"
    write(root, "e.txt", "one\ntwo\n".encode("cp037"))
    with pytest.raises(TeraxError) as caught:
        await manager.diff(str(root), "e.txt")
    assert caught.value.reason == "unverifiable_diff"
    assert "EBCDIC-US" in caught.value.message
    assert (await manager.diff(str(root), "e.txt", source="index"))["status"] == "unmodified"


async def test_a_sha256_repository_is_checked_too(
    manager: GitManager, workspace_root: Path
) -> None:
    root = workspace_root / "sha256"
    root.mkdir()
    git(root, "init", "-q", "-b", "main", "--object-format=sha256")
    write(root, "notes.txt", "one\n")
    commit_all(root, "first")
    write(root, "notes.txt", "one\ntwo\n")
    write(root, "new.txt", "new\n")
    diff = await manager.diff(str(root), "notes.txt")
    assert [line["text"] for line in diff["hunks"][0]["lines"]] == ["one", "two"]
    assert (await manager.diff(str(root), "new.txt"))["status"] == "added"
    repo = await manager.resolve(str(root))
    wrong = checked_file(manager.security, repo, "new.txt", Access.READ)
    with pytest.raises(PathChanged):
        await read_diff(
            manager.runner,
            repo,
            "notes.txt",
            "worktree",
            max_bytes=1 << 20,
            checked=[("notes.txt", wrong)],
        )


# -- 5. git data outside the workspace ---------------------------------------------------------


@pytest.fixture
def secret_repo(tmp_path: Path) -> Path:
    """A repository outside the workspace roots, with content nobody may read through Terax."""
    root = init_repo(tmp_path / "outside" / "secretrepo")
    write(root, "secret.txt", "TOP SECRET\n")
    commit_all(root, "secret")
    return root


def gitlink_to(root: Path, oid: str) -> Path:
    """A superproject whose index and HEAD record a submodule "sub" at ``oid``."""
    init_repo(root)
    write(root, "readme.txt", "sup\n")
    git(root, "add", "readme.txt")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{oid},sub")
    git(root, "commit", "-q", "-m", "a gitlink")
    return root


async def refused(manager: GitManager, path: Path, file: str, commit: str) -> None:
    for call in (
        lambda: manager.resolve(str(path)),
        lambda: manager.status(str(path)),
        lambda: manager.diff(str(path), file, source="commit", commit=commit),
        lambda: manager.commit_detail(str(path), commit),
    ):
        with pytest.raises(AccessDenied) as caught:
            await call()
        assert caught.value.reason == "unexpected_git_dir"


async def test_a_submodule_git_file_naming_an_outside_repository_is_refused(
    manager: GitManager, workspace_root: Path, secret_repo: Path
) -> None:
    head = git(secret_repo, "rev-parse", "HEAD").strip()
    sup = gitlink_to(workspace_root / "sup", head)
    write(sup, "sub/.git", f"gitdir: {secret_repo / '.git'}\n")
    assert "TOP SECRET" in raw_git(sup / "sub", "show", f"{head}:secret.txt").stdout.decode()
    await refused(manager, sup / "sub", "secret.txt", head)
    assert (await manager.resolve(str(sup))).root == str(sup)


async def test_a_submodule_git_file_naming_another_workspace_repository_is_refused(
    manager: GitManager, workspace_root: Path
) -> None:
    other = init_repo(workspace_root / "other")
    write(other, "private.txt", "other's\n")
    head = commit_all(other, "other")
    sup = gitlink_to(workspace_root / "sup", head)
    write(sup, "sub/.git", f"gitdir: {other / '.git'}\n")
    assert raw_git(sup / "sub", "rev-parse", "--show-superproject-working-tree").stdout.strip()
    await refused(manager, sup / "sub", "private.txt", head)


async def test_a_commondir_or_a_link_to_outside_git_data_is_refused(
    manager: GitManager, workspace_root: Path, secret_repo: Path
) -> None:
    head = git(secret_repo, "rev-parse", "HEAD").strip()
    # A .git folder whose commondir file moves objects, refs and configuration elsewhere.
    moved = init_repo(workspace_root / "moved")
    (moved / ".git" / "commondir").write_text(f"{secret_repo / '.git'}\n")
    assert "TOP SECRET" in raw_git(moved, "show", f"{head}:secret.txt").stdout.decode()
    await refused(manager, moved, "secret.txt", head)
    # A .git that is a link to another repository's git dir.
    linked = workspace_root / "linked"
    linked.mkdir()
    (linked / ".git").symlink_to(secret_repo / ".git")
    assert "TOP SECRET" in raw_git(linked, "show", f"{head}:secret.txt").stdout.decode()
    await refused(manager, linked, "secret.txt", head)


async def test_an_object_store_outside_the_workspace_is_refused(
    manager: GitManager, workspace_root: Path, secret_repo: Path
) -> None:
    head = git(secret_repo, "rev-parse", "HEAD").strip()
    # objects/info/alternates adds the outside repository's objects to this one's.
    borrowing = init_repo(workspace_root / "borrowing")
    alternates = borrowing / ".git" / "objects" / "info" / "alternates"
    alternates.write_text(f"{secret_repo / '.git' / 'objects'}\n")
    assert "TOP SECRET" in raw_git(borrowing, "show", f"{head}:secret.txt").stdout.decode()
    await refused(manager, borrowing, "secret.txt", head)
    # A link in .git to the outside repository's object store.
    linked = init_repo(workspace_root / "linked-objects")
    objects = linked / ".git" / "objects"
    os.rename(objects, linked / ".git" / "objects-old")
    objects.symlink_to(secret_repo / ".git" / "objects")
    assert "TOP SECRET" in raw_git(linked, "show", f"{head}:secret.txt").stdout.decode()
    await refused(manager, linked, "secret.txt", head)


async def test_a_shared_clone_of_a_workspace_repository_still_works(
    manager: GitManager, project: Path, workspace_root: Path
) -> None:
    clone = workspace_root / "shared"
    git(workspace_root, "clone", "-q", "--shared", str(project), str(clone))
    assert (clone / ".git" / "objects" / "info" / "alternates").exists()
    head = git(clone, "rev-parse", "HEAD").strip()
    assert (await manager.commit_detail(str(clone), head))["oid"] == head
    assert (await manager.status(str(clone)))["branch"]["head"] == "main"


async def test_a_hard_linked_file_is_not_shown_by_a_worktree_diff(
    manager: GitManager, project: Path, tmp_path: Path
) -> None:
    # The hard-link rule of the security layer holds for the content git shows too.
    secret = tmp_path / "outside-secret.txt"
    secret.write_text("TOP SECRET\n")
    os.link(secret, project / "linked.txt")
    assert (
        "TOP SECRET"
        in raw_git(project, "diff", "--no-index", "/dev/null", "linked.txt").stdout.decode()
    )
    with pytest.raises(AccessDenied) as caught:
        await manager.diff(str(project), "linked.txt")
    assert caught.value.reason == "hard_link"


async def test_a_worktree_of_an_outside_repository_is_refused(
    manager: GitManager, workspace_root: Path, secret_repo: Path
) -> None:
    head = git(secret_repo, "rev-parse", "HEAD").strip()
    worktree = workspace_root / "wt"
    git(secret_repo, "worktree", "add", "-q", str(worktree), "-b", "side")
    with pytest.raises(AccessDenied) as caught:
        await manager.status(str(worktree))
    assert caught.value.reason == "unexpected_git_dir"
    assert "outside the workspace roots" in caught.value.message
    await refused(manager, worktree, "secret.txt", head)


async def test_nested_submodules_are_still_repositories(
    manager: GitManager, project: Path, workspace_root: Path
) -> None:
    inner = init_repo(workspace_root / "inner")
    write(inner, "inner.txt", "inner\n")
    commit_all(inner, "inner")
    outer = init_repo(workspace_root / "outer")
    write(outer, "outer.txt", "outer\n")
    commit_all(outer, "outer")
    add_submodule(outer, inner, "in")
    sub = add_submodule(project, outer, "out")
    git(sub, "-c", "protocol.file.allow=always", "submodule", "-q", "update", "--init")
    nested = await manager.resolve(str(sub / "in"))
    assert nested.git_dir == str(project / ".git" / "modules" / "out" / "modules" / "in")
    assert (await manager.status(str(sub / "in")))["branch"]["oid"]
    assert (await manager.resolve(str(sub))).root == str(sub)
