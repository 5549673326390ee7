"""File operations on checked paths: verified at use time, atomic, never following a late link."""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import stat
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import (
    AccessDenied,
    AlreadyExists,
    InvalidRequest,
    NotEmpty,
    NotFound,
    PathChanged,
    TooLarge,
    Unsupported,
)
from terax_jupyter.security import fileio

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.security.paths import CheckedPath

    Check = Callable[..., CheckedPath]


# What the ``outside`` fixture puts in ``target.txt``.
OUTSIDE_CONTENT = b"outside the workspace\n"


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def temp_leftovers(folder: Path) -> list[str]:
    return [name for name in os.listdir(folder) if ".terax-" in name]


def swap_for_link(path: Path, target: Path) -> None:
    """Move ``path`` aside (if it exists) and put a symlink to ``target`` in its place."""
    if os.path.lexists(path):
        path.rename(path.with_name(path.name + ".moved-aside"))
    path.symlink_to(target, target_is_directory=target.is_dir())


@pytest.fixture
def protected(security: SecurityLayer) -> Callable[[str], bool]:
    """The ``skip`` a manager passes to ``copy``: protected entries stay behind."""
    return lambda path: security.deny.check(path, write=False) is not None


# -- links created after the check: the final name ------------------------------------------------


@pytest.fixture
def data_file(root: Path) -> Path:
    path = root / "data.txt"
    path.write_bytes(b"inside\n")
    return path


def test_read_refuses_a_file_swapped_for_a_link(
    check: Check, data_file: Path, outside: Path
) -> None:
    checked = check("data.txt")
    swap_for_link(data_file, outside / "target.txt")
    with pytest.raises(PathChanged, match="became a symbolic link"):
        fileio.read_bytes(checked, 1 << 20)


def test_write_refuses_a_file_swapped_for_a_link(
    check: Check, data_file: Path, outside: Path
) -> None:
    checked = check("data.txt", write=True)
    swap_for_link(data_file, outside / "target.txt")
    with pytest.raises(PathChanged):
        fileio.write_atomic(checked, b"overwritten")
    assert (outside / "target.txt").read_bytes() == OUTSIDE_CONTENT
    assert data_file.is_symlink()
    assert temp_leftovers(data_file.parent) == []


def test_write_refuses_a_link_planted_where_a_new_file_goes(
    check: Check, root: Path, outside: Path
) -> None:
    checked = check("fresh.txt", write=True)
    (root / "fresh.txt").symlink_to(outside / "planted.txt")
    with pytest.raises(PathChanged):
        fileio.write_atomic(checked, b"x")
    assert not (outside / "planted.txt").exists()


def test_create_refuses_a_link_planted_at_its_name(check: Check, root: Path, outside: Path) -> None:
    checked = check("fresh.txt", write=True)
    (root / "fresh.txt").symlink_to(outside / "planted.txt")
    with pytest.raises(PathChanged):
        fileio.create_file(checked, b"x")
    assert not (outside / "planted.txt").exists()
    assert temp_leftovers(root) == []


def test_delete_refuses_a_file_swapped_for_a_link(
    check: Check, data_file: Path, outside: Path
) -> None:
    checked = check("data.txt", write=True)
    swap_for_link(data_file, outside / "target.txt")
    with pytest.raises(PathChanged):
        fileio.delete(checked, recursive=True)
    assert (outside / "target.txt").read_bytes() == OUTSIDE_CONTENT
    assert data_file.is_symlink()


def test_delete_refuses_a_folder_swapped_for_a_link(
    check: Check, root: Path, outside: Path
) -> None:
    (root / "build").mkdir()
    checked = check("build", write=True)
    swap_for_link(root / "build", outside)
    with pytest.raises(PathChanged):
        fileio.delete(checked, recursive=True)
    assert (outside / "target.txt").read_bytes() == OUTSIDE_CONTENT


def test_listing_refuses_a_folder_swapped_for_a_link(
    check: Check, root: Path, outside: Path
) -> None:
    checked = check("src")
    swap_for_link(root / "src", outside)
    with pytest.raises(PathChanged):
        fileio.list_directory(checked)


