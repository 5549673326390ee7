"""Fixtures for the keys service: managers over a private folder, a fake OS keychain."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import keyring
import pytest

from terax_jupyter.security import SecurityLayer
from terax_jupyter.services.secrets.manager import SecretsManager

from .helpers import MemoryKeyring

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path


@pytest.fixture
def security(tmp_path: Path) -> SecurityLayer:
    (tmp_path / "root").mkdir()
    return SecurityLayer.build(str(tmp_path / "root"), str(tmp_path / "state"))


@pytest.fixture
def make(security: SecurityLayer, tmp_path: Path) -> Callable[..., SecretsManager]:
    """``make(**traits)``: a SecretsManager with the file store (unless a test says)."""

    def build(**traits: Any) -> SecretsManager:
        traits.setdefault("backend", "file")
        # The logger from the start: the administrator's key file is read in the constructor.
        traits.setdefault("log", logging.getLogger("test.secrets"))
        return SecretsManager(security, str(tmp_path / "state"), **traits)

    return build


@pytest.fixture
def restore_keyring() -> Iterator[None]:
    """Whatever a test sets as keyring's backend is undone afterwards."""
    before = keyring.get_keyring()
    yield
    keyring.set_keyring(before)


@pytest.fixture
def memory_keyring(restore_keyring: None) -> MemoryKeyring:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    return backend
