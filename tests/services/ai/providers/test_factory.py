"""The provider factory: keys from the secrets service, the guarded network, connection tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import AccessDenied, NotFound, ProviderAuthFailed
from terax_jupyter.services.ai.providers.catalog import ProviderCatalog
from terax_jupyter.services.ai.providers.factory import ProviderFactory
from terax_jupyter.services.ai.providers.openai import OpenAIProvider
from terax_jupyter.services.ai.providers.retry import RetryPolicy
from terax_jupyter.services.secrets.manager import SecretsManager
from terax_jupyter.testing import model_stub as turns

from .conftest import KEY, ask, collect, text_of
from .test_adapters import free_port

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Iterator
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import Sleeps


@pytest.fixture
def security(terax_security: object, tmp_path: Path) -> SecurityLayer:
    (tmp_path / "root").mkdir()
    return terax_security(tmp_path / "root")  # type: ignore[operator]


@pytest.fixture
def secrets(security: SecurityLayer, tmp_path: Path) -> SecretsManager:
    return SecretsManager(security, str(tmp_path / "state"), backend="file")


@pytest.fixture
def catalog(security: SecurityLayer, tmp_path: Path) -> ProviderCatalog:
    return ProviderCatalog({}, str(tmp_path / "state" / "providers.json"), security.audit)


@pytest.fixture
def factory(
    security: SecurityLayer,
    secrets: SecretsManager,
    catalog: ProviderCatalog,
    sleeps: Sleeps,
    jp_asyncio_loop: asyncio.AbstractEventLoop,
) -> Iterator[ProviderFactory]:
    made = ProviderFactory(security, secrets, catalog, RetryPolicy(sleep=sleeps), timeout=5.0)
    yield made
    jp_asyncio_loop.run_until_complete(made.aclose())


def stub_provider(catalog: ProviderCatalog, stub: ModelStub, **fields: object) -> None:
    catalog.put(
        "box",
        {"kind": "openai", "base_url": stub.url, "key_name": "BOX_API_KEY", **fields},
        user="alice",
    )


async def test_a_hosted_provider_without_a_key(factory: ProviderFactory) -> None:
    with pytest.raises(ProviderAuthFailed) as caught:
        await factory.provider("openai")
    assert caught.value.reason == "missing_key"
    assert caught.value.message.startswith(
        "No key is set for OpenAI: set OPENAI_API_KEY in Terax settings"
    )
    result = await factory.test_connection("anthropic")
    assert (result["ok"], result["reason"]) == (False, "missing_key")
    assert "ANTHROPIC_API_KEY" in result["message"]


async def test_the_key_comes_from_the_secrets_service(
    factory: ProviderFactory,
    catalog: ProviderCatalog,
    secrets: SecretsManager,
    stub: ModelStub,
) -> None:
    stub_provider(catalog, stub, local=True)
    secrets.set("BOX_API_KEY", KEY, user="alice")
    stub.script([turns.text("keyed")])
    provider = await factory.provider("box")
    assert isinstance(provider, OpenAIProvider)
    assert text_of(await collect(provider)) == "keyed"
    assert stub.requests[0].headers["authorization"] == f"Bearer {KEY}"


async def test_gemini_falls_back_to_google_api_key(
    factory: ProviderFactory,
    catalog: ProviderCatalog,
    secrets: SecretsManager,
    stub: ModelStub,
) -> None:
    # The user's own key: a server key would not follow the provider to the stub (see
    # test_key_binding.py).
    secrets.set("GOOGLE_API_KEY", "AIza-test-google-key-0123456789", user=None)
    catalog.put("gemini", {"base_url": stub.url, "local": True}, user=None)
    assert [m["id"] for m in await factory.list_models("gemini")] == ["stub-large", "stub-model"]
    assert stub.requests[0].headers["authorization"] == "Bearer AIza-test-google-key-0123456789"


async def test_loopback_only_for_a_provider_marked_local(
    factory: ProviderFactory, catalog: ProviderCatalog, stub: ModelStub
) -> None:
    stub_provider(catalog, stub, key_name=None)
    with pytest.raises(AccessDenied) as caught:
        await collect(await factory.provider("box"))
    assert caught.value.reason == "address_denied"
    result = await factory.test_connection("box")
    assert (result["ok"], result["reason"]) == (False, "address_denied")
    assert stub.requests == []
    stub_provider(catalog, stub, key_name=None, local=True)
    stub.script([turns.text("reached")])
    assert text_of(await collect(await factory.provider("box"))) == "reached"
    # Marking one provider local opens its origin only, not loopback in general.
    other = free_port()
    catalog.put(
        "elsewhere", {"kind": "openai", "base_url": f"http://127.0.0.1:{other}/v1"}, user=None
    )
    with pytest.raises(AccessDenied):
        await collect(await factory.provider("elsewhere"))


async def test_a_local_provider_needs_no_key(
    factory: ProviderFactory, catalog: ProviderCatalog, stub: ModelStub
) -> None:
    stub_provider(catalog, stub, local=True)
    stub.script([turns.text("no key needed")])
    assert text_of(await collect(await factory.provider("box"))) == "no key needed"
    assert "authorization" not in stub.requests[0].headers


async def test_connection_ok_and_model_check(
    factory: ProviderFactory, catalog: ProviderCatalog, stub: ModelStub
) -> None:
    stub_provider(catalog, stub, local=True)
    result = await factory.test_connection("box")
    assert result["ok"] is True
    assert result["reason"] is None
    assert result["models"] == ["stub-large", "stub-model"]
    assert result["latency_ms"] >= 0
    assert result["message"].startswith("box answered in ")
    assert (await factory.test_connection("box", "stub-model"))["ok"] is True
    missing = await factory.test_connection("box", "gpt-9")
    assert (missing["ok"], missing["reason"]) == (False, "model_not_found")
    with pytest.raises(NotFound):
        await factory.test_connection("nothing-here")


async def test_connection_with_a_bad_key(
    factory: ProviderFactory,
    catalog: ProviderCatalog,
    secrets: SecretsManager,
    stub: ModelStub,
) -> None:
    stub.require_key = "sk-the-right-one-0123456789"
    stub_provider(catalog, stub, local=True)
    secrets.set("BOX_API_KEY", KEY, user=None)
    result = await factory.test_connection("box")
    assert (result["ok"], result["reason"], result["models"]) == (False, "bad_key", [])
    assert "BOX_API_KEY" in result["message"]
    assert KEY not in str(result)


async def test_connection_to_a_local_server_that_is_down(
    factory: ProviderFactory, catalog: ProviderCatalog
) -> None:
    port = free_port()
    catalog.put("ollama", {"base_url": f"http://127.0.0.1:{port}/v1"}, user=None)
    result = await factory.test_connection("ollama")
    assert result == {
        "ok": False,
        "latency_ms": result["latency_ms"],
        "models": [],
        "message": f"Nothing answers at http://127.0.0.1:{port} — is Ollama running?",
        "reason": "provider_unreachable",
    }


async def test_providers_share_clients_and_closing_one_keeps_the_others(
    factory: ProviderFactory, catalog: ProviderCatalog, stub: ModelStub
) -> None:
    stub_provider(catalog, stub, local=True)
    first, second = await factory.provider("box"), await factory.provider("box")
    assert first._client is second._client  # type: ignore[attr-defined]
    await first.aclose()
    stub.script([turns.text("still works")])
    assert text_of(await collect(second, ask())) == "still works"
    await factory.aclose()
    assert second._client.is_closed  # type: ignore[attr-defined]
    stub.script([turns.text("a new client")])
    assert text_of(await collect(await factory.provider("box"))) == "a new client"