def test_make_directory_refuses_a_link_planted_at_its_name(
    check: Check, root: Path, outside: Path
) -> None:
    checked = check("made", write=True)
    (root / "made").symlink_to(outside / "made-outside", target_is_directory=True)
    with pytest.raises(PathChanged):
        fileio.make_directory(checked)
    (outside / "made-outside").mkdir()
    # Even where the link's target exists, the answer is not "already exists".
    with pytest.raises(PathChanged):
        fileio.make_directory(checked)


def test_rename_refuses_a_source_swapped_for_a_link(
    check: Check, data_file: Path, outside: Path, root: Path
) -> None:
    source, target = check("data.txt", write=True), check("renamed.txt", write=True)
    swap_for_link(data_file, outside / "target.txt")
    with pytest.raises(PathChanged):
        fileio.rename(source, target, overwrite=False)
    assert not os.path.lexists(root / "renamed.txt")


def test_copy_refuses_a_source_swapped_for_a_link(
    check: Check, data_file: Path, outside: Path, root: Path, protected: Callable[[str], bool]
) -> None:
    source, target = check("data.txt"), check("copy.txt", write=True)
    swap_for_link(data_file, outside / "target.txt")
    with pytest.raises(PathChanged):
        fileio.copy(source, target, overwrite=False, skip=protected)
    assert not os.path.lexists(root / "copy.txt")


# -- links created after the check: a parent folder -----------------------------------------------


@pytest.fixture
def swapped_parent(root: Path, outside: Path) -> Callable[[], Path]:
    """``sub/data.txt`` inside; the result swaps ``sub`` for a link to a look-alike outside."""
    (root / "sub").mkdir()
    (root / "sub" / "data.txt").write_bytes(b"inside\n")
    decoy = outside / "decoy"
    decoy.mkdir()
    (decoy / "data.txt").write_bytes(OUTSIDE_CONTENT)

    def swap() -> Path:
        swap_for_link(root / "sub", decoy)
        return decoy

    return swap


def test_read_refuses_a_parent_swapped_for_a_link(check: Check, swapped_parent: Callable) -> None:
    checked = check("sub/data.txt")
    swapped_parent()
    with pytest.raises(PathChanged):
        fileio.read_bytes(checked, 1 << 20)
    with pytest.raises(PathChanged):
        fileio.stat_path(checked)


def test_write_refuses_a_parent_swapped_for_a_link(check: Check, swapped_parent: Callable) -> None:
    checked = check("sub/data.txt", write=True)
    decoy = swapped_parent()
    with pytest.raises(PathChanged):
        fileio.write_atomic(checked, b"overwritten")
    assert (decoy / "data.txt").read_bytes() == OUTSIDE_CONTENT
    assert sorted(os.listdir(decoy)) == ["data.txt"]


def test_create_refuses_a_parent_swapped_for_a_link(check: Check, swapped_parent: Callable) -> None:
    checked = check("sub/new.txt", write=True)
    decoy = swapped_parent()
    with pytest.raises(PathChanged):
        fileio.create_file(checked, b"x")
    assert sorted(os.listdir(decoy)) == ["data.txt"]


def test_delete_refuses_a_parent_swapped_for_a_link(check: Check, swapped_parent: Callable) -> None:
    checked = check("sub/data.txt", write=True)
    decoy = swapped_parent()
    with pytest.raises(PathChanged):
        fileio.delete(checked, recursive=False)
    assert (decoy / "data.txt").read_bytes() == OUTSIDE_CONTENT


@pytest.mark.parametrize("parents", [False, True])
def test_make_directory_refuses_a_parent_swapped_for_a_link(
    check: Check, swapped_parent: Callable, parents: bool
) -> None:
    checked = check("sub/a/b" if parents else "sub/a", write=True)
    decoy = swapped_parent()
    with pytest.raises(PathChanged):
        fileio.make_directory(checked, parents=parents)
    assert sorted(os.listdir(decoy)) == ["data.txt"]


