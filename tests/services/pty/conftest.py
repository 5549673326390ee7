"""Fixtures for the terminal tests: a private HOME with the user's rc files, and managers."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.services.pty.manager import PtyManager

from .helpers import write_rc_files

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer

# Startup settings of the developer's own shell that would change what the tests see.
SHELL_ENVIRONMENT = (
    "ZDOTDIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "HISTFILE",
    "HISTTIMEFORMAT",
    "PROMPT_COMMAND",
    "ENV",
    "BASH_ENV",
    "TERAX_TERMINAL",
    "TERAX_NONCE",
    "TERAX_SESSION_ID",
    "TERAX_LOGIN_SHELL",
    "TERAX_USER_ZDOTDIR",
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "stress: many real sessions at once (fast enough for the normal run)"
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME for the shells: the user's .bashrc, .zshrc, config.fish and login files."""
    folder = tmp_path / "home"
    folder.mkdir(exist_ok=True)
    write_rc_files(folder)
    monkeypatch.setenv("HOME", str(folder))
    for name in SHELL_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The workspace root the sessions start in."""
    folder = tmp_path / "root"
    (folder / "sub dir").mkdir(parents=True)
    (folder / "notes.txt").write_text("notes\n")
    return folder


@pytest.fixture
def make_manager(
    terax_security: Callable[..., SecurityLayer],
    root: Path,
    home: Path,
    tmp_path: Path,
    jp_asyncio_loop: asyncio.AbstractEventLoop,
) -> Iterator[Callable[..., PtyManager]]:
    """``make_manager(state_dir=None, **traits)``: a PtyManager over ``root``; its sessions
    close at teardown."""
    made: list[PtyManager] = []

    def make(state_dir: str | None = None, **traits: Any) -> PtyManager:
        traits.setdefault("login_shell", "never")
        traits.setdefault("close_grace", 0.5)
        manager = PtyManager(
            terax_security(root), state_dir or str(tmp_path / "terax-state"), **traits
        )
        made.append(manager)
        return manager

    yield make
    for manager in made:
        jp_asyncio_loop.run_until_complete(manager.close_all())
        # Reaping of sessions whose shell exited by itself runs on threads; let it finish.
        if manager._reaping:
            jp_asyncio_loop.run_until_complete(_drain(manager))


async def _drain(manager: PtyManager) -> None:
    import asyncio

    await asyncio.gather(*manager._reaping, return_exceptions=True)


@pytest.fixture
def manager(make_manager: Callable[..., PtyManager]) -> PtyManager:
    return make_manager()


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder at the front of PATH (sessions inherit it) for fake programs."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return folder
