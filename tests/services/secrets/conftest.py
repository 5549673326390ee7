"""Fixtures for the keys service: a fake OS keychain, restored afterwards."""

from __future__ import annotations

from typing import TYPE_CHECKING

import keyring
import pytest

from .helpers import MemoryKeyring

if TYPE_CHECKING:
    from collections.abc import Iterator


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
