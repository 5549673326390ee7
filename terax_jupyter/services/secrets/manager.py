"""SecretsManager: provider keys from the user's store, admin config, the administrator's key
file and the environment."""

from __future__ import annotations

import builtins
import os
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from traitlets import Bool, Dict, Enum, List, Unicode
from traitlets.config import LoggingConfigurable

from terax_jupyter.exceptions import (
    Conflict,
    InvalidRequest,
    NotFound,
    TeraxError,
    TooLarge,
    Unavailable,
)
from terax_jupyter.services.secrets.environment import without_keys
from terax_jupyter.services.secrets.guard import KeyStoreGuard
from terax_jupyter.services.secrets.startup import (
    FILE_VARIABLE,
    make_undumpable,
    read_admin_keys,
    remove_file,
    remove_from_environment,
    world_readable,
)
from terax_jupyter.services.secrets.store import FileStore, KeyringStore, SecretStore, real_keyring

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from terax_jupyter.security import SecurityLayer

T = TypeVar("T")

Source = Literal["keyring", "file", "environment", "config", "admin_file"]

# Provider -> the environment variables its key is read from, in the order they are tried.
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
KNOWN_KEYS: dict[str, str] = {
    name: provider for provider, names in PROVIDER_KEYS.items() for name in names
}

NAME_PATTERN = re.compile(r"[A-Za-z0-9_.\-]{1,64}", re.ASCII)
MAX_VALUE_BYTES = 8 * 1024
# Control characters, format characters (zero-width, bidi), line and paragraph separators,
# lone surrogates: never part of a key, and a line break in one could forge a header.
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_READ_ONLY: tuple[Source, ...] = ("config", "admin_file", "environment")
_DESCRIBED = {
    "config": "server configuration (SecretsManager.keys)",
    "admin_file": "administrator's key file (SecretsManager.admin_keys_file)",
    "environment": "environment",
}


@dataclass(frozen=True)
class FoundKey:
    """A key's value and where it came from. ``user`` keys are the user's own (their
    keychain or key file); the others are the administrator's (``SecretsManager.keys``,
    the administrator's key file) or the server's environment, and go only to the address
    they were configured for."""

    name: str
    source: Source
    # Never in a repr: a FoundKey in a traceback or a log line must not carry the value.
    value: str = field(repr=False)

    @property
    def user(self) -> bool:
        return self.source not in _READ_ONLY