def test_rename_refuses_a_target_parent_swapped_for_a_link(
    check: Check, swapped_parent: Callable, root: Path
) -> None:
    (root / "mine.txt").write_text("mine")
    source, target = check("mine.txt", write=True), check("sub/data.txt", write=True)
    decoy = swapped_parent()
    with pytest.raises(PathChanged):
        fileio.rename(source, target, overwrite=True)
    assert (decoy / "data.txt").read_bytes() == OUTSIDE_CONTENT
    assert (root / "mine.txt").read_text() == "mine"


def test_copy_refuses_a_source_parent_swapped_for_a_link(
    check: Check, swapped_parent: Callable, root: Path, protected: Callable[[str], bool]
) -> None:
    source, target = check("sub/data.txt"), check("copy.txt", write=True)
    swapped_parent()
    with pytest.raises(PathChanged):
        fileio.copy(source, target, overwrite=False, skip=protected)
    assert not os.path.lexists(root / "copy.txt")


def test_a_swapped_grandparent_is_caught_by_proving_the_descriptor(
    check: Check, root: Path, outside: Path
) -> None:
    # O_NOFOLLOW guards only the last name; the open folder is proven to be the checked one.
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "data.txt").write_bytes(b"inside\n")
    (outside / "a2" / "b").mkdir(parents=True)
    (outside / "a2" / "b" / "data.txt").write_bytes(OUTSIDE_CONTENT)
    read, write = check("a/b/data.txt"), check("a/b/data.txt", write=True)
    listing = check("a/b")
    swap_for_link(root / "a", outside / "a2")
    with pytest.raises(PathChanged):
        fileio.read_bytes(read, 1 << 20)
    with pytest.raises(PathChanged):
        fileio.write_atomic(write, b"overwritten")
    with pytest.raises(PathChanged):
        fileio.list_directory(listing)
    assert (outside / "a2" / "b" / "data.txt").read_bytes() == OUTSIDE_CONTENT


def test_path_changed_is_an_access_denial() -> None:
    error = PathChanged("x")
    assert isinstance(error, AccessDenied)
    assert error.reason == "path_changed"


# -- atomic write ---------------------------------------------------------------------------------


def test_write_replaces_the_content_wholly_and_keeps_the_mode(check: Check, root: Path) -> None:
    path = root / "notes.txt"
    path.write_bytes(b"a much longer original content\n" * 10)
    path.chmod(0o640)
    info = fileio.write_atomic(check("notes.txt", write=True), b"short\n")
    assert path.read_bytes() == b"short\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert info.st_size == 6
    assert temp_leftovers(root) == []


def test_a_new_file_gets_the_default_mode_and_an_explicit_mode_wins(
    check: Check, root: Path
) -> None:
    fileio.write_atomic(check("new.txt", write=True), b"x")
    assert stat.S_IMODE((root / "new.txt").stat().st_mode) == 0o666 & ~current_umask()
    fileio.write_atomic(check("new.txt", write=True), b"y", mode=0o600)
    assert stat.S_IMODE((root / "new.txt").stat().st_mode) == 0o600


