"""The providers Terax knows: built-ins, an administrator's additions, and a user's own."""

from __future__ import annotations

import builtins
import dataclasses
import json
import logging
import re
import threading
import unicodedata
from typing import TYPE_CHECKING, Any, Literal

import httpx

from terax_jupyter.exceptions import (
    AccessDenied,
    InvalidRequest,
    NotFound,
    TeraxError,
)
from terax_jupyter.security.network import DEFAULT_PORTS, HOP_BY_HOP, check_url
from terax_jupyter.security.storage import read_private_json, write_private_file
from terax_jupyter.services.ai.providers.base import ProviderConfig
from terax_jupyter.services.secrets.manager import PROVIDER_KEYS, check_name

if TYPE_CHECKING:
    from collections.abc import Mapping

    from terax_jupyter.security.audit import AuditLog

ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9_.-]{0,39}", re.ASCII)
KINDS = ("openai", "anthropic")
FIELDS = frozenset({"label", "kind", "base_url", "key_name", "local", "product", "headers"})
# What a user may change of a built-in: where it lives. Its key name and format stay.
BUILTIN_USER_FIELDS = frozenset({"base_url", "local"})
# What a providers file that is not JSON raises (it is never overwritten).
_CORRUPT = "{path} is not a providers file; move it away to start over."
MAX_URL = 2048
MAX_HEADERS = 16
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}", re.ASCII)
# Keys belong in the key store (redacted, never in a plain settings file or the audit).
_CREDENTIAL = re.compile(r"auth|key|token|secret|cookie|session|signature|password", re.I)

