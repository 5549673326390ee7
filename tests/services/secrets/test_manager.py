"""SecretsManager without a server: sources and precedence, validation, audit, redaction."""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import (
    Conflict,
    InvalidRequest,
    NotFound,
    TeraxError,
    TooLarge,
    Unavailable,
)
from terax_jupyter.security import SecurityLayer
from terax_jupyter.services.secrets.manager import KNOWN_KEYS, SecretsManager, check_value

from .helpers import KEY, MemoryKeyring, assert_no_key

if TYPE_CHECKING:
    from collections.abc import Callable

    Factory = Callable[..., SecretsManager]


def entry_of(manager: SecretsManager, name: str) -> dict[str, Any]:
    return next(entry for entry in manager.list() if entry["name"] == name)


def test_known_providers_are_listed_unset(make: Factory) -> None:
    overview = make().overview()
    assert [e["name"] for e in overview["keys"]] == sorted(KNOWN_KEYS)
    assert all(not e["set"] and e["source"] is None for e in overview["keys"])
    assert overview["store"]["kind"] == "file"
    assert overview["store"]["problem"] is None
    assert {e["provider"] for e in overview["keys"]} == {
        "openai", "anthropic", "groq", "xai", "cerebras", "openrouter", "deepseek", "mistral",
        "gemini",
    }  # fmt: skip


def test_set_get_delete_a_user_key(make: Factory, security: SecurityLayer) -> None:
    manager = make()
    entry = manager.set("OPENAI_API_KEY", KEY, user="alice")
    assert entry == {
        "name": "OPENAI_API_KEY",
        "set": True,
        "source": "file",
        "read_only": False,
        "provider": "openai",
        "overrides": [],
    }
    assert manager.get("OPENAI_API_KEY") == KEY
    assert manager.key_for_provider("openai") == KEY
    custom = manager.set("my-proxy.token", "custom-value-123", user="alice")
    assert custom["provider"] is None
    assert "my-proxy.token" in [e["name"] for e in manager.list()]
    assert manager.delete("OPENAI_API_KEY", user="alice")["set"] is False
    assert manager.get("OPENAI_API_KEY") is None
    with pytest.raises(NotFound) as caught:
        manager.delete("OPENAI_API_KEY")
    assert caught.value.reason == "key_not_found"
    actions = [(e["action"], e["name"], e["user"]) for e in security.audit.entries()]
    assert actions == [
        ("secrets.key_set", "OPENAI_API_KEY", "alice"),
        ("secrets.key_set", "my-proxy.token", "alice"),
        ("secrets.key_deleted", "OPENAI_API_KEY", "alice"),
    ]
    with open(security.audit.path, encoding="utf-8") as handle:
        assert_no_key(handle.read())


