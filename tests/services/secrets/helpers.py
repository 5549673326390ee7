"""Helpers of the keys tests: a fake OS keychain, and the test key that must never leak."""

from __future__ import annotations

from typing import Any

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

# The key every test sets and then looks for everywhere it must not be.
KEY = "sk-test-terax-0123456789abcdef"


class MemoryKeyring(KeyringBackend):
    """An in-memory keychain, standing in for macOS Keychain / Secret Service."""

    priority = 5  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}
        self.fail_with: Exception | None = None

    def get_password(self, service: str, username: str) -> str | None:
        self._maybe_fail()
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._maybe_fail()
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self._maybe_fail()
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError(username)

    def _maybe_fail(self) -> None:
        if self.fail_with is not None:
            raise self.fail_with


def unregister(backend_class: type[KeyringBackend]) -> None:
    """Keep a test backend out of keyring's own discovery (every subclass registers itself)."""
    KeyringBackend._classes.discard(backend_class)  # type: ignore[attr-defined]


unregister(MemoryKeyring)


def assert_key_not_in_file(path: str) -> None:
    with open(path, encoding="utf-8") as handle:
        assert KEY not in handle.read()


def assert_no_key(*texts: Any) -> None:
    for text in texts:
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        assert KEY not in str(text)
