"""The provider catalog: built-ins, the administrator's entries, a user's own (validated,
kept in a private file, audited)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import AccessDenied, InvalidRequest, NotFound, Unavailable
from terax_jupyter.services.ai.providers.catalog import BUILTINS, ProviderCatalog

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.security import SecurityLayer

CUSTOM = {"kind": "openai", "base_url": "http://10.1.2.3:8000/v1/", "local": True}


@pytest.fixture
def security(terax_security: Callable[..., SecurityLayer], tmp_path: Path) -> SecurityLayer:
    (tmp_path / "root").mkdir()
    return terax_security(tmp_path / "root")


@pytest.fixture
def store(tmp_path: Path) -> str:
    return str(tmp_path / "state" / "providers.json")


@pytest.fixture
def catalog(security: SecurityLayer, store: str) -> ProviderCatalog:
    return ProviderCatalog({}, store, security.audit)


def test_built_ins() -> None:
    catalog = ProviderCatalog(None, None)
    ids = [c.id for c in catalog.list()]
    assert ids == list(BUILTINS)
    assert ids[:2] == ["openai", "anthropic"]
    openai = catalog.get("openai")
    assert (openai.base_url, openai.key_name, openai.local) == (
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        False,
    )
    assert catalog.get("anthropic").kind == "anthropic"
    assert catalog.get("gemini").key_name == "GEMINI_API_KEY"
    ollama = catalog.get("ollama")
    assert (ollama.base_url, ollama.local, ollama.key_name, ollama.product) == (
        "http://127.0.0.1:11434/v1",
        True,
        None,
        "Ollama",
    )
    assert {c.id for c in catalog.list() if c.local} == {"ollama", "lmstudio", "mlx"}
    assert all(c.source == "builtin" for c in catalog.list())
    with pytest.raises(NotFound):
        catalog.get("nope")
    with pytest.raises(InvalidRequest):
        catalog.get("../etc")


def test_a_custom_provider_is_kept_privately_and_audited(
    catalog: ProviderCatalog, security: SecurityLayer, store: str
) -> None:
    config = catalog.put("vllm", {**CUSTOM, "key_name": "VLLM_KEY"}, user="alice")
    assert (config.label, config.base_url, config.source) == (
        "vllm",
        "http://10.1.2.3:8000/v1",
        "user",
    )
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    again = ProviderCatalog({}, store, security.audit).get("vllm")
    assert again == config
    assert [c.id for c in catalog.list()][-1] == "vllm"
    (entry,) = [e for e in security.audit.entries() if e["action"] == "ai.provider.set"]
    assert entry["user"] == "alice"
    assert entry["provider"] == "vllm"
    assert entry["fields"]["base_url"] == "http://10.1.2.3:8000/v1"

    catalog.delete("vllm", user="alice")
    assert "ai.provider.deleted" in [e["action"] for e in security.audit.entries()]
    with pytest.raises(NotFound):
        ProviderCatalog({}, store).get("vllm")


def test_a_built_in_can_be_moved_and_restored(catalog: ProviderCatalog, store: str) -> None:
    moved = catalog.put("ollama", {"base_url": "http://192.168.1.20:11434/v1"}, user=None)
    assert moved.base_url == "http://192.168.1.20:11434/v1"
    assert (moved.product, moved.local, moved.source) == ("Ollama", True, "user")
    assert ProviderCatalog({}, store).get("ollama") == moved
    with pytest.raises(InvalidRequest) as caught:
        catalog.put("openai", {"key_name": "MY_KEY"}, user=None)
    assert "only base_url and local" in caught.value.message
    assert catalog.delete("ollama", user=None) == BUILTINS["ollama"]
    assert catalog.get("ollama") == BUILTINS["ollama"]
    with pytest.raises(NotFound) as missing:
        catalog.delete("ollama", user=None)
    assert missing.value.reason == "no_user_settings"


@pytest.mark.parametrize(
    ("provider_id", "fields", "reason"),
    [
        ("Bad Id", CUSTOM, "invalid_provider_id"),
        ("-x", CUSTOM, "invalid_provider_id"),
        ("x" * 41, CUSTOM, "invalid_provider_id"),
        ("p", {**CUSTOM, "kind": "gemini"}, "invalid_provider"),
        ("p", {"kind": "openai"}, "invalid_provider"),
        ("p", {**CUSTOM, "base_url": "ftp://10.1.2.3/v1"}, "scheme_denied"),
        ("p", {**CUSTOM, "base_url": "http://user:pw@10.1.2.3/v1"}, "userinfo_denied"),
        ("p", {**CUSTOM, "base_url": "http://10.1.2.3/v1?key=1"}, "invalid_url"),
        ("p", {**CUSTOM, "base_url": "http://10.1.2.3/v1\r\nX: y"}, "invalid_url"),
        ("p", {**CUSTOM, "base_url": 5}, "invalid_url"),
        ("p", {**CUSTOM, "key_name": "BAD KEY"}, "invalid_key_name"),
        ("p", {**CUSTOM, "local": "yes"}, "invalid_provider"),
        ("p", {**CUSTOM, "label": "a\u202eb"}, "invalid_provider"),
        ("p", {**CUSTOM, "colour": "red"}, "invalid_provider"),
        ("p", {**CUSTOM, "headers": {"Authorization": "Bearer x"}}, "invalid_header"),
        ("p", {**CUSTOM, "headers": {"X-Api-Key": "x"}}, "invalid_header"),
        ("p", {**CUSTOM, "headers": {"Host": "evil.test"}}, "invalid_header"),
        ("p", {**CUSTOM, "headers": {"X-Ok": "a\nb"}}, "invalid_header"),
        ("p", {**CUSTOM, "headers": {"Bad Name": "v"}}, "invalid_header"),
    ],
)
def test_bad_entries_are_refused(
    catalog: ProviderCatalog,
    security: SecurityLayer,
    store: str,
    provider_id: str,
    fields: dict[str, Any],
    reason: str,
) -> None:
    with pytest.raises((InvalidRequest, AccessDenied)) as caught:
        catalog.put(provider_id, fields, user="alice")
    assert caught.value.reason == reason
    assert not os.path.exists(store)
    assert security.audit.entries() == []


def test_headers_are_kept(catalog: ProviderCatalog, store: str) -> None:
    config = catalog.put("p", {**CUSTOM, "headers": {"X-Title": "Terax"}}, user=None)
    assert config.headers == (("X-Title", "Terax"),)
    assert ProviderCatalog({}, store).get("p").headers == (("X-Title", "Terax"),)


def test_administrator_entries(store: str) -> None:
    admin = {
        "openai": {"base_url": "https://llm-proxy.example.com/v1"},
        "company": {"kind": "anthropic", "base_url": "https://claude.example.com/v1"},
        "broken": {"kind": "openai"},
    }
    catalog = ProviderCatalog(admin, store)
    openai = catalog.get("openai")
    assert (openai.base_url, openai.key_name, openai.source) == (
        "https://llm-proxy.example.com/v1",
        "OPENAI_API_KEY",
        "config",
    )
    assert catalog.get("company").label == "company"
    assert [c.id for c in catalog.list()].index("company") == len(BUILTINS)
    with pytest.raises(NotFound):
        catalog.get("broken")
    assert "broken" in catalog.problems[0]
    for provider_id in ("openai", "company"):
        with pytest.raises(AccessDenied) as caught:
            catalog.put(provider_id, {"base_url": "http://127.0.0.1:1/v1"}, user=None)
        assert caught.value.reason == "provider_locked"
        with pytest.raises(AccessDenied):
            catalog.delete(provider_id, user=None)


def test_the_store_file_is_checked(catalog: ProviderCatalog, store: str) -> None:
    catalog.put("p", CUSTOM, user=None)
    data = json.loads(Path(store).read_text())
    data["providers"]["evil"] = {"kind": "openai", "base_url": "gopher://x"}
    data["providers"]["openai"] = {"key_name": "STOLEN"}
    Path(store).write_text(json.dumps(data))
    fresh = ProviderCatalog({}, store)
    assert [c.id for c in fresh.list() if c.source == "user"] == ["p"]
    assert fresh.get("openai") == BUILTINS["openai"]
    os.chmod(store, 0o644)
    with pytest.raises(Unavailable) as caught:
        ProviderCatalog({}, store).list()
    assert caught.value.reason == "insecure_file"
    os.chmod(store, 0o600)
    Path(store).write_text("{not json")
    with pytest.raises(Unavailable) as corrupt:
        ProviderCatalog({}, store).put("q", CUSTOM, user=None)
    assert corrupt.value.reason == "providers_store_corrupt"
    assert Path(store).read_text() == "{not json"
