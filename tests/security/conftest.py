"""Fixtures for the security unit tests: a workspace root, a folder outside it, a guard."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.security.paths import Access, CheckedPath

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.security.paths import PathGuard

OUTSIDE_CONTENT = b"outside the workspace\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The server root (canonical), with a small project in it."""
    folder = tmp_path / "root"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("print('hello')\n")
    (folder / "README.md").write_text("# readme\n")
    (folder / ".env").write_text("API_TOKEN=never-read-me\n")
    return Path(os.path.realpath(folder))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the root, in no workspace root, holding ``target.txt``."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "target.txt").write_bytes(OUTSIDE_CONTENT)
    return Path(os.path.realpath(folder))


@pytest.fixture
def security(terax_security: Callable[..., SecurityLayer], root: Path) -> SecurityLayer:
    return terax_security(root)


@pytest.fixture
def guard(security: SecurityLayer) -> PathGuard:
    return security.paths


@pytest.fixture
def check(guard: PathGuard) -> Callable[..., CheckedPath]:
    """``check(path, write=False, follow=True)``: the guard's verdict, shorter to write."""

    def run(path: str | Path, *, write: bool = False, follow: bool = True) -> CheckedPath:
        access = Access.WRITE if write else Access.READ
        return guard.check(str(path), access, follow_symlinks=follow)

    return run