BUILTINS: dict[str, ProviderConfig] = {
    c.id: c
    for c in (
        ProviderConfig("openai", "OpenAI", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
        ProviderConfig(
            "anthropic",
            "Anthropic",
            "anthropic",
            "https://api.anthropic.com/v1",
            "ANTHROPIC_API_KEY",
        ),
        ProviderConfig("groq", "Groq", "openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        ProviderConfig("xai", "xAI", "openai", "https://api.x.ai/v1", "XAI_API_KEY"),
        ProviderConfig(
            "cerebras", "Cerebras", "openai", "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"
        ),
        ProviderConfig(
            "openrouter",
            "OpenRouter",
            "openai",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            headers=(("X-Title", "Terax"),),  # how OpenRouter names the app in its activity
        ),
        ProviderConfig(
            "deepseek", "DeepSeek", "openai", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"
        ),
        ProviderConfig(
            "mistral", "Mistral", "openai", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"
        ),
        ProviderConfig(
            "gemini",
            "Google Gemini",
            "openai",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            "GEMINI_API_KEY",
        ),
        ProviderConfig(
            "ollama", "Ollama", "openai", "http://127.0.0.1:11434/v1", local=True, product="Ollama"
        ),
        ProviderConfig(
            "lmstudio",
            "LM Studio",
            "openai",
            "http://127.0.0.1:1234/v1",
            local=True,
            product="LM Studio",
        ),
        ProviderConfig(
            "mlx",
            "MLX",
            "openai",
            "http://127.0.0.1:8080/v1",
            local=True,
            product="the MLX server",
        ),
    )
}

log = logging.getLogger(__name__)


class ProviderCatalog:
    """Every configured provider, by id.

    Built-ins come first; ``admin_providers`` (traitlets config, ``{id: fields}``) change a
    built-in or add providers, and users cannot change those. A user's entries, kept in a
    private file, add custom providers or move a built-in (``base_url``, ``local``). Changes
    are audited as ``ai.provider.set`` / ``ai.provider.deleted``.
    """

    def __init__(
        self,
        admin_providers: Mapping[str, Mapping[str, Any]] | None,
        store_path: str | None,
        audit: AuditLog | None = None,
        *,
        logger: logging.Logger | None = None,
    ) -> None:
        self._store_path = store_path
        self._audit = audit
        self._log = logger or log
        self._lock = threading.Lock()
        self._user: dict[str, dict[str, Any]] | None = None
        self.problems: builtins.list[str] = []
        self._admin: dict[str, ProviderConfig] = {}
        for provider_id, fields in (admin_providers or {}).items():
            # A broken entry must not take the server down with it: it is left out and said.
            try:
                self._admin[provider_id] = _build(provider_id, fields, "config")
            except TeraxError as error:
                problem = f"The provider {provider_id!r} in the configuration is ignored: "
                self.problems.append(problem + error.message)
                self._log.warning("%s%s", problem, error.message)

    # -- reading ----------------------------------------------------------------------------

    def list(self) -> builtins.list[ProviderConfig]:
        """Built-ins in their order, then the administrator's, then the user's providers."""
        with self._lock:
            user = self._user_entries()
        ids = [*BUILTINS, *(i for i in self._admin if i not in BUILTINS)]
        ids += sorted(i for i in user if i not in ids)
        found = (self._effective(i, user) for i in ids)
        return [config for config in found if config is not None]

    def get(self, provider_id: str) -> ProviderConfig:
        check_id(provider_id)
        with self._lock:
            config = self._effective(provider_id, self._user_entries())
        if config is None:
            raise NotFound(f"No provider named {provider_id}.", reason="provider_not_found")
        return config

    def key_origins(self, name: str) -> frozenset[str]:
        """Where a key of the configuration or the environment named ``name`` may be sent:
        the origins of the built-ins and the administrator's providers that use it. A
        user's changes never add one (a user-moved or user-defined provider gets only the
        user's own keys)."""
        configs = [self._admin.get(i, BUILTINS.get(i)) for i in {*BUILTINS, *self._admin}]
        return frozenset(
            origin_of(config.base_url)
            for config in configs
            if config is not None and name in key_names(config)
        )

    def _effective(
        self, provider_id: str, user: dict[str, dict[str, Any]]
    ) -> ProviderConfig | None:
        if provider_id in self._admin:
            return self._admin[provider_id]
        fields = user.get(provider_id)
        if provider_id in BUILTINS:
            if fields is None:
                return BUILTINS[provider_id]
            return dataclasses.replace(BUILTINS[provider_id], **fields, source="user")
        if fields is None:
            return None
        return _build(provider_id, fields, "user")

    # -- changing ---------------------------------------------------------------------------

    def put(self, provider_id: str, fields: Mapping[str, Any], user: str | None) -> ProviderConfig:
        """Set the user's entry for ``provider_id`` (replacing an earlier one)."""
        check_id(provider_id)
        if not isinstance(fields, dict):
            raise InvalidRequest("The provider's fields must be an object.")
        if provider_id in self._admin:
            raise AccessDenied(
                f"The provider {provider_id} is set by the administrator and cannot be changed "
                "here.",
                reason="provider_locked",
            )
        if provider_id in BUILTINS:
            extra = sorted(set(fields) - BUILTIN_USER_FIELDS)
            if extra:
                raise InvalidRequest(
                    f"Of the built-in provider {provider_id}, only base_url and local can be "
                    f"changed, not {', '.join(_names(extra))}.",
                    reason="invalid_provider",
                )
            stored = _check_fields(fields)
            config = dataclasses.replace(BUILTINS[provider_id], **stored, source="user")
        else:
            stored = _check_fields(fields)
            config = _build(provider_id, _stored_form(stored), "user")
        with self._lock:
            entries = dict(self._user_entries())
            entries[provider_id] = _stored_form(stored)
            self._save(entries)
        if self._audit is not None:
            self._audit.record(
                "ai.provider.set", user=user, provider=provider_id, fields=_stored_form(stored)
            )
        return config

    def delete(self, provider_id: str, user: str | None) -> ProviderConfig | None:
        """Remove the user's entry: a custom provider goes, a built-in returns to its
        defaults (returned); only user entries can be deleted."""
        check_id(provider_id)
        with self._lock:
            entries = dict(self._user_entries())
            if provider_id in self._admin:
                raise AccessDenied(
                    f"The provider {provider_id} is set by the administrator and cannot be "
                    "deleted here.",
                    reason="provider_locked",
                )
            if provider_id not in entries:
                if provider_id in BUILTINS:
                    raise NotFound(
                        f"The built-in provider {provider_id} has no settings of yours to delete.",
                        reason="no_user_settings",
                    )
                raise NotFound(f"No provider named {provider_id}.", reason="provider_not_found")
            del entries[provider_id]
            self._save(entries)
        if self._audit is not None:
            self._audit.record("ai.provider.deleted", user=user, provider=provider_id)
        return BUILTINS.get(provider_id)

    # -- the store --------------------------------------------------------------------------

    def _user_entries(self) -> dict[str, dict[str, Any]]:
        """The stored entries (read once); entries that no longer pass the rules are left
        out (the file may have been edited by hand)."""
        if self._user is not None:
            return self._user
        entries: dict[str, dict[str, Any]] = {}
        data = read_private_json(self._store_path, _CORRUPT, reason="providers_store_corrupt")
        stored = data.get("providers") if isinstance(data, dict) else None
        for provider_id, fields in (stored if isinstance(stored, dict) else {}).items():
            try:
                check_id(provider_id)
                if provider_id in BUILTINS and set(fields) - BUILTIN_USER_FIELDS:
                    raise InvalidRequest("changes more than base_url and local")
                checked = _check_fields(fields)
                if provider_id not in BUILTINS:
                    _build(provider_id, _stored_form(checked), "user")
            except (TeraxError, TypeError, AttributeError) as error:
                self._log.warning("Ignoring the stored provider %r: %s", provider_id, error)
                continue
            entries[provider_id] = _stored_form(checked)
        self._user = entries
        return entries

    def _save(self, entries: dict[str, dict[str, Any]]) -> None:
        if self._store_path:
            data = {"version": 1, "providers": {k: _stored_form(v) for k, v in entries.items()}}
            write_private_file(self._store_path, json.dumps(data, indent=2, sort_keys=True))
        self._user = entries


def check_id(provider_id: Any) -> str:
    if not isinstance(provider_id, str) or not ID_PATTERN.fullmatch(provider_id):
        raise InvalidRequest(
            "A provider id is 1 to 40 lower-case letters, digits, '_', '.' or '-', starting "
            "with a letter or digit.",
            reason="invalid_provider_id",
        )
    return provider_id


def key_names(config: ProviderConfig) -> tuple[str, ...]:
    """The key names a provider's key is read from, in order: its ``key_name``, and for a
    built-in's usual name the others it is known by (Gemini: GOOGLE_API_KEY too)."""
    if not config.key_name:
        return ()
    known = PROVIDER_KEYS.get(config.id, ())
    if config.key_name in known:
        return (config.key_name, *(name for name in known if name != config.key_name))
    return (config.key_name,)


def origin_of(base_url: str) -> str:
    """``scheme://host:port`` of a URL, with the default port written out."""
    url = httpx.URL(base_url)
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{url.scheme}://{host}:{url.port or DEFAULT_PORTS[url.scheme]}"


def _build(
    provider_id: str, fields: Mapping[str, Any], source: Literal["config", "user"]
) -> ProviderConfig:
    """A provider from checked or unchecked fields: a built-in changed, or a new one."""
    check_id(provider_id)
    if not isinstance(fields, dict):
        raise InvalidRequest("The provider's fields must be an object.")
    checked = _check_fields(fields)
    base = BUILTINS.get(provider_id)
    if base is not None:
        return dataclasses.replace(base, **checked, source=source)
    missing = [name for name in ("kind", "base_url") if name not in checked]
    if missing:
        raise InvalidRequest(
            f"A new provider needs {' and '.join(missing)}.", reason="invalid_provider"
        )
    checked.setdefault("label", provider_id)
    return ProviderConfig(id=provider_id, source=source, **checked)


def _check_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields, validated and normalized (``headers`` as a tuple of pairs)."""
    unknown = sorted(set(fields) - FIELDS)
    if unknown:
        raise InvalidRequest(
            f"Unknown provider fields: {', '.join(_names(unknown))}; known: "
            f"{', '.join(sorted(FIELDS))}.",
            reason="invalid_provider",
        )
    checked: dict[str, Any] = {}
    for name, value in fields.items():
        if name == "kind":
            if value not in KINDS:
                raise InvalidRequest(
                    "kind is 'openai' (chat completions) or 'anthropic' (messages).",
                    reason="invalid_provider",
                )
            checked[name] = value
        elif name == "base_url":
            checked[name] = _check_base_url(value)
        elif name == "key_name":
            checked[name] = None if value is None else check_name(value)
        elif name == "local":
            if not isinstance(value, bool):
                raise InvalidRequest("local is true or false.", reason="invalid_provider")
            checked[name] = value
        elif name in ("label", "product"):
            if value is None and name == "product":
                checked[name] = None
            else:
                checked[name] = _check_text(name, value)
        elif name == "headers":
            checked[name] = _check_headers(value)
    return checked


def _check_base_url(value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_URL:
        raise InvalidRequest("base_url is an http(s) URL.", reason="invalid_url")
    url = check_url(value.strip())  # http(s), a host, no userinfo, no control bytes
    if url.query or url.fragment:
        raise InvalidRequest(
            "base_url takes no query or fragment (paths are added to it).", reason="invalid_url"
        )
    return str(url).rstrip("/")


def _check_text(name: str, value: Any) -> str:
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > 64
        or any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in value)
    ):
        raise InvalidRequest(
            f"{name} is 1 to 64 characters without control characters.",
            reason="invalid_provider",
        )
    return value.strip()


def _check_headers(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or len(value) > MAX_HEADERS:
        raise InvalidRequest(
            f"headers is an object of at most {MAX_HEADERS} names and values.",
            reason="invalid_provider",
        )
    pairs = []
    for name, text in value.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise InvalidRequest(
                "A header name is 1 to 64 token characters.", reason="invalid_header"
            )
        lowered = name.lower()
        if (
            lowered in HOP_BY_HOP
            or lowered in ("host", "content-length")
            or lowered.startswith("proxy-")
        ):
            raise InvalidRequest(f"The header {name} cannot be set.", reason="invalid_header")
        if _CREDENTIAL.search(name):
            raise InvalidRequest(
                f"The header {name} looks like it carries a credential: store keys in Terax "
                "settings and name them with key_name.",
                reason="invalid_header",
            )
        if (
            not isinstance(text, str)
            or len(text) > 1024
            or any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in text)
        ):
            raise InvalidRequest(
                f"The value of {name} is at most 1024 characters without control characters.",
                reason="invalid_header",
            )
        pairs.append((name, text))
    return tuple(pairs)


def _stored_form(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Checked fields as JSON (headers back to an object)."""
    data = dict(fields)
    if "headers" in data:
        data["headers"] = dict(data["headers"])
    return data


def _names(names: builtins.list[Any]) -> builtins.list[str]:
    # Names a client sent are echoed only when they are plainly names.
    return [n if isinstance(n, str) and _TOKEN.fullmatch(n) else "(unnamed)" for n in names]
