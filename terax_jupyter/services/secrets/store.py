"""Where user-set keys live: the OS keychain through keyring, or a private 0600 JSON file."""

from __future__ import annotations

import abc
import json
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, ClassVar

from terax_jupyter.exceptions import Unavailable
from terax_jupyter.security.storage import read_private_json, write_private_file

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

# Backends that store nothing, fail everything, or keep secrets in plain text. keyring picks
# one of them when the OS has no keychain (a container, a server without a desktop session).
REFUSED_BACKEND_MODULES = (
    "keyring.backends.fail",
    "keyring.backends.null",
    "keyring.backends.chainer",
    "keyrings.alt",
)

FILE_FORMAT = 1


class SecretStore(abc.ABC):
    """A place user keys are kept. Values go in and out only through ``get`` and ``set``."""

    kind: ClassVar[str] = "store"

    @abc.abstractmethod
    def names(self) -> list[str]: ...

    @abc.abstractmethod
    def get(self, name: str) -> str | None: ...

    @abc.abstractmethod
    def set(self, name: str, value: str) -> None: ...

    @abc.abstractmethod
    def delete(self, name: str) -> bool:
        """Remove ``name``; whether it was there."""
        ...

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind}


class FileStore(SecretStore):
    """``{"version": 1, "keys": {name: value}}`` in a 0600 file, replaced atomically on change.

    The file is read on every call, so a ``chmod`` or a hand edit is seen at once, and a file
    that group or others may read is refused (see ``read_private_file``), not repaired.
    """

    kind = "file"

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        return sorted(self._read())

    def get(self, name: str) -> str | None:
        return self._read().get(name)

    def set(self, name: str, value: str) -> None:
        with self._lock:
            keys = self._read()
            keys[name] = value
            self._write(keys)

    def delete(self, name: str) -> bool:
        with self._lock:
            keys = self._read()
            if keys.pop(name, None) is None:
                return False
            self._write(keys)
            return True

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path}

    def _read(self) -> dict[str, str]:
        corrupt = "{path} is not a Terax key file; move it away to start a new one."
        data = read_private_json(
            self.path, corrupt, reason="secrets_store_corrupt", missing={"keys": {}}
        )
        keys = data.get("keys") if isinstance(data, dict) else None
        if not isinstance(keys, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in keys.items()
        ):
            # Never overwritten: the keys in it would be lost.
            raise Unavailable(corrupt.format(path=self.path), reason="secrets_store_corrupt")
        return dict(keys)

    def _write(self, keys: dict[str, str]) -> None:
        write_private_file(
            self.path, json.dumps({"version": FILE_FORMAT, "keys": keys}, indent=2, sort_keys=True)
        )


class KeyringStore(SecretStore):
    """Keys in the OS keychain (macOS Keychain, Windows Credential Locker, Secret Service).

    A keychain cannot list its entries, so the names (never the values) are kept in one
    more entry, ``<service>-index``.
    """

    kind = "keyring"

    def __init__(self, backend: KeyringBackend, service: str) -> None:
        self.backend = backend
        self.service = service
        self._index_service = f"{service}-index"
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        # An entry removed with the OS's own tools is gone from the listing too.
        return [name for name in self._index() if self.get(name) is not None]

    def get(self, name: str) -> str | None:
        value = self.backend.get_password(self.service, name)
        return value if isinstance(value, str) else None

    def set(self, name: str, value: str) -> None:
        with self._lock:
            self.backend.set_password(self.service, name, value)
            names = self._index()
            if name not in names:
                self._save_index([*names, name])

    def delete(self, name: str) -> bool:
        from keyring.errors import PasswordDeleteError

        with self._lock:
            existed = self.get(name) is not None
            if existed:
                try:
                    self.backend.delete_password(self.service, name)
                except PasswordDeleteError:
                    existed = False
            names = self._index()
            if name in names:
                self._save_index([n for n in names if n != name])
            return existed

    def describe(self) -> dict[str, Any]:
        backend = type(self.backend)
        return {"kind": self.kind, "backend": f"{backend.__module__}.{backend.__qualname__}"}

    def _index(self) -> list[str]:
        raw = self.backend.get_password(self._index_service, "names")
        try:
            names = json.loads(raw) if raw else []
        except ValueError:
            names = []
        return sorted({n for n in names if isinstance(n, str)}) if isinstance(names, list) else []

    def _save_index(self, names: list[str]) -> None:
        self.backend.set_password(self._index_service, "names", json.dumps(sorted(set(names))))


def real_keyring() -> KeyringBackend | None:
    """The OS keychain backend keyring would use, or None when there is no real one.

    keyring falls back to backends that fail every call, store nothing, or (keyrings.alt)
    keep plain text; none of those may hold a key. Of a chain, the best real member is used
    directly: the chain would fall back to a plain-text member when the real one fails.
    """
    if "keyring" not in sys.modules and not keychain_possible():
        return None
    try:
        import keyring
        from keyring.backends.chainer import ChainerBackend

        chosen = keyring.get_keyring()
        candidates = chosen.backends if isinstance(chosen, ChainerBackend) else [chosen]
    except Exception:  # a broken keyring install means: no keychain
        return None
    real = [backend for backend in candidates if is_real_backend(backend)]
    return max(real, key=_priority) if real else None


def keychain_possible() -> bool:
    """Whether keyring could find a real keychain here, decided without importing it.

    Asking keyring loads its Linux backends, and with them cryptography's native module: 9 MiB
    in every server that opens the AI panel, to learn that a hub's container has no keychain.
    On Linux every keychain keyring ships (Secret Service, KWallet, libsecret) is reached over
    the D-Bus session bus, so with no bus, no keyring configuration and no other package's
    backend, there is none. Anything else (another OS, a bus, a configured or third-party
    backend) is left to keyring to decide.
    """
    if not sys.platform.startswith("linux"):
        return True
    if os.environ.get("PYTHON_KEYRING_BACKEND") or os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return True
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    if os.path.exists(os.path.join(runtime_dir, "bus")):
        return True
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    if os.path.exists(os.path.join(config_home, "python_keyring", "keyringrc.cfg")):
        return True
    from importlib.metadata import entry_points

    own = "keyring.backends."
    return any(not point.value.startswith(own) for point in entry_points(group="keyring.backends"))


def is_real_backend(backend: object) -> bool:
    module = type(backend).__module__
    if any(module == name or module.startswith(name + ".") for name in REFUSED_BACKEND_MODULES):
        return False
    return _priority(backend) > 0


def _priority(backend: object) -> float:
    try:
        return float(type(backend).priority)  # type: ignore[attr-defined]
    except Exception:  # a backend that cannot say is not viable
        return 0.0
