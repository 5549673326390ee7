"""Real repositories in tmp for the git tests: branches, merges, renames, binaries, conflicts,
and a bare upstream on disk. No global or system git configuration leaks in."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.services.git.manager import GitManager

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer

IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Lovelace",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Lovelace",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
}
# Variables that would point git at another repository, index or configuration.
LEAKY = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_CEILING_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
)

TEN_LINES = "".join(f"line {n}\n" for n in range(1, 11))
PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256))


@pytest.fixture(autouse=True)
def git_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Identity and an empty HOME for every git these tests (and the server) run."""
    home = tmp_path / "git-home"
    home.mkdir(exist_ok=True)
    for name in LEAKY:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    (home / ".gitconfig").write_text(
        '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n'
    )
    for name, value in IDENTITY.items():
        monkeypatch.setenv(name, value)


def git(root: Path | str, *args: str, check: bool = True, input: bytes | None = None) -> str:
    """Run git in ``root`` for a test; its stdout."""
    result = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, input=input, check=False
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr.decode()}")
    return result.stdout.decode("utf-8", "replace")


def write(root: Path, name: str, content: str | bytes) -> Path:
    target = root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)
    return target


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def init_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    return root


@pytest.fixture
def workspace_root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def project(workspace_root: Path) -> Path:
    """A repository with history: a text file, a binary, a renamed file and a merged branch."""
    root = init_repo(workspace_root / "project")
    write(root, "notes.txt", TEN_LINES)
    write(root, "image.png", PNG)
    write(root, "old_name.txt", "moved\n")
    write(root, "keep.txt", "keep\n")
    commit_all(root, "first")
    git(root, "switch", "-q", "-c", "feature")
    write(root, "feature.txt", "feature work\n")
    commit_all(root, "feature work")
    git(root, "switch", "-q", "main")
    git(root, "mv", "old_name.txt", "new_name.txt")
    commit_all(root, "rename")
    git(root, "merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    return root


@pytest.fixture
def upstream(tmp_path: Path, project: Path) -> Path:
    """A bare repository on disk that ``project`` pushes to as origin (main tracks it)."""
    bare = tmp_path / "upstream.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(project, "remote", "add", "origin", str(bare))
    git(project, "push", "-q", "-u", "origin", "main", "feature")
    return bare


@pytest.fixture
def other_clone(tmp_path: Path, upstream: Path) -> Path:
    """Someone else's clone of the upstream, to make the upstream move."""
    clone = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    return clone


@pytest.fixture
def make_git(
    terax_security: Callable[..., SecurityLayer], workspace_root: Path
) -> Callable[..., GitManager]:
    def make(**traits: Any) -> GitManager:
        return GitManager(terax_security(workspace_root), **traits)

    return make


@pytest.fixture
def manager(make_git: Callable[..., GitManager]) -> GitManager:
    return make_git()


def index_content(root: Path, name: str) -> str:
    return git(root, "show", f":{name}")


def staged_diff(root: Path, name: str | None = None) -> str:
    return git(root, "diff", "--cached", "--no-color", *(["--", name] if name else []))


def diff_body(text: str) -> list[str]:
    """The +/- lines of a diff (headers and hunk lines left out)."""
    return [
        line
        for line in text.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def env_without_git() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


# -- conflicts made for real (test_conflicts, test_conflicts_redteam) --------------------------

BASE = "one\ntwo\nthree\n"
OURS = "one\ntwo (ours)\nthree\n"
THEIRS = "one\ntwo (theirs)\nthree\n"


def two_branches(root: Path) -> Path:
    """main and other change the same line of f.txt; other also adds g.txt and h.txt in a
    second and third commit (so a rebase or cherry-pick has more to do after the conflict)."""
    init_repo(root)
    write(root, "f.txt", BASE)
    write(root, "keep.txt", "keep\n")
    commit_all(root, "base")
    git(root, "switch", "-q", "-c", "other")
    write(root, "f.txt", THEIRS)
    commit_all(root, "theirs")
    write(root, "g.txt", "g\n")
    commit_all(root, "add g")
    write(root, "h.txt", "h\n")
    commit_all(root, "add h")
    git(root, "switch", "-q", "main")
    write(root, "f.txt", OURS)
    commit_all(root, "ours")
    return root


@pytest.fixture
def merging(workspace_root: Path) -> Path:
    root = two_branches(workspace_root / "merging")
    assert "CONFLICT" in git(root, "merge", "other", check=False)
    return root


@pytest.fixture
def rebasing(workspace_root: Path) -> Path:
    """other rebased onto main: stops on its first commit."""
    root = two_branches(workspace_root / "rebasing")
    git(root, "switch", "-q", "other")
    git(root, "rebase", "main", check=False)
    assert (root / ".git" / "rebase-merge").is_dir()
    return root


@pytest.fixture
def picking(workspace_root: Path) -> Path:
    """The three commits of other picked onto main: stops on the first."""
    root = two_branches(workspace_root / "picking")
    git(root, "cherry-pick", "main..other", check=False)
    assert (root / ".git" / "CHERRY_PICK_HEAD").exists()
    return root


def submodule_conflict(workspace_root: Path) -> Path:
    """A superproject whose branches moved the submodule ``sub`` to commits git cannot
    merge (neither descends from the other), merged: ``sub`` is conflicted."""
    sub = init_repo(workspace_root / "sub")
    write(sub, "a.txt", "1\n")
    first = commit_all(sub, "one")
    write(sub, "a.txt", "2\n")
    second = commit_all(sub, "two")
    git(sub, "switch", "-q", "-c", "side", first)
    write(sub, "a.txt", "3\n")
    third = commit_all(sub, "three")  # not a descendant of two: git cannot merge the link
    root = init_repo(workspace_root / "super")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    git(root / "sub", "checkout", "-q", first)
    commit_all(root, "sub at one")
    git(root, "switch", "-q", "-c", "other")
    git(root / "sub", "checkout", "-q", second)
    commit_all(root, "sub at two")
    git(root, "switch", "-q", "main")
    git(root / "sub", "checkout", "-q", third)
    commit_all(root, "sub at three")
    git(root, "merge", "other", check=False)
    return root
