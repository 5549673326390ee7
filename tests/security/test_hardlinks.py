"""The hard-link rule in the verified I/O: another name of a secret or outside file is not read."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import AccessDenied, InvalidRequest
from terax_jupyter.security import SecurityLayer, fileio
from terax_jupyter.security.hardlinks import PACKAGE_STORES, HardLinkRule
from terax_jupyter.security.paths import Access

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security.paths import CheckedPath

SECRET = b"API_TOKEN=never-read-me\n"
OUTSIDE_CONTENT = b"outside the workspace\n"  # what conftest's ``outside`` fixture writes


def layer(root: Path, tmp_path: Path, mode: str, extra: tuple[str, ...] = ()) -> SecurityLayer:
    return SecurityLayer.build(
        str(root), str(tmp_path / f"state-{mode}"), hard_links=mode, extra_hard_link_stores=extra
    )


def refused(error: pytest.ExceptionInfo[AccessDenied]) -> bool:
    return error.value.reason == "hard_link" and "cp -p" in error.value.message


def test_a_hard_link_to_a_protected_file_is_not_read(
    root: Path, check: Callable[..., CheckedPath]
) -> None:
    os.link(root / ".env", root / "notes.txt")
    with pytest.raises(AccessDenied) as caught:
        fileio.read_bytes(check("notes.txt"), 1 << 20)
    assert refused(caught)
    assert "2 names" in caught.value.message
    assert SECRET.decode() not in caught.value.message


def test_a_hard_link_to_an_outside_file_is_not_read(
    root: Path, outside: Path, check: Callable[..., CheckedPath]
) -> None:
    os.link(outside / "target.txt", root / "src" / "linked.txt")
    with pytest.raises(AccessDenied) as caught:
        fileio.read_bytes(check("src/linked.txt"), 1 << 20)
    assert refused(caught)
    with fileio.ListedFiles(check(str(root))) as listed, pytest.raises(AccessDenied):
        listed.read_ranges("src/linked.txt", [(0, 10)])


def test_files_with_one_name_are_read(root: Path, check: Callable[..., CheckedPath]) -> None:
    data, info = fileio.read_bytes(check("src/app.py"), 1 << 20)
    assert (data, info.st_nlink) == (b"print('hello')\n", 1)
    # Once the other name is gone, the file is an ordinary file again.
    os.link(root / "src" / "app.py", root / "src" / "twin.py")
    with pytest.raises(AccessDenied):
        fileio.read_bytes(check("src/app.py"), 1 << 20)
    os.unlink(root / "src" / "twin.py")
    assert fileio.read_bytes(check("src/app.py"), 1 << 20)[0] == b"print('hello')\n"


def test_package_stores_are_read_unless_the_administrator_refuses(
    root: Path, outside: Path, tmp_path: Path
) -> None:
    stores = {
        "node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/index.js",
        "node_modules/left-pad/index.js",
        ".venv/lib/python3.11/site-packages/pkg/__init__.py",
        "conda/lib/python3.11/dist-packages/pkg/mod.py",
        "vendor/pkgs/lib.py",
    }
    for relative in stores:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        os.link(outside / "target.txt", root / relative)
    default = layer(root, tmp_path, "stores").paths
    for relative in stores - {"vendor/pkgs/lib.py"}:
        assert fileio.read_bytes(default.check(relative), 1 << 20)[0] == OUTSIDE_CONTENT
    with pytest.raises(AccessDenied):
        fileio.read_bytes(default.check("vendor/pkgs/lib.py"), 1 << 20)
    extended = layer(root, tmp_path, "stores", ("pkgs",)).paths
    assert fileio.read_bytes(extended.check("vendor/pkgs/lib.py"), 1 << 20)[0] == OUTSIDE_CONTENT
    strict = layer(root, tmp_path, "refuse").paths
    for relative in stores:
        with pytest.raises(AccessDenied):
            fileio.read_bytes(strict.check(relative), 1 << 20)
    # "allow" turns the rule off: the deny-list judges names only, as before.
    os.link(root / ".env", root / "notes.txt")
    lax = layer(root, tmp_path, "allow").paths
    assert fileio.read_bytes(lax.check("notes.txt"), 1 << 20)[0] == SECRET


def test_a_write_gives_a_hard_linked_name_a_file_of_its_own(
    root: Path, check: Callable[..., CheckedPath]
) -> None:
    os.link(root / ".env", root / "notes.txt")
    # Read only to compare before it is replaced: allowed for a path checked for writing.
    current, _ = fileio.read_bytes(check("notes.txt", write=True), 1 << 20)
    assert current == SECRET
    fileio.write_atomic(check("notes.txt", write=True), b"my own notes\n")
    assert (root / ".env").read_bytes() == SECRET
    assert os.stat(root / ".env").st_nlink == 1
    assert fileio.read_bytes(check("notes.txt"), 1 << 20)[0] == b"my own notes\n"


def test_copies_of_hard_links_are_refused(root: Path, check: Callable[..., CheckedPath]) -> None:
    os.link(root / ".env", root / "notes.txt")
    with pytest.raises(AccessDenied) as caught:
        fileio.copy(
            check("notes.txt", follow=False),
            check("copy.txt", write=True, follow=False),
            overwrite=False,
            skip=lambda _: False,
        )
    assert refused(caught)
    assert not (root / "copy.txt").exists()
    (root / "folder").mkdir()
    os.link(root / ".env", root / "folder" / "inner.txt")
    with pytest.raises(AccessDenied):
        fileio.copy(
            check("folder", follow=False),
            check("folder-copy", write=True, follow=False),
            overwrite=False,
            skip=lambda _: False,
        )
    assert not (root / "folder-copy" / "inner.txt").exists()
    # A folder of ordinary files still copies.
    os.unlink(root / "folder" / "inner.txt")
    (root / "folder" / "plain.txt").write_text("plain\n")
    copied = fileio.copy(
        check("folder", follow=False),
        check("folder-copy-2", write=True, follow=False),
        overwrite=False,
        skip=lambda _: False,
    )
    assert copied == 2
    assert (root / "folder-copy-2" / "plain.txt").read_text() == "plain\n"


def test_the_rule_itself() -> None:
    rule = HardLinkRule()
    assert rule.mode == "stores"
    assert rule.stores == PACKAGE_STORES
    assert rule.in_store("/w/node_modules/x/index.js")
    assert rule.in_store("/w/Node_Modules/x/index.js")
    assert rule.in_store("C:\\w\\site-packages\\x.py")
    assert not rule.in_store("/w/node_modules")  # the file's own name is not a folder above it
    assert not rule.in_store("/w/my_node_modules/x.js")
    assert HardLinkRule.build("stores", ["/pkgs/", "", "  "]).stores[-1] == "pkgs"
    with pytest.raises(InvalidRequest):
        HardLinkRule("sometimes")


def test_checked_paths_carry_the_layer_rule(root: Path, tmp_path: Path) -> None:
    checked = layer(root, tmp_path, "refuse").paths.check("src/app.py", Access.READ)
    assert checked.hard_links.mode == "refuse"
