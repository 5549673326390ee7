"""Hostile repositories for the git tests: each names a program that leaves a mark when run.

The program (outside every repository) appends its name and arguments to a marker file and
copies its input to its output, so that git keeps going as far as it would. A test builds a
repository, proves with plain git that the trap fires (the repository really is hostile),
clears the marker, and then asserts that Terax's git calls leave it empty.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .conftest import commit_all, git, init_repo, write

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True)
class Trap:
    program: Path
    marker: Path

    def fired(self) -> list[str]:
        return self.marker.read_text().splitlines() if self.marker.exists() else []

    def reset(self) -> None:
        self.marker.unlink(missing_ok=True)


def make_trap(folder: Path, *, passthrough: bool = True) -> Trap:
    """``passthrough``: copy input to output (a filter); else exit at once (an upload-pack
    or ssh that would otherwise wait for a protocol that never comes)."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / "marker"
    program = folder / "trap.sh"
    end = "exec cat" if passthrough else "exit 1"
    program.write_text(f'#!/bin/sh\necho "$(basename "$0") $*" >> {marker}\n{end}\n')
    program.chmod(0o755)
    return Trap(program, marker)


def plant_hooks(git_dir: Path, trap: Trap, names: tuple[str, ...]) -> None:
    """Hooks (named after themselves in the marker) that run the trap."""
    hooks = git_dir / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    for name in names:
        hook = hooks / name
        hook.write_text(f'#!/bin/sh\necho "{name} $*" >> {trap.marker}\nexit 0\n')
        hook.chmod(0o755)


READ_HOOKS = ("post-index-change", "reference-transaction", "post-checkout", "pre-auto-gc")


def signed_head(root: Path) -> str:
    """Make HEAD a commit with a (fake) PGP signature: showing its signature runs gpg."""
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    parent = git(root, "rev-parse", "HEAD").strip()
    body = (
        f"tree {tree}\nparent {parent}\n"
        "author Ada Lovelace <ada@example.com> 1700000000 +0000\n"
        "committer Ada Lovelace <ada@example.com> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
        " -----END PGP SIGNATURE-----\n\nA signed commit\n"
    )
    oid = git(root, "hash-object", "-t", "commit", "-w", "--stdin", input=body.encode()).strip()
    git(root, "update-ref", "refs/heads/main", oid)
    return oid


def hostile_config(root: Path, trap: Trap) -> Path:
    """A repository whose own configuration and attributes name the trap everywhere a read
    could run it: fsmonitor, a required filter driver (clean, smudge, process), textconv and
    an external diff, signature checks with gpg.program, a pager, and hooks that fire on
    index refreshes and ref updates. HEAD is signed; a tracked file has a worktree change
    and another is only stat-dirty (git must hash it again, through the filter)."""
    init_repo(root)
    write(root, ".gitattributes", "*.txt filter=evil diff=evil\n")
    write(root, "notes.txt", "one\ntwo\n")
    write(root, "touched.txt", "same\n")
    commit_all(root, "first")
    write(root, "notes.txt", "one\ntwo\nthree\n")
    git(root, "add", "notes.txt")
    git(root, "commit", "-q", "-m", "second")
    signed_head(root)
    program = str(trap.program)
    for key, value in (
        ("core.fsmonitor", program),
        ("filter.evil.clean", program),
        ("filter.evil.smudge", program),
        ("filter.evil.process", program),
        ("filter.evil.required", "true"),
        ("diff.evil.textconv", program),
        ("diff.evil.command", program),
        ("diff.external", program),
        ("log.showSignature", "true"),
        ("gpg.program", program),
        ("core.pager", program),
        ("pager.log", program),
    ):
        git(root, "config", key, value)
    plant_hooks(root / ".git", trap, READ_HOOKS)
    write(root, "notes.txt", "one\ntwo\nthree\nfour\n")
    # A second later than the index: git must look at the content again (racily clean).
    future = time.time() + 2
    os.utime(root / "touched.txt", (future, future))
    return root


def embedded_bare_clone(workspace: Path, source: Path, trap: Trap, name: str = "clone") -> Path:
    """A project that commits a bare repository as plain files (docs/payload: HEAD, config
    with worktree = . and fsmonitor = the trap, objects/, refs/), cloned plainly. Running
    git inside docs/payload finds that "repository" and runs its fsmonitor."""
    init_repo(source)
    payload = source / "docs" / "payload"
    write(payload, "HEAD", "ref: refs/heads/main\n")
    write(
        payload,
        "config",
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f'\tfsmonitor = {trap.program}\n[filter "x"]\n\tclean = {trap.program}\n',
    )
    write(payload, "objects/info/.keep", "")
    write(payload, "refs/heads/.keep", "")
    write(payload, ".gitattributes", "* filter=x\n")
    write(source, "README.md", "# A project\n")
    commit_all(source, "a project with a payload")
    clone = workspace / name
    git(workspace, "clone", "-q", str(source), str(clone))
    return clone


def raw_git(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """git as a user's terminal runs it (no Terax settings): the proof that a trap is live."""
    return subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def git_state(git_dir: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime ns) of every file under a git dir: equal before and after means git
    wrote nothing there."""
    state = {}
    for folder, _, files in os.walk(git_dir):
        for name in files:
            path = os.path.join(folder, name)
            info = os.stat(path)
            state[os.path.relpath(path, git_dir)] = (info.st_size, info.st_mtime_ns)
    return state


def partial_clone(root: Path, trap: Trap, *, missing: str) -> str:
    """A repository that says it is a partial clone of a promisor remote whose upload-pack is
    the trap (a local path: no network needed), with one object gone: the blob of f.txt's
    first version (``missing="blob"``) or the tree of d/ (``"tree"``, the index removed so
    that status must read it). Any read that needs the object makes git fetch it lazily
    through the trap. Returns the missing object's id."""
    init_repo(root)
    write(root, "d/f.txt", "v1\n")
    commit_all(root, "one")
    write(root, "d/f.txt", "v2\n")
    commit_all(root, "two")
    spec = "HEAD~1:d/f.txt" if missing == "blob" else "HEAD:d"
    oid = git(root, "rev-parse", spec).strip()
    (root / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    for key, value in (
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", str(root.parent / "nowhere")),
        ("remote.origin.promisor", "true"),
        ("remote.origin.uploadpack", str(trap.program)),
    ):
        git(root, "config", key, value)
    if missing == "tree":
        (root / ".git" / "index").unlink()
    return oid
