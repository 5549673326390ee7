"""Workspace roots: which folders count, how a user adds one, and what is remembered."""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import (
    AccessDenied,
    AlreadyExists,
    InvalidPath,
    NotFound,
    PathDenied,
    ProtectedPath,
)
from terax_jupyter.security.audit import AuditLog
from terax_jupyter.security.denylist import DenyList
from terax_jupyter.security.redact import Redactor
from terax_jupyter.security.workspace import WorkspaceRoots, is_within

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def audit(state: Path) -> AuditLog:
    return AuditLog(str(state / "audit.jsonl"), Redactor())


@pytest.fixture
def make_roots(root: Path, state: Path, audit: AuditLog) -> Callable[..., WorkspaceRoots]:
    """A registry over ``root`` with a store and an audit log in ``state``."""

    def build(**options: Any) -> WorkspaceRoots:
        options.setdefault("store_path", str(state / "workspace-roots.json"))
        options.setdefault("audit", audit)
        return WorkspaceRoots(str(root), DenyList(), **options)

    return build


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere" / "project"
    folder.mkdir(parents=True)
    return folder


def test_the_server_root_is_the_only_root_by_default(
    make_roots: Callable[..., WorkspaceRoots], root: Path
) -> None:
    roots = make_roots()
    assert [(r.path, r.kind) for r in roots.all()] == [(str(root), "server")]
    assert roots.server_root == str(root)
    assert roots.containing(os.path.expanduser("~")) is None
    assert roots.containing(os.path.join(os.path.expanduser("~"), ".bashrc")) is None


def test_admin_roots_are_roots(
    make_roots: Callable[..., WorkspaceRoots], project: Path, root: Path
) -> None:
    roots = make_roots(admin_roots=[str(project), str(project)])
    assert [(r.path, r.kind) for r in roots.all()] == [
        (str(root), "server"),
        (str(project), "admin"),
    ]


def test_adding_a_root_is_recorded_and_remembered(
    make_roots: Callable[..., WorkspaceRoots], project: Path, audit: AuditLog, state: Path
) -> None:
    roots = make_roots()
    added = roots.add(str(project), user="ada")
    assert (added.path, added.kind, added.added_by) == (str(project), "user", "ada")
    assert added.added_at is not None
    assert roots.containing(str(project / "file.py")) == added
    [entry] = audit.entries()
    assert (entry["action"], entry["user"], entry["path"]) == (
        "workspace.root_added",
        "ada",
        str(project),
    )
    store = state / "workspace-roots.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    again = make_roots()
    assert [(r.path, r.kind, r.added_by) for r in again.all()][1:] == [
        (str(project), "user", "ada")
    ]