class SecretsManager(LoggingConfigurable):
    """The keys the AI layer uses, and the API that says which are set (never what they are).

    Sources, by precedence for one name: the user's own store (OS keychain, else a 0600
    file), then the admin's ``SecretsManager.keys``, then the admin's key file
    (``admin_keys_file``, read once at start), then the environment (read at start, then
    removed from it unless ``strip_environment_keys`` is off). The last three are read-only
    here. A key the user sets takes precedence over the others for that user; deleting it
    brings the preconfigured one back.
    """

    keys = Dict(
        key_trait=Unicode(),
        value_trait=Unicode(),
        help=(
            "Keys an administrator preconfigures, by name (OPENAI_API_KEY, ...). Read-only for "
            "users, who may set their own key of the same name to use instead."
        ),
    ).tag(config=True)
    admin_keys_file = Unicode(
        "",
        help=(
            "A file of the administrator's keys, read once when the server starts: a JSON "
            "object of name to key, or NAME=value lines (OPENAI_API_KEY=...). Keeps keys out "
            "of the environment that kernels and terminals inherit, and out of the spawner's "
            "arguments. Empty: the path in the TERAX_ADMIN_KEYS_FILE environment variable, "
            "if set. A file that cannot be read or has an unusable entry gives no key (an "
            "error in the log). Read-only for users, like SecretsManager.keys."
        ),
    ).tag(config=True)
    remove_admin_keys_file = Bool(
        False,
        help=(
            "Delete the administrator's key file once it is read at start. Every kernel and "
            "terminal of the user is started by the server later, so none can open it: with "
            "a per-user copy the spawner writes (a pre_spawn_hook, or a Kubernetes init "
            "container copying a secret into an emptyDir), no process of the user ever sees "
            "the file. A file that cannot be deleted is an error in the log."
        ),
    ).tag(config=True)
    strip_environment_keys = Bool(
        True,
        help=(
            "Remove the provider key variables (environment_names and the providers' usual "
            "names) and TERAX_ADMIN_KEYS_FILE from the server's environment once read at "
            "start, so that kernels, Lab's terminals and Terax's terminals started later do "
            "not inherit them. The server keeps the keys for its providers. False: kernels "
            "and Lab's terminals inherit them as before (Terax's terminals never do)."
        ),
    ).tag(config=True)
    protect_memory = Bool(
        False,
        help=(
            "Mark the server's process not dumpable at start (Linux), so that a kernel or "
            "terminal of the same Unix user cannot read the administrator's keys out of "
            "the server's memory or /proc/<pid>/environ. Also stops debuggers, py-spy and "
            "core dumps for the server process. Recommended on JupyterHub with admin keys."
        ),
    ).tag(config=True)
    environment_names = List(
        Unicode(),
        default_value=list(KNOWN_KEYS),
        help="Environment variables read as read-only keys (the providers' usual names).",
    ).tag(config=True)
    backend = Enum(
        ["auto", "keyring", "file"],
        default_value="auto",
        help=(
            "Where keys users set are kept. auto: the OS keychain when there is a real one, "
            "else a 0600 file in the Terax data dir; keyring: the keychain or nothing; file."
        ),
    ).tag(config=True)
    keyring_service = Unicode(
        "terax-jupyter", help="The keychain service name the keys are stored under."
    ).tag(config=True)

    def __init__(self, security: SecurityLayer, state_dir: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._redactor = security.redactor
        self._audit = security.audit
        self.file_path = os.path.join(state_dir, "secrets.json")
        self._store: SecretStore | None = None
        self._store_lock = threading.Lock()
        self._warned: set[tuple[str, str]] = set()
        self._file_keys = self._load_admin_keys_file()
        # The environment's keys as the server started, kept here once they are removed.
        self._started_with: dict[str, str] = {}
        self._started_with = self._environment_keys()
        if self.strip_environment_keys:
            # After reading them: what kernels and terminals started later inherit.
            hidden = [*KNOWN_KEYS, *self.environment_names, FILE_VARIABLE]
            removed = remove_from_environment(dict.fromkeys(hidden))
            if removed:
                self.log.info(
                    "Terax removed %s from the server's environment: kernels and terminals "
                    "do not inherit them (the server keeps them for their providers).",
                    ", ".join(removed),
                )
        if self.protect_memory:
            if make_undumpable():
                self.log.info(
                    "Terax marked the server not dumpable: processes of this user cannot "
                    "read its memory or environment."
                )
            else:
                self.log.warning(
                    "SecretsManager.protect_memory is set, but this system cannot mark the "
                    "server not dumpable (prctl is Linux only)."
                )
        # Values that exist from the start are redacted from the start.
        for value in self._server_key_values():
            self._redactor.add_secret(value)

    # -- the API --------------------------------------------------------------------------

    def overview(self) -> dict[str, Any]:
        """Every known or set key (name, source, no value) and where user keys are kept.

        A store that cannot be read (an insecure file, a failing keychain) does not hide
        the read-only keys: its problem is reported beside them.
        """
        problem = None
        store_info: dict[str, Any] = {"kind": None}
        try:
            store = self.store
            store_info = store.describe()
            user_names = set(self._call(store.names))
        except TeraxError as error:
            problem = self._redactor.redact(error.message)
            user_names = set()
        layers = self._read_only_names()
        names = set(KNOWN_KEYS) | user_names | {n for _, found in layers for n in found}
        # None only where the store failed, and then no name is the user's.
        user_source = cast("str", store_info.get("kind"))
        entries = []
        for name in sorted(names):
            sources = [user_source] if name in user_names else []
            sources += [source for source, found in layers if name in found]
            entries.append(_entry(name, sources))
        return {"keys": entries, "store": {**store_info, "problem": problem}}

    def list(self) -> builtins.list[dict[str, Any]]:
        """``[{name, set, source, read_only, provider, overrides}]``; never a value."""
        keys: builtins.list[dict[str, Any]] = self.overview()["keys"]
        return keys

    def entry(self, name: str) -> dict[str, Any]:
        name = check_name(name)
        store = self.store
        sources: list[str] = [store.kind] if self._call(store.get, name) is not None else []
        sources += [source for source, found in self._read_only_names() if name in found]
        return _entry(name, sources)

    def set(self, name: str, value: Any, *, user: str | None = None) -> dict[str, Any]:
        """Store a key of the user's own (it takes precedence over config and environment)."""
        name = check_name(name)
        check_value(value)
        self._redactor.add_secret(value)
        store = self.store
        self._call(store.set, name, value)
        self._audit.record("secrets.key_set", user=user, name=name, store=store.kind)
        return self.entry(name)

    def delete(self, name: str, *, user: str | None = None) -> dict[str, Any]:
        """Remove the user's key; a key from config or the environment is 409 ``read_only_key``."""
        name = check_name(name)
        store = self.store
        if not self._call(store.delete, name):
            read_only = [source for source, found in self._read_only_names() if name in found]
            if read_only:
                raise Conflict(
                    f"{name} comes from the {_DESCRIBED[read_only[0]]} and cannot be deleted "
                    "here; an administrator changes it where the server is started.",
                    reason="read_only_key",
                )
            raise NotFound(f"No key named {name} is set.", reason="key_not_found")
        self._audit.record("secrets.key_deleted", user=user, name=name, store=store.kind)
        return self.entry(name)

    def get(self, name: str) -> str | None:
        """The value of a key, by precedence, for server-side use only (the AI layer).

        The value is registered with the redactor before it is returned, so it cannot
        appear in a log line, an error message or the audit afterwards.
        """
        found = self.find(name)
        return found.value if found is not None else None

    def find(self, name: str) -> FoundKey | None:
        """The key ``name`` by precedence, with its source (the AI layer sends a key that
        is not the user's own only to the address it was configured for).

        Like ``get``, the value is registered with the redactor first.
        """
        name = check_name(name)
        found: FoundKey | None = None
        value = self._call(self.store.get, name)
        if value is not None:
            found = FoundKey(name, cast("Source", self.store.kind), value)
        else:
            layers: tuple[tuple[Source, Mapping[str, str]], ...] = (
                ("config", self._config_keys()),
                ("admin_file", self._file_keys),
                ("environment", self._environment_keys()),
            )
            for source, keys in layers:
                if name in keys:
                    found = FoundKey(name, source, keys[name])
                    break
        if found is not None:
            self._redactor.add_secret(found.value)
        return found

    def key_for_provider(self, provider: str) -> str | None:
        """The key of a known provider (``"gemini"`` tries GEMINI_API_KEY, then GOOGLE_API_KEY)."""
        for name in PROVIDER_KEYS.get(provider, ()):
            value = self.get(name)
            if value is not None:
                return value
        return None

    # -- what processes the server starts may see -------------------------------------------

    def without_server_keys(self, environ: Mapping[str, str]) -> dict[str, str]:
        """``environ`` without the provider key variables (the known names and
        ``environment_names``) and without any variable holding a key of the configuration
        or the environment: what a user's terminal inherits."""
        values = self._server_key_values()
        return without_keys(environ, {*KNOWN_KEYS, *self.environment_names}, values)

    @property
    def command_guard(self) -> KeyStoreGuard:
        """Refuses agent commands that name the key file, its folder, a process's
        environment or Terax's keychain entries (bypassable: see ``KeyStoreGuard``)."""
        return KeyStoreGuard(self.file_path, self.keyring_service)

    # -- sources --------------------------------------------------------------------------

    @property
    def store(self) -> SecretStore:
        """The user's store, chosen on first use (finding a keychain may block: call it in
        a worker thread)."""
        with self._store_lock:
            if self._store is None:
                self._store = self._choose_store()
            return self._store

    def _choose_store(self) -> SecretStore:
        if self.backend != "file":
            backend = real_keyring()
            if backend is not None:
                self.log.info("Terax keeps keys in the OS keychain (%s).", type(backend).__name__)
                return KeyringStore(backend, self.keyring_service)
            if self.backend == "keyring":
                raise Unavailable(
                    "SecretsManager.backend is 'keyring', but this system has no usable OS "
                    "keychain (keyring offers only a failing, empty or plain-text backend).",
                    reason="no_keychain",
                )
        self.log.info("Terax keeps keys in %s (mode 0600): no OS keychain here.", self.file_path)
        return FileStore(self.file_path)

    def _config_keys(self) -> dict[str, str]:
        return {
            name: value
            for name, value in self.keys.items()
            if self._usable(name, value, "SecretsManager.keys")
        }

    def _load_admin_keys_file(self) -> dict[str, str]:
        """The administrator's key file, read once: all its keys, or none and an error in
        the log (a server that starts without the admin's keys says why; it never stops)."""
        path = self.admin_keys_file or os.environ.get(FILE_VARIABLE, "")
        if not path:
            return {}
        try:
            keys = read_admin_keys(path, check_name, check_value)
        except TeraxError as error:
            self.log.error("%s", error.message)
            self._remove_admin_keys_file(path)  # an unusable file may still hold keys
            return {}
        if world_readable(path):
            self.log.warning(
                "The administrator's key file %s can be read by every user of this system; "
                "make it readable by the server's user only (chmod 0400; for a Kubernetes "
                "secret defaultMode 0440 with the pod's fsGroup).",
                path,
            )
        self.log.info("Terax read %d administrator's key(s) from %s.", len(keys), path)
        self._remove_admin_keys_file(path)
        return keys

    def _remove_admin_keys_file(self, path: str) -> None:
        if not self.remove_admin_keys_file:
            return
        problem = remove_file(path)
        if problem is not None:
            self.log.error(
                "The administrator's key file %s could not be deleted after it was read (%s): "
                "processes of this user can still open it.",
                path,
                problem,
            )

    def _server_key_values(self) -> builtins.list[str]:
        return [
            *self._config_keys().values(),
            *self._file_keys.values(),
            *self._environment_keys().values(),
        ]

    def _environment_keys(self) -> dict[str, str]:
        # The keys the server started with (removed from os.environ since), then whatever
        # the environment holds now (a variable set later in this process).
        found = dict(self._started_with)
        for name in self.environment_names:
            value = os.environ.get(name)
            if value and self._usable(name, value, "the environment"):
                found[name] = value
        return found

    def _read_only_names(self) -> builtins.list[tuple[Source, builtins.set[str]]]:
        return [
            ("config", set(self._config_keys())),
            ("admin_file", set(self._file_keys)),
            ("environment", set(self._environment_keys())),
        ]

    def _usable(self, name: str, value: str, where: str) -> bool:
        try:
            check_name(name)
            check_value(value)
        except TeraxError as error:
            label = name if NAME_PATTERN.fullmatch(name) else "an entry"
            if (label, where) in self._warned:
                return False
            self._warned.add((label, where))
            self.log.warning("Ignoring the key %s from %s: %s", label, where, error.message)
            return False
        return True

    def _call(self, operation: Callable[..., T], *args: Any) -> T:
        """A store operation; a failure of the store's own becomes 503 without its details.

        Whatever a keychain library puts in an exception (it may echo its arguments) goes
        to the server log only after redaction, and never to the client.
        """
        try:
            return operation(*args)
        except TeraxError:
            raise
        except Exception as error:
            kind = self._store.kind if self._store is not None else "store"
            self.log.warning(
                "The key store (%s) failed: %s",
                kind,
                self._redactor.redact(f"{type(error).__name__}: {error}"),
            )
            raise Unavailable(
                f"The key store ({kind}) failed ({type(error).__name__}); the server log has "
                "the details.",
                reason="secrets_store_failed",
            ) from None


def check_name(name: Any) -> str:
    """A key name: 1 to 64 of ``A-Z a-z 0-9 _ . -``, not only dots. Never echoed back."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or not name.strip("."):
        raise InvalidRequest(
            "A key name is 1 to 64 letters, digits, '_', '.' or '-' (not only dots).",
            reason="invalid_key_name",
        )
    return name


def check_value(value: Any) -> str:
    """A key value: a non-empty string of at most 8 KiB, without control characters or
    surrounding spaces. The messages never include the value."""
    if not isinstance(value, str):
        raise InvalidRequest("'value' must be a string.", reason="invalid_key_value")
    if not value:
        raise InvalidRequest("The key is empty.", reason="invalid_key_value")
    if len(value) > MAX_VALUE_BYTES:
        raise TooLarge("A key is at most 8 KiB.", reason="key_too_large")
    if any(unicodedata.category(char) in _BAD_CATEGORIES for char in value):
        raise InvalidRequest(
            "The key contains a line break or another control character; paste it again "
            "without them.",
            reason="invalid_key_value",
        )
    if value != value.strip():
        raise InvalidRequest(
            "The key starts or ends with a space; paste it again without them.",
            reason="invalid_key_value",
        )
    if len(value.encode("utf-8")) > MAX_VALUE_BYTES:
        raise TooLarge("A key is at most 8 KiB.", reason="key_too_large")
    return value


def _entry(name: str, sources: list[str]) -> dict[str, Any]:
    source = sources[0] if sources else None
    return {
        "name": name,
        "set": bool(sources),
        "source": source,
        "read_only": source in _READ_ONLY,
        "provider": KNOWN_KEYS.get(name),
        "overrides": sources[1:],
    }
