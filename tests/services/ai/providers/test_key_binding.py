"""A key of the configuration or the environment goes only to the address it was set for.

Real listeners on 127.0.0.1 (the model stub records every request's headers) stand in for
the administrator's provider and for a listener a user points a provider at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import ProviderAuthFailed
from terax_jupyter.services.ai.providers.base import ProviderConfig
from terax_jupyter.services.ai.providers.catalog import ProviderCatalog
from terax_jupyter.services.ai.providers.factory import ProviderFactory
from terax_jupyter.services.ai.providers.retry import RetryPolicy
from terax_jupyter.services.secrets.manager import SecretsManager
from terax_jupyter.testing import model_stub as turns
from terax_jupyter.testing.model_stub import ModelStub

from .conftest import collect, text_of

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer

    from .conftest import Sleeps

ADMIN_KEY = "sk-admin-0f3e9d2c1b4a59687766"
ENV_KEY = "sk-environment-5a6b7c8d9e0f1a2b3c"
USER_KEY = "sk-users-own-9988776655443322"


@pytest.fixture
def listener() -> Iterator[ModelStub]:
    """A listener the user controls: it records whatever it is sent."""
    with ModelStub(models=["m"]) as stub:
        yield stub


@pytest.fixture
def admin_endpoint() -> Iterator[ModelStub]:
    """The administrator's provider, which wants the administrator's key."""
    with ModelStub(models=["m"], require_key=ADMIN_KEY) as stub:
        yield stub


@pytest.fixture
def build(
    terax_security: Callable[..., SecurityLayer],
    tmp_path: Path,
    sleeps: Sleeps,
    jp_asyncio_loop: asyncio.AbstractEventLoop,
) -> Iterator[Callable[..., tuple[ProviderFactory, ProviderCatalog, SecretsManager]]]:
    """``build(admin_keys={...}, admin_providers={...})``: a factory as the server makes it."""
    (tmp_path / "root").mkdir()
    security = terax_security(tmp_path / "root")
    made: list[ProviderFactory] = []

    def make(
        admin_keys: dict[str, str] | None = None,
        admin_providers: dict[str, dict[str, Any]] | None = None,
    ) -> tuple[ProviderFactory, ProviderCatalog, SecretsManager]:
        state = tmp_path / f"state{len(made)}"
        secrets = SecretsManager(security, str(state), backend="file", keys=admin_keys or {})
        catalog = ProviderCatalog(admin_providers, str(state / "providers.json"), security.audit)
        factory = ProviderFactory(
            security, secrets, catalog, RetryPolicy(sleep=sleeps), timeout=5.0
        )
        made.append(factory)
        return factory, catalog, secrets

    yield make
    for factory in made:
        jp_asyncio_loop.run_until_complete(factory.aclose())


def sent_keys(stub: ModelStub) -> list[str | None]:
    return [r.headers.get("authorization") or r.headers.get("x-api-key") for r in stub.requests]


def corp(endpoint: ModelStub, **more: Any) -> dict[str, dict[str, Any]]:
    fields = {"kind": "openai", "base_url": endpoint.url, "key_name": "CORP_KEY", "local": True}
    return {"corp": {**fields, **more}}


async def test_an_environment_key_does_not_follow_a_moved_builtin(
    build: Callable[..., Any], listener: ModelStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    factory, catalog, _ = build()
    catalog.put("openai", {"base_url": listener.url, "local": True}, user="mallory")
    listener.script([turns.text("answer")])
    assert text_of(await collect(await factory.provider("openai"))) == "answer"
    await factory.list_models("openai")
    result = await factory.test_connection("openai")
    assert result["ok"] is True
    assert len(listener.requests) == 3
    assert sent_keys(listener) == [None, None, None]
    assert ENV_KEY not in repr(listener.requests)


async def test_a_moved_hosted_builtin_without_a_key_of_its_own_is_refused(
    build: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    factory, catalog, _ = build()
    catalog.put("anthropic", {"base_url": "https://llm.example.net/v1"}, user="mallory")
    with pytest.raises(ProviderAuthFailed) as caught:
        await factory.provider("anthropic")
    assert caught.value.reason == "key_not_for_url"
    assert caught.value.message == (
        "The server's key ANTHROPIC_API_KEY is only sent to https://api.anthropic.com; store "
        "your own ANTHROPIC_API_KEY in Terax settings to use Anthropic at "
        "https://llm.example.net."
    )
    result = await factory.test_connection("anthropic")
    assert (result["ok"], result["reason"]) == (False, "key_not_for_url")
    assert ENV_KEY not in str(result)


async def test_the_builtin_default_address_still_gets_the_environment_key(
    build: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No request to the real OpenAI: the decision is made before any is sent.
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    factory, catalog, _ = build()
    assert catalog.key_origins("OPENAI_API_KEY") == {"https://api.openai.com:443"}
    found = factory.usable_key(catalog.get("openai"))
    assert found is not None
    assert (found.value, found.source, found.user) == (ENV_KEY, "environment", False)
    assert ENV_KEY not in repr(found)
    # A provider of the user's at the same origin (another path) is the same listener.
    same = ProviderConfig("mine", "Mine", "openai", "https://api.openai.com/v2", "OPENAI_API_KEY")
    assert factory.usable_key(same) is not None
    for elsewhere in (
        "http://api.openai.com/v1",  # another scheme
        "https://api.openai.com:8443/v1",  # another port
        "https://api.openai.com.evil.example/v1",
        "https://evil.example/api.openai.com/v1",
    ):
        moved = ProviderConfig("mine", "Mine", "openai", elsewhere, "OPENAI_API_KEY")
        assert factory.usable_key(moved) is None, elsewhere


async def test_a_user_provider_naming_the_admins_key_gets_none_of_it(
    build: Callable[..., Any], listener: ModelStub, admin_endpoint: ModelStub
) -> None:
    factory, catalog, _ = build(
        admin_keys={"CORP_KEY": ADMIN_KEY}, admin_providers=corp(admin_endpoint)
    )
    catalog.put(
        "mine",
        {"kind": "openai", "base_url": listener.url, "key_name": "CORP_KEY", "local": True},
        user="mallory",
    )
    listener.script([turns.text("got nothing")])
    assert text_of(await collect(await factory.provider("mine"))) == "got nothing"
    assert (await factory.test_connection("mine"))["ok"] is True
    assert sent_keys(listener) == [None, None]
    # The administrator's own provider does get it.
    admin_endpoint.script([turns.text("admin answer")])
    assert text_of(await collect(await factory.provider("corp"))) == "admin answer"
    assert sent_keys(admin_endpoint) == [f"Bearer {ADMIN_KEY}"]
    assert (await factory.test_connection("corp"))["ok"] is True


async def test_a_user_provider_naming_a_builtins_key_gets_none_of_it(
    build: Callable[..., Any], listener: ModelStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    factory, catalog, _ = build(admin_keys={"ANTHROPIC_API_KEY": ADMIN_KEY})
    for kind, name in (("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")):
        catalog.put(
            f"mine-{kind}",
            {"kind": kind, "base_url": listener.url, "key_name": name, "local": True},
            user="mallory",
        )
        await factory.list_models(f"mine-{kind}")
    assert sent_keys(listener) == [None, None]
    # Not local: refused with the reason, nothing sent.
    catalog.put(
        "hosted",
        {
            "kind": "anthropic",
            "base_url": "https://llm.example.net",
            "key_name": "ANTHROPIC_API_KEY",
        },
        user="mallory",
    )
    with pytest.raises(ProviderAuthFailed) as caught:
        await factory.provider("hosted")
    assert caught.value.reason == "key_not_for_url"
    assert caught.value.message.startswith(
        "The administrator's key ANTHROPIC_API_KEY is only sent to https://api.anthropic.com;"
    )


async def test_a_key_the_user_stored_goes_where_the_user_says(
    build: Callable[..., Any], listener: ModelStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    factory, catalog, secrets = build(admin_keys={"CORP_KEY": ADMIN_KEY})
    secrets.set("OPENAI_API_KEY", USER_KEY, user="alice")
    secrets.set("CORP_KEY", USER_KEY, user="alice")
    catalog.put("openai", {"base_url": listener.url, "local": True}, user="alice")
    catalog.put(
        "mine",
        {"kind": "anthropic", "base_url": listener.url, "key_name": "CORP_KEY", "local": True},
        user="alice",
    )
    await factory.list_models("openai")
    await factory.list_models("mine")
    assert sent_keys(listener) == [f"Bearer {USER_KEY}", USER_KEY]
    # Deleting the user's key does not let the server's key take its place there.
    secrets.delete("OPENAI_API_KEY", user="alice")
    await factory.list_models("openai")
    assert sent_keys(listener)[-1] is None


async def test_gemini_takes_the_users_google_key_but_not_the_servers(
    build: Callable[..., Any], listener: ModelStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", ENV_KEY)
    factory, catalog, secrets = build()
    catalog.put("gemini", {"base_url": listener.url, "local": True}, user="alice")
    await factory.list_models("gemini")
    secrets.set("GOOGLE_API_KEY", USER_KEY, user="alice")
    await factory.list_models("gemini")
    assert sent_keys(listener) == [None, f"Bearer {USER_KEY}"]
    assert catalog.key_origins("GOOGLE_API_KEY") == {
        "https://generativelanguage.googleapis.com:443"
    }


async def test_an_admin_who_moves_a_builtin_moves_its_key(
    build: Callable[..., Any],
    admin_endpoint: ModelStub,
    listener: ModelStub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ADMIN_KEY)
    factory, catalog, _ = build(
        admin_providers={"openai": {"base_url": admin_endpoint.url, "local": True}}
    )
    admin_endpoint.script([turns.text("via the gateway")])
    assert text_of(await collect(await factory.provider("openai"))) == "via the gateway"
    assert sent_keys(admin_endpoint) == [f"Bearer {ADMIN_KEY}"]
    # The key now belongs to the gateway only, not also to the public default.
    assert catalog.key_origins("OPENAI_API_KEY") == {admin_endpoint.origin}
    public = ProviderConfig("x", "X", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY")
    assert factory.usable_key(public) is None
    # Another port on the same host is another listener.
    catalog.put(
        "near",
        {"kind": "openai", "base_url": listener.url, "key_name": "OPENAI_API_KEY", "local": True},
        user="mallory",
    )
    await factory.list_models("near")
    assert sent_keys(listener) == [None]


async def test_a_config_key_no_provider_names_goes_nowhere(
    build: Callable[..., Any], listener: ModelStub
) -> None:
    factory, catalog, secrets = build(admin_keys={"LOOSE_KEY": ADMIN_KEY})
    assert catalog.key_origins("LOOSE_KEY") == frozenset()
    catalog.put(
        "mine",
        {"kind": "openai", "base_url": "https://llm.example.net/v1", "key_name": "LOOSE_KEY"},
        user="mallory",
    )
    with pytest.raises(ProviderAuthFailed) as caught:
        await factory.provider("mine")
    assert caught.value.reason == "key_not_for_url"
    assert "is not sent to addresses set here" in caught.value.message
    assert ADMIN_KEY not in caught.value.message
    assert secrets.get("LOOSE_KEY") == ADMIN_KEY  # still there, for the server's own use