def test_precedence_user_then_config_then_environment(
    make: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-anthropic-value")
    monkeypatch.setenv("OPENAI_API_KEY", "env-openai-value")
    manager = make(keys={"OPENAI_API_KEY": "config-openai-value"})
    assert manager.get("ANTHROPIC_API_KEY") == "env-anthropic-value"
    assert manager.get("OPENAI_API_KEY") == "config-openai-value"
    assert entry_of(manager, "ANTHROPIC_API_KEY")["source"] == "environment"
    openai = entry_of(manager, "OPENAI_API_KEY")
    assert (openai["source"], openai["read_only"], openai["overrides"]) == (
        "config",
        True,
        ["environment"],
    )

    # The user's own key wins for that user, and says what it overrides.
    manager.set("OPENAI_API_KEY", KEY)
    assert manager.get("OPENAI_API_KEY") == KEY
    openai = entry_of(manager, "OPENAI_API_KEY")
    assert (openai["source"], openai["read_only"], openai["overrides"]) == (
        "file",
        False,
        ["config", "environment"],
    )
    # Deleting it brings the administrator's back.
    assert manager.delete("OPENAI_API_KEY")["source"] == "config"
    assert manager.get("OPENAI_API_KEY") == "config-openai-value"


def test_gemini_reads_either_name(make: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "google-value-123")
    manager = make()
    assert manager.key_for_provider("gemini") == "google-value-123"
    manager.set("GEMINI_API_KEY", KEY)
    assert manager.key_for_provider("gemini") == KEY
    assert manager.key_for_provider("nobody") is None


@pytest.mark.parametrize("source", ["environment", "config"])
def test_read_only_keys_cannot_be_deleted(
    make: Factory, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    if source == "environment":
        monkeypatch.setenv("GROQ_API_KEY", KEY)
        manager = make()
    else:
        manager = make(keys={"GROQ_API_KEY": KEY})
    with pytest.raises(Conflict) as caught:
        manager.delete("GROQ_API_KEY")
    assert caught.value.reason == "read_only_key"
    assert source in caught.value.message
    assert_no_key(caught.value.message)
    assert manager.get("GROQ_API_KEY") == KEY


def test_only_the_configured_environment_variables_are_read(
    make: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
    monkeypatch.setenv("MY_LLM_KEY", "my-llm-value")
    manager = make(environment_names=["MY_LLM_KEY"])
    names = {e["name"] for e in manager.list() if e["set"]}
    assert names == {"MY_LLM_KEY"}
    assert manager.get("AWS_SECRET_ACCESS_KEY") is None


@pytest.mark.parametrize(
    "name", ["", "a" * 65, "has space", "slash/name", "..", ".", "ключ", "a\nb", "a\x00b", None, 3]
)
def test_bad_names_are_refused_without_echo(make: Factory, name: Any) -> None:
    manager = make()
    for operation in (
        lambda: manager.set(name, KEY),
        lambda: manager.delete(name),
        lambda: manager.get(name),
    ):
        with pytest.raises(InvalidRequest) as caught:
            operation()
        assert caught.value.reason == "invalid_key_name"
        assert_no_key(caught.value.message)
        if isinstance(name, str) and name not in ("", ".", ".."):
            assert name not in caught.value.message
    assert manager.store.names() == []


@pytest.mark.parametrize(
    ("value", "error", "reason"),
    [
        ("", InvalidRequest, "invalid_key_value"),
        (None, InvalidRequest, "invalid_key_value"),
        (12345678, InvalidRequest, "invalid_key_value"),
        (KEY + "\n", InvalidRequest, "invalid_key_value"),
        (KEY + "\nX-Injected: 1", InvalidRequest, "invalid_key_value"),
        ("sk-\x00" + KEY, InvalidRequest, "invalid_key_value"),
        (KEY + "\x1b[31m", InvalidRequest, "invalid_key_value"),
        (KEY + "\u200b", InvalidRequest, "invalid_key_value"),
        (KEY + "\u2028", InvalidRequest, "invalid_key_value"),
        (KEY + "\ud800", InvalidRequest, "invalid_key_value"),
        (" " + KEY, InvalidRequest, "invalid_key_value"),
        (KEY + " ", InvalidRequest, "invalid_key_value"),
        (KEY + "x" * 8192, TooLarge, "key_too_large"),
        ("é" * 4097, TooLarge, "key_too_large"),
    ],
)
def test_bad_values_are_refused_without_echo(
    make: Factory, value: Any, error: type[TeraxError], reason: str, security: SecurityLayer
) -> None:
    manager = make()
    with pytest.raises(error) as caught:
        manager.set("OPENAI_API_KEY", value)
    assert caught.value.reason == reason
    assert_no_key(caught.value.message)
    assert manager.store.names() == []
    assert security.audit.entries() == []


def test_largest_value_is_accepted() -> None:
    assert check_value("k" * 8192) == "k" * 8192


def test_values_are_known_to_the_redactor(
    make: Factory, security: SecurityLayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Plain values no credential pattern recognizes: only the known-value rule can catch them.
    monkeypatch.setenv("MISTRAL_API_KEY", "plainenvvalue42")
    manager = make(keys={"DEEPSEEK_API_KEY": "plainconfigvalue42"})
    manager.set("custom", "plainuservalue42")
    text = "env plainenvvalue42 config plainconfigvalue42 user plainuservalue42"
    assert security.redactor.redact(text) == "env [REDACTED] config [REDACTED] user [REDACTED]"


def test_invalid_admin_entries_are_ignored_with_a_warning_naming_no_value(
    make: Factory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("XAI_API_KEY", KEY + "\n")
    manager = make(keys={"bad name": KEY, "CEREBRAS_API_KEY": ""})
    assert not any(e["set"] for e in manager.list())
    assert "XAI_API_KEY" in caplog.text
    assert "an entry" in caplog.text
    assert_no_key(caplog.text)
    before = len(caplog.records)
    manager.list()
    assert len(caplog.records) == before, "warned once, not on every listing"


def test_a_failing_keychain_is_503_and_its_message_stays_in_the_log(
    make: Factory, memory_keyring: MemoryKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    manager = make(backend="auto")
    assert manager.store.kind == "keyring"
    manager.set("OPENAI_API_KEY", KEY)
    assert memory_keyring.entries[("terax-jupyter", "OPENAI_API_KEY")] == KEY
    # A backend that echoes what it was given in its error.
    memory_keyring.fail_with = RuntimeError(f"D-Bus said no to {KEY} for /org/freedesktop")
    with pytest.raises(Unavailable) as caught:
        manager.set("OPENAI_API_KEY", KEY)
    assert caught.value.reason == "secrets_store_failed"
    assert "RuntimeError" in caught.value.message
    assert_no_key(caught.value.message)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__
    assert "D-Bus said no to [REDACTED]" in caplog.text
    assert_no_key(caplog.text)
    overview = manager.overview()
    assert overview["store"]["problem"].startswith("The key store (keyring) failed")
    assert len(overview["keys"]) == len(KNOWN_KEYS)


def test_keyring_backend_without_a_keychain_is_refused(
    make: Factory, restore_keyring: None
) -> None:
    import keyring
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())
    manager = make(backend="keyring")
    with pytest.raises(Unavailable) as caught:
        manager.set("OPENAI_API_KEY", KEY)
    assert caught.value.reason == "no_keychain"
    assert manager.overview()["store"]["problem"].startswith("SecretsManager.backend is")
    # auto falls back to the private file.
    assert make(backend="auto").store.kind == "file"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_an_insecure_file_shows_read_only_keys_and_the_problem(
    make: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = make()
    manager.set("OPENAI_API_KEY", KEY)
    os.chmod(manager.file_path, 0o644)
    monkeypatch.setenv("GROQ_API_KEY", "env-groq-value")
    overview = manager.overview()
    assert "mode 0644" in overview["store"]["problem"]
    assert [e["name"] for e in overview["keys"] if e["set"]] == ["GROQ_API_KEY"]
    for operation in (
        lambda: manager.get("OPENAI_API_KEY"),
        lambda: manager.set("OPENAI_API_KEY", KEY),
        lambda: manager.delete("OPENAI_API_KEY"),
    ):
        with pytest.raises(Unavailable) as caught:
            operation()
        assert caught.value.reason == "insecure_file"
    assert_no_key(repr(overview))