def test_a_root_is_stored_canonical(
    make_roots: Callable[..., WorkspaceRoots], project: Path, tmp_path: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(project, target_is_directory=True)
    assert make_roots().add(str(alias) + "/", user="ada").path == str(project)


def test_home_is_added_only_when_asked(
    make_roots: Callable[..., WorkspaceRoots], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / "ada"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    roots = make_roots()
    assert roots.containing(str(home)) is None
    assert roots.add("~", user="ada").path == str(home)


def test_the_filesystem_root_cannot_be_added(make_roots: Callable[..., WorkspaceRoots]) -> None:
    with pytest.raises(ProtectedPath, match="filesystem root"):
        make_roots().add("/", user="ada")


def test_a_protected_folder_cannot_be_added(
    make_roots: Callable[..., WorkspaceRoots], tmp_path: Path
) -> None:
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True)
    roots = make_roots()
    with pytest.raises(PathDenied, match="cannot be a workspace root"):
        roots.add(str(ssh), user="ada")
    with pytest.raises(PathDenied):
        roots.add("/etc", user="ada")
    assert len(roots.all()) == 1


def test_a_missing_path_or_a_file_cannot_be_added(
    make_roots: Callable[..., WorkspaceRoots], tmp_path: Path
) -> None:
    roots = make_roots()
    with pytest.raises(NotFound, match="does not exist"):
        roots.add(str(tmp_path / "nope"), user="ada")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(InvalidPath, match="not a directory"):
        roots.add(str(tmp_path / "file.txt"), user="ada")
    with pytest.raises(InvalidPath):
        roots.add("", user="ada")
    with pytest.raises(InvalidPath):
        roots.add(str(tmp_path) + "\x00", user="ada")


def test_a_folder_already_inside_a_root_cannot_be_added(
    make_roots: Callable[..., WorkspaceRoots], root: Path, project: Path
) -> None:
    roots = make_roots()
    with pytest.raises(AlreadyExists, match="already inside the workspace root"):
        roots.add(str(root / "src"), user="ada")
    with pytest.raises(AlreadyExists):
        roots.add(str(root), user="ada")
    roots.add(str(project), user="ada")
    with pytest.raises(AlreadyExists):
        roots.add(str(project), user="bob")


def test_the_same_folder_added_at_once_from_many_threads_is_added_once(
    make_roots: Callable[..., WorkspaceRoots], project: Path, audit: AuditLog
) -> None:
    roots = make_roots()
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def add() -> None:
        barrier.wait()
        try:
            roots.add(str(project), user="ada")
            outcomes.append("added")
        except AlreadyExists:
            outcomes.append("exists")

    threads = [threading.Thread(target=add) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["added"] + ["exists"] * 7
    assert [r.path for r in roots.all()].count(str(project)) == 1
    assert len(audit.entries()) == 1


def test_adding_is_refused_when_the_administrator_locks_roots(
    make_roots: Callable[..., WorkspaceRoots], project: Path, tmp_path: Path
) -> None:
    make_roots().add(str(project), user="ada")
    locked = make_roots(allow_user_roots=False)
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(AccessDenied, match="does not allow") as caught:
        locked.add(str(other), user="ada")
    assert caught.value.reason == "roots_locked"
    # Roots users added before the lock are not honoured under it either.
    assert [r.kind for r in locked.all()] == ["server"]


def test_removing_a_user_root_is_recorded_and_remembered(
    make_roots: Callable[..., WorkspaceRoots], project: Path, audit: AuditLog
) -> None:
    roots = make_roots()
    roots.add(str(project), user="ada")
    roots.remove(str(project), user="bob")
    assert roots.containing(str(project)) is None
    assert [e["action"] for e in audit.entries()] == [
        "workspace.root_added",
        "workspace.root_removed",
    ]
    assert audit.entries()[1]["user"] == "bob"
    assert len(make_roots().all()) == 1


def test_server_and_admin_roots_cannot_be_removed(
    make_roots: Callable[..., WorkspaceRoots], root: Path, project: Path
) -> None:
    roots = make_roots(admin_roots=[str(project)])
    for path in (root, project):
        with pytest.raises(ProtectedPath, match="server or the administrator"):
            roots.remove(str(path), user="ada")
    assert len(roots.all()) == 2
    with pytest.raises(NotFound, match="not a workspace root"):
        roots.remove(str(root / "src"), user="ada")


def test_a_stored_root_that_vanished_is_skipped_but_not_forgotten(
    make_roots: Callable[..., WorkspaceRoots], project: Path, tmp_path: Path
) -> None:
    make_roots().add(str(project), user="ada")
    shutil.rmtree(project)
    roots = make_roots()
    assert [r.kind for r in roots.all()] == ["server"]
    # Saving an unrelated change keeps it (an unmounted drive comes back).
    other = tmp_path / "other"
    other.mkdir()
    roots.add(str(other), user="ada")
    project.mkdir()
    assert {r.path for r in make_roots().all()} >= {str(project), str(other)}
    # And it can be removed while it is away.
    shutil.rmtree(project)
    make_roots().remove(str(project), user="ada")
    project.mkdir()
    assert str(project) not in {r.path for r in make_roots().all()}


def test_a_stored_root_must_still_pass_the_rules(
    make_roots: Callable[..., WorkspaceRoots], state: Path, tmp_path: Path, project: Path
) -> None:
    ssh = tmp_path / ".ssh"
    ssh.mkdir()
    state.mkdir()
    entries = [{"path": p, "added_by": "mallory"} for p in ("/", "/etc", str(ssh), str(project))]
    (state / "workspace-roots.json").write_text(json.dumps({"roots": entries}))
    assert [r.path for r in make_roots().all()][1:] == [str(project)]


@pytest.mark.parametrize("content", ["not json", "[]", '{"roots": [3, {"path": 4}]}', ""])
def test_an_unreadable_store_means_no_user_roots(
    make_roots: Callable[..., WorkspaceRoots], state: Path, content: str
) -> None:
    state.mkdir()
    (state / "workspace-roots.json").write_text(content)
    assert [r.kind for r in make_roots().all()] == ["server"]


def test_the_innermost_root_contains_a_path(
    make_roots: Callable[..., WorkspaceRoots], root: Path
) -> None:
    roots = make_roots(admin_roots=[str(root / "src")])
    assert roots.containing(str(root / "src" / "app.py")).kind == "admin"  # type: ignore[union-attr]
    assert roots.containing(str(root / "README.md")).kind == "server"  # type: ignore[union-attr]
    assert roots.is_root(str(root / "src"))
    assert not roots.is_root(str(root / "src" / "app.py"))


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/a/b", "/a", True),
        ("/a", "/a", True),
        ("/a/b/c", "/a/b", True),
        ("/ab", "/a", False),
        ("/a-b/c", "/a", False),
        ("/", "/a", False),
        ("/anything", "/", True),
    ],
)
def test_is_within(path: str, root: str, inside: bool) -> None:
    assert is_within(path, root) is inside
