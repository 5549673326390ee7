"""Fixtures the API tests of several service areas share."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.services.pty.conftest import SHELL_ENVIRONMENT
from tests.services.pty.helpers import write_rc_files

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def server_shell_home(jp_home_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test server's HOME holds the user's rc files, and the developer's own shell
    settings are out of the environment: the server's terminals start as a user's would."""
    write_rc_files(jp_home_dir)
    for name in SHELL_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
