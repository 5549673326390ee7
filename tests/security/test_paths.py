"""The path guard: literal check, canonicalization, canonical re-check, workspace containment."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import (
    AccessDenied,
    InvalidPath,
    OutsideWorkspace,
    PathDenied,
    ReadOnlyMode,
)
from terax_jupyter.security import fileio
from terax_jupyter.security.denylist import DenyList
from terax_jupyter.security.paths import Access, PathGuard
from terax_jupyter.security.workspace import WorkspaceRoots

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.security.paths import CheckedPath

    Check = Callable[..., CheckedPath]


# -- resolution and containment -------------------------------------------------------------------


def test_relative_paths_resolve_against_the_server_root(check: Check, root: Path) -> None:
    checked = check("src/app.py")
    assert checked.path == str(root / "src" / "app.py")
    assert checked.root.kind == "server"
    assert checked.access is Access.READ
    assert checked.name == "app.py"
    assert checked.parent == str(root / "src")
    assert not checked.is_root


def test_the_root_itself_is_allowed_and_known_as_root(check: Check, root: Path) -> None:
    for spelling in (".", "./", str(root), "src/.."):
        checked = check(spelling)
        assert checked.path == str(root)
        assert checked.is_root


def test_a_path_that_does_not_exist_yet_is_checked_for_writing(check: Check, root: Path) -> None:
    checked = check("new/deeper/file.txt", write=True)
    assert checked.path == str(root / "new" / "deeper" / "file.txt")
    assert checked.access is Access.WRITE


@pytest.mark.parametrize(
    "path", ["..", "../outside/target.txt", "src/../../outside", "src/../..", "./../root/../.."]
)
def test_dot_dot_escapes_are_refused(check: Check, outside: Path, path: str) -> None:
    with pytest.raises(OutsideWorkspace, match="outside the workspace roots"):
        check(path)


def test_dot_dot_that_stays_inside_is_allowed(check: Check, root: Path) -> None:
    assert check("src/../README.md").path == str(root / "README.md")


def test_absolute_paths_inside_are_allowed_and_outside_refused(
    check: Check, root: Path, outside: Path
) -> None:
    assert check(str(root / "README.md")).path == str(root / "README.md")
    with pytest.raises(OutsideWorkspace):
        check(str(outside / "target.txt"))
    with pytest.raises(OutsideWorkspace):
        check(str(outside / "target.txt"), write=True)


def test_a_sibling_sharing_the_roots_name_as_prefix_is_outside(check: Check, root: Path) -> None:
    sibling = root.parent / (root.name + "-other")
    sibling.mkdir()
    (sibling / "x.txt").write_text("x")
    with pytest.raises(OutsideWorkspace):
        check(str(sibling / "x.txt"))


def test_home_is_not_a_root(check: Check) -> None:
    with pytest.raises(OutsideWorkspace):
        check(os.path.expanduser("~/some-file.txt"))


@pytest.mark.parametrize("path", ["", " ", "src/\x00.py", "src/a\x1b.py", "a\u202e.py", "\u200b"])
def test_unusable_paths_are_invalid(check: Check, path: str) -> None:
    with pytest.raises(InvalidPath):
        check(path)


def test_very_long_paths_are_invalid(check: Check) -> None:
    with pytest.raises(InvalidPath, match="too long"):
        check("a/" * 2100)
    with pytest.raises(InvalidPath, match="255 bytes"):
        check("x" * 256)


# -- deny rules through the guard -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".ENV",
        "src/../.env",
        ".env.",
        ".env::$DATA",
        "\uff0e\uff45\uff4e\uff56",  # fullwidth .env
        ".\u0435nv",
        "src\\..\\.env",
    ],
)
@pytest.mark.parametrize("write", [False, True])
def test_secret_paths_are_refused_in_every_spelling(check: Check, path: str, write: bool) -> None:
    with pytest.raises(PathDenied, match="is protected and cannot be"):
        check(path, write=write)


def test_the_refusal_names_the_path_asked_for_and_the_rule(check: Check) -> None:
    with pytest.raises(PathDenied) as caught:
        check(".env", write=True)
    assert caught.value.message == (
        ".env is protected and cannot be written: '.env' matches the protected rule '.env*'."
    )
    assert caught.value.reason == "path_denied"


def test_a_system_path_is_refused_before_containment(check: Check) -> None:
    with pytest.raises(PathDenied):
        check("/etc/passwd")
    with pytest.raises(PathDenied):
        check("/proc/self/environ")


# -- symlinks -------------------------------------------------------------------------------------


def test_a_file_link_pointing_outside_is_refused(check: Check, root: Path, outside: Path) -> None:
    (root / "innocent.txt").symlink_to(outside / "target.txt")
    with pytest.raises(OutsideWorkspace):
        check("innocent.txt")
    with pytest.raises(OutsideWorkspace):
        check("innocent.txt", write=True)


def test_reading_through_a_directory_link_pointing_outside_is_refused(
    check: Check, root: Path, outside: Path
) -> None:
    (root / "docs").symlink_to(outside, target_is_directory=True)
    for path in ("docs", "docs/target.txt", "docs/new.txt", "src/../docs/target.txt"):
        with pytest.raises(OutsideWorkspace):
            check(path)


def test_a_dot_dot_through_a_directory_link_is_resolved_by_the_filesystem(
    check: Check, root: Path, outside: Path
) -> None:
    # "link/.." is the link target's parent, not the folder holding the link.
    (outside / "inner").mkdir()
    (root / "jump").symlink_to(outside / "inner", target_is_directory=True)
    with pytest.raises(OutsideWorkspace):
        check("jump/../target.txt")


def test_a_link_inside_to_a_secret_is_refused_by_the_canonical_check(
    check: Check, root: Path
) -> None:
    (root / "notes.txt").symlink_to(root / ".env")
    with pytest.raises(PathDenied, match="protected") as caught:
        check("notes.txt")
    assert caught.value.message.startswith("notes.txt is protected")


def test_a_folder_link_to_a_secret_folder_is_refused(check: Check, root: Path) -> None:
    (root / ".ssh").mkdir()
    (root / ".ssh" / "config").write_text("Host x\n")
    (root / "keys").symlink_to(root / ".ssh", target_is_directory=True)
    with pytest.raises(PathDenied):
        check("keys/config")
    with pytest.raises(PathDenied):
        check("keys/new", write=True)


def test_a_link_into_a_write_only_prefix_refuses_writes(
    terax_security: Callable[..., SecurityLayer], root: Path
) -> None:
    (root / "vendor").mkdir()
    (root / "vendor" / "lib.py").write_text("x = 1\n")
    (root / "alias").symlink_to(root / "vendor", target_is_directory=True)
    deny = DenyList(extra_write_prefixes=[str(root / "vendor")])
    guard = PathGuard(WorkspaceRoots(str(root), deny), deny)
    assert guard.check("alias/lib.py").path == str(root / "vendor" / "lib.py")
    with pytest.raises(PathDenied, match="cannot be written"):
        guard.check("alias/lib.py", Access.WRITE)


def test_without_following_links_the_link_itself_is_checked(
    check: Check, root: Path, outside: Path
) -> None:
    link = root / "to-outside"
    link.symlink_to(outside / "target.txt")
    checked = check("to-outside", write=True, follow=False)
    assert checked.path == str(link)
    assert not checked.follows_symlinks
    fileio.delete(checked, recursive=False)
    assert not os.path.lexists(link)
    assert (outside / "target.txt").read_bytes() == b"outside the workspace\n"


def test_without_following_links_a_linked_parent_is_still_resolved(
    check: Check, root: Path, outside: Path
) -> None:
    (root / "docs").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutsideWorkspace):
        check("docs/target.txt", write=True, follow=False)


def test_a_symlink_loop_is_refused_at_use(check: Check, root: Path) -> None:
    (root / "a").symlink_to(root / "b")
    (root / "b").symlink_to(root / "a")
    with pytest.raises(AccessDenied):
        fileio.read_bytes(check("a"), 1024)


# -- read-only mode -------------------------------------------------------------------------------


def test_read_only_mode_refuses_writes_and_allows_reads(
    terax_security: Callable[..., SecurityLayer], root: Path
) -> None:
    guard = terax_security(root, read_only=True).paths
    assert guard.check("README.md").path == str(root / "README.md")
    with pytest.raises(ReadOnlyMode, match="read-only"):
        guard.check("README.md", Access.WRITE)
    with pytest.raises(ReadOnlyMode):
        guard.check("new.txt", Access.WRITE)


# -- roots ----------------------------------------------------------------------------------------


def test_the_innermost_root_is_returned(
    terax_security: Callable[..., SecurityLayer], root: Path, outside: Path
) -> None:
    security = terax_security(root, extra_roots=(str(root / "src"), str(outside)))
    guard = security.paths
    assert guard.check("README.md").root.kind == "server"
    inner = guard.check("src/app.py").root
    assert (inner.kind, inner.path) == ("admin", str(root / "src"))
    far = guard.check(str(outside / "target.txt")).root
    assert (far.kind, far.path) == ("admin", str(outside))


def test_the_canonical_path_is_returned_for_a_root_reached_through_a_link(
    terax_security: Callable[..., SecurityLayer], root: Path, tmp_path: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    guard = terax_security(alias).paths
    assert guard.roots.server_root == str(root)
    assert guard.check(str(alias / "README.md")).path == str(root / "README.md")
    assert guard.check("src").path == str(root / "src")


def test_display_is_relative_to_the_server_root(
    terax_security: Callable[..., SecurityLayer], root: Path, outside: Path
) -> None:
    guard = terax_security(root, extra_roots=(str(outside),)).paths
    assert guard.display(str(root)) == ""
    assert guard.display(str(root / "src" / "app.py")) == "src/app.py"
    assert guard.display(str(outside / "target.txt")) == str(outside / "target.txt")