def test_a_rewrite_drops_set_user_and_group_id(check: Check, root: Path) -> None:
    path = root / "tool"
    path.write_bytes(b"#!/bin/sh\n")
    path.chmod(0o6755)
    fileio.write_atomic(check("tool", write=True), b"#!/bin/sh\necho changed\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o755


def test_a_write_does_not_go_through_a_hard_link(check: Check, root: Path, outside: Path) -> None:
    os.link(outside / "target.txt", root / "hard.txt")
    fileio.write_atomic(check("hard.txt", write=True), b"new")
    assert (root / "hard.txt").read_bytes() == b"new"
    assert (outside / "target.txt").read_bytes() == OUTSIDE_CONTENT


def test_a_failed_rename_leaves_the_original_and_no_temp_file(
    check: Check, data_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        fileio.write_atomic(check("data.txt", write=True), b"new")
    assert data_file.read_bytes() == b"inside\n"
    assert temp_leftovers(data_file.parent) == []


def test_a_failed_flush_leaves_the_original_and_no_temp_file(
    check: Check, data_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(fd: int) -> None:
        raise OSError(5, "Input/output error")

    checked = check("data.txt", write=True)
    monkeypatch.setattr(os, "fsync", refuse)
    with pytest.raises(OSError, match="Input/output"):
        fileio.write_atomic(checked, b"new")
    assert data_file.read_bytes() == b"inside\n"
    assert temp_leftovers(data_file.parent) == []


def test_a_name_of_255_bytes_can_be_written(check: Check, root: Path) -> None:
    # The temp file's name is cut by bytes, so it stays within NAME_MAX too.
    name = "\u8a9e" * 85  # three bytes each in UTF-8
    fileio.write_atomic(check(name, write=True), b"x")
    fileio.write_atomic(check(name, write=True), b"y")
    assert (root / name).read_bytes() == b"y"
    assert temp_leftovers(root) == []


def test_writing_a_folder_or_a_root_is_refused(check: Check) -> None:
    with pytest.raises(InvalidRequest, match="is a directory"):
        fileio.write_atomic(check("src", write=True), b"x")
    with pytest.raises(InvalidRequest, match="workspace root"):
        fileio.write_atomic(check(".", write=True), b"x")


# -- exclusive create -----------------------------------------------------------------------------


def test_create_makes_a_new_file(check: Check, root: Path) -> None:
    fileio.create_file(check("made.txt", write=True), b"content")
    assert (root / "made.txt").read_bytes() == b"content"
    assert stat.S_IMODE((root / "made.txt").stat().st_mode) == 0o666 & ~current_umask()
    assert temp_leftovers(root) == []


def test_create_never_clobbers(check: Check, data_file: Path) -> None:
    with pytest.raises(AlreadyExists, match="already exists"):
        fileio.create_file(check("data.txt", write=True), b"clobbered")
    assert data_file.read_bytes() == b"inside\n"


def test_create_never_writes_through_an_existing_link(
    check: Check, root: Path, outside: Path
) -> None:
    (root / "dangling").symlink_to(outside / "planted.txt")
    with pytest.raises(AlreadyExists):
        fileio.create_file(check("dangling", write=True, follow=False), b"x")
    assert not (outside / "planted.txt").exists()


def test_create_never_clobbers_a_file_that_appears_after_the_existence_check(
    check: Check, data_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = check("data.txt", write=True)
    monkeypatch.setattr(fileio, "_lstat_at", lambda *args: None)
    with pytest.raises(AlreadyExists):
        fileio.create_file(checked, b"clobbered")
    assert data_file.read_bytes() == b"inside\n"
    assert temp_leftovers(data_file.parent) == []


# -- read -----------------------------------------------------------------------------------------


def test_read_returns_the_bytes_and_their_stat(check: Check, data_file: Path) -> None:
    data, info = fileio.read_bytes(check("data.txt"), 7)
    assert data == b"inside\n"
    assert info.st_size == 7


def test_read_refuses_a_fifo_without_hanging(check: Check, root: Path) -> None:
    os.mkfifo(root / "pipe")
    checked = check("pipe")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(fileio.read_bytes, checked, 1024)
        with pytest.raises(Unsupported, match="not a regular file") as caught:
            future.result(timeout=10)
    assert caught.value.reason == "not_a_file"


def test_read_refuses_a_directory(check: Check) -> None:
    with pytest.raises(Unsupported, match="is a directory"):
        fileio.read_bytes(check("src"), 1024)


def test_read_refuses_a_file_over_the_limit_naming_both_sizes(check: Check, root: Path) -> None:
    (root / "big.bin").write_bytes(b"x" * 2048)
    with pytest.raises(TooLarge) as caught:
        fileio.read_bytes(check("big.bin"), 1024)
    assert caught.value.message.endswith("big.bin is 2.0 KB; files over 1.0 KB are not opened.")
    assert fileio.read_bytes(check("big.bin"), 2048)[0] == b"x" * 2048


def test_read_of_a_missing_file_is_not_found(check: Check) -> None:
    with pytest.raises(NotFound):
        fileio.read_bytes(check("nope.txt"), 1024)


def test_read_never_follows_a_link_checked_as_a_link(
    check: Check, root: Path, outside: Path
) -> None:
    (root / "link").symlink_to(outside / "target.txt")
    with pytest.raises(PathChanged):
        fileio.read_bytes(check("link", follow=False), 1024)


# -- delete ---------------------------------------------------------------------------------------


def test_delete_a_file_and_an_empty_folder(check: Check, data_file: Path, root: Path) -> None:
    fileio.delete(check("data.txt", write=True), recursive=False)
    assert not data_file.exists()
    (root / "empty").mkdir()
    fileio.delete(check("empty", write=True), recursive=False)
    assert not (root / "empty").exists()


def test_delete_refuses_a_non_empty_folder_unless_recursive(check: Check, root: Path) -> None:
    with pytest.raises(NotEmpty, match="not empty"):
        fileio.delete(check("src", write=True), recursive=False)
    assert (root / "src" / "app.py").exists()
    fileio.delete(check("src", write=True), recursive=True)
    assert not (root / "src").exists()


def test_recursive_delete_removes_links_not_what_they_point_at(
    check: Check, root: Path, outside: Path
) -> None:
    (root / "build" / "deep").mkdir(parents=True)
    (root / "build" / "deep" / "out").symlink_to(outside, target_is_directory=True)
    (root / "build" / "file-link").symlink_to(outside / "target.txt")
    fileio.delete(check("build", write=True), recursive=True)
    assert not (root / "build").exists()
    assert (outside / "target.txt").read_bytes() == OUTSIDE_CONTENT


def test_delete_refuses_a_root_and_a_missing_path(check: Check) -> None:
    with pytest.raises(InvalidRequest, match="workspace root"):
        fileio.delete(check(".", write=True), recursive=True)
    with pytest.raises(NotFound):
        fileio.delete(check("nope", write=True), recursive=True)


# -- listing and directories ----------------------------------------------------------------------


def test_list_directory_reports_each_kind(check: Check, root: Path, outside: Path) -> None:
    (root / "dir-link").symlink_to(root / "src", target_is_directory=True)
    (root / "file-link").symlink_to(root / "README.md")
    (root / "dangling").symlink_to(root / "missing")
    os.mkfifo(root / "pipe")
    entries = {e.name: e for e in fileio.list_directory(check("."))}
    assert entries["README.md"].kind == "file"
    assert entries["README.md"].size == len("# readme\n")
    assert entries["src"].kind == "directory"
    assert (entries["dir-link"].kind, entries["dir-link"].target_kind) == ("symlink", "directory")
    assert (entries["file-link"].kind, entries["file-link"].target_kind) == ("symlink", "file")
    assert (entries["dangling"].kind, entries["dangling"].target_kind) == ("symlink", "missing")
    assert entries["pipe"].kind == "other"


def test_make_directory_with_and_without_parents(check: Check, root: Path) -> None:
    fileio.make_directory(check("one", write=True))
    assert (root / "one").is_dir()
    with pytest.raises(NotFound, match="parent folder"):
        fileio.make_directory(check("two/three", write=True))
    assert not (root / "two").exists()
    fileio.make_directory(check("two/three/four", write=True), parents=True)
    assert (root / "two" / "three" / "four").is_dir()
    with pytest.raises(AlreadyExists):
        fileio.make_directory(check("one", write=True))


# -- rename ---------------------------------------------------------------------------------------


def test_rename_moves_a_file(check: Check, data_file: Path, root: Path) -> None:
    fileio.rename(
        check("data.txt", write=True), check("src/moved.txt", write=True), overwrite=False
    )
    assert not data_file.exists()
    assert (root / "src" / "moved.txt").read_bytes() == b"inside\n"


def test_rename_onto_an_existing_file_needs_overwrite(
    check: Check, data_file: Path, root: Path
) -> None:
    source, target = check("data.txt", write=True), check("README.md", write=True)
    with pytest.raises(AlreadyExists):
        fileio.rename(source, target, overwrite=False)
    assert data_file.read_bytes() == b"inside\n"
    assert (root / "README.md").read_text() == "# readme\n"
    fileio.rename(source, target, overwrite=True)
    assert not data_file.exists()
    assert (root / "README.md").read_bytes() == b"inside\n"


def test_rename_never_replaces_a_folder(check: Check, data_file: Path, root: Path) -> None:
    with pytest.raises(AlreadyExists, match="is a directory"):
        fileio.rename(check("data.txt", write=True), check("src", write=True), overwrite=True)
    assert (root / "src" / "app.py").exists()


def test_rename_of_a_missing_source_is_not_found(check: Check) -> None:
    with pytest.raises(NotFound):
        fileio.rename(check("nope", write=True), check("other", write=True), overwrite=False)


def test_a_folder_cannot_be_moved_into_itself(check: Check, root: Path) -> None:
    with pytest.raises(InvalidRequest, match="into itself"):
        fileio.rename(check("src", write=True), check("src/inner", write=True), overwrite=False)
    assert (root / "src" / "app.py").exists()


def test_renaming_a_link_moves_the_link(check: Check, root: Path, outside: Path) -> None:
    (root / "link").symlink_to(outside / "target.txt")
    source = check("link", write=True, follow=False)
    fileio.rename(source, check("moved-link", write=True, follow=False), overwrite=False)
    assert (root / "moved-link").is_symlink()
    assert (outside / "target.txt").read_bytes() == OUTSIDE_CONTENT


# -- copy -----------------------------------------------------------------------------------------


def test_copy_a_file_keeps_its_mode_and_respects_overwrite(
    check: Check, data_file: Path, root: Path, protected: Callable[[str], bool]
) -> None:
    data_file.chmod(0o750)
    source = check("data.txt")
    assert fileio.copy(source, check("copy.txt", write=True), overwrite=False, skip=protected) == 1
    assert (root / "copy.txt").read_bytes() == b"inside\n"
    assert stat.S_IMODE((root / "copy.txt").stat().st_mode) == 0o750
    with pytest.raises(AlreadyExists):
        fileio.copy(source, check("README.md", write=True), overwrite=False, skip=protected)
    assert (root / "README.md").read_text() == "# readme\n"
    fileio.copy(source, check("README.md", write=True), overwrite=True, skip=protected)
    assert (root / "README.md").read_bytes() == b"inside\n"


def test_copying_a_folder_leaves_protected_entries_behind(
    check: Check, root: Path, protected: Callable[[str], bool]
) -> None:
    project = root / "project"
    (project / "sub" / ".ssh").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".env").write_text("TOKEN=x\n")
    (project / "main.py").write_text("print(1)\n")
    (project / "sub" / "server.pem").write_text("pem\n")
    (project / "sub" / ".ssh" / "id_ed25519").write_text("key\n")
    (project / "sub" / "ok.txt").write_text("ok\n")
    copied = fileio.copy(
        check("project"), check("clone", write=True), overwrite=False, skip=protected
    )
    clone = root / "clone"
    found = sorted(str(p.relative_to(clone)) for p in clone.rglob("*"))
    assert found == ["main.py", "sub", "sub/ok.txt"]
    assert copied == 1 + len(found)


def test_copying_a_folder_does_not_write_into_a_protected_target(
    check: Check, root: Path, protected: Callable[[str], bool]
) -> None:
    # "gh" is harmless where it is, but "<clone>/.config/gh" is a protected folder.
    (root / "settings" / "gh").mkdir(parents=True)
    (root / "settings" / "gh" / "hosts.yml").write_text("oauth_token: x\n")
    (root / "settings" / "other.yml").write_text("a: 1\n")
    fileio.copy(check("settings"), check(".config", write=True), overwrite=False, skip=protected)
    assert sorted(os.listdir(root / ".config")) == ["other.yml"]


def test_copying_a_folder_copies_links_as_links(
    check: Check, root: Path, outside: Path, protected: Callable[[str], bool]
) -> None:
    (root / "src" / "out").symlink_to(outside, target_is_directory=True)
    (root / "src" / "target").symlink_to(outside / "target.txt")
    os.mkfifo(root / "src" / "pipe")
    fileio.copy(check("src"), check("copy", write=True), overwrite=False, skip=protected)
    assert os.readlink(root / "copy" / "out") == str(outside)
    assert (root / "copy" / "target").is_symlink()
    assert not os.path.lexists(root / "copy" / "pipe")
    assert (root / "copy" / "app.py").read_text() == "print('hello')\n"


def test_a_folder_cannot_be_copied_into_itself_or_onto_something(
    check: Check, protected: Callable[[str], bool]
) -> None:
    with pytest.raises(InvalidRequest, match="into itself"):
        fileio.copy(check("src"), check("src/again", write=True), overwrite=False, skip=protected)
    with pytest.raises(AlreadyExists):
        fileio.copy(check("src"), check("README.md", write=True), overwrite=True, skip=protected)


def test_copying_a_link_copies_the_link_and_can_replace_the_target(
    check: Check, root: Path, outside: Path, protected: Callable[[str], bool]
) -> None:
    (root / "link").symlink_to(outside / "target.txt")
    source = check("link", follow=False)
    fileio.copy(
        source, check("link-copy", write=True, follow=False), overwrite=False, skip=protected
    )
    assert os.readlink(root / "link-copy") == str(outside / "target.txt")
    with pytest.raises(AlreadyExists):
        fileio.copy(source, check("README.md", write=True), overwrite=False, skip=protected)
    fileio.copy(
        source, check("README.md", write=True, follow=False), overwrite=True, skip=protected
    )
    assert os.readlink(root / "README.md") == str(outside / "target.txt")
    assert temp_leftovers(root) == []


def test_a_tree_copy_holds_on_to_the_folder_it_proved(
    check: Check, root: Path, outside: Path
) -> None:
    """Swaps made while the copy runs (here: from the skip callback) are never followed."""
    project = root / "project"
    (project / "sub").mkdir(parents=True)
    (project / "data.txt").write_bytes(b"inside\n")
    (project / "sub" / "inner.txt").write_bytes(b"inner\n")
    decoy = outside / "decoy"
    (decoy / "sub").mkdir(parents=True)
    (decoy / "data.txt").write_bytes(OUTSIDE_CONTENT)
    (decoy / "sub" / "inner.txt").write_bytes(OUTSIDE_CONTENT)
    swapped: list[str] = []

    def swap_everything(path: str) -> bool:
        if not swapped:
            swapped.append(path)
            # The folder being copied becomes a link to the decoy...
            swap_for_link(project, decoy)
        return False

    fileio.copy(check("project"), check("clone", write=True), overwrite=False, skip=swap_everything)
    clone = root / "clone"
    contents = {str(p.relative_to(clone)): p.read_bytes() for p in clone.rglob("*") if p.is_file()}
    # ...yet what is copied is the folder that was checked.
    assert contents == {"data.txt": b"inside\n", "sub/inner.txt": b"inner\n"}


def test_entries_swapped_for_links_mid_copy_are_copied_as_links(
    check: Check, root: Path, outside: Path
) -> None:
    project = root / "project"
    (project / "sub").mkdir(parents=True)
    (project / "data.txt").write_bytes(b"inside\n")

    def swap_entry(path: str) -> bool:
        if path == str(project / "data.txt"):
            swap_for_link(project / "data.txt", outside / "target.txt")
        if path == str(project / "sub"):
            shutil.rmtree(project / "sub")
            (project / "sub").symlink_to(outside, target_is_directory=True)
        return path.endswith(".moved-aside")

    fileio.copy(check("project"), check("clone", write=True), overwrite=False, skip=swap_entry)
    clone = root / "clone"
    assert (clone / "data.txt").is_symlink()
    assert (clone / "sub").is_symlink()
    assert not any(
        p.read_bytes() == OUTSIDE_CONTENT for p in clone.rglob("*") if not p.is_symlink()
    )
