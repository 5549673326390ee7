"""Through the server: a key of the configuration or the environment goes only to the address
it was configured for, whichever route sends it (a run, inline completion, the model list,
a connection test), and the provider list says which providers have a key they would send."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.testing import model_stub as turns
from tests.services.ai.conftest import KEY
from tests.services.ai.test_agent_api import new_session, run

if TYPE_CHECKING:
    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api

ENV_KEY = "sk-environment-7d6c5b4a39281706f5"


@pytest.fixture
def terax_config(terax_config: dict[str, Any]) -> dict[str, Any]:
    """The shared configuration plus the administrator's key for the admin's "keyed"
    provider (which points at the stub that requires it)."""
    return {**terax_config, "SecretsManager": {"backend": "file", "keys": {"KEYED_API_KEY": KEY}}}


def sent_keys(stub: ModelStub) -> list[str | None]:
    return [r.headers.get("authorization") or r.headers.get("x-api-key") for r in stub.requests]


async def test_no_route_sends_the_environment_key_to_a_moved_builtin(
    terax_api: Api, open_events: Any, model_stub: ModelStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    providers = {p["id"]: p for p in (await terax_api("ai/providers"))["providers"]}
    assert providers["openai"]["key_set"] is True  # at api.openai.com
    await terax_api(
        "ai/providers/openai", method="PUT", body={"base_url": model_stub.url, "local": True}
    )
    providers = {p["id"]: p for p in (await terax_api("ai/providers"))["providers"]}
    assert providers["openai"]["key_set"] is False  # not at the address it has now

    assert (await terax_api("ai/providers/openai/test", method="POST"))["ok"] is True
    await terax_api("ai/providers/openai/models")
    model_stub.script([turns.text("x + 1")])
    answer = await terax_api(
        "ai/complete",
        method="POST",
        body={"prefix": "y = ", "suffix": "", "provider": "openai", "model": "stub-model"},
    )
    assert answer["text"] == "x + 1"
    model_stub.script([turns.text("ran")])
    session_id = await new_session(terax_api, provider="openai", model="stub-model")
    events = await run(terax_api, open_events, session_id, "hello")
    assert (await events.until("finish"))["reason"] == "stop"

    assert len(model_stub.requests) == 4
    assert sent_keys(model_stub) == [None, None, None, None]


async def test_a_user_provider_naming_the_admins_key_gets_none_of_it(
    terax_api: Api, model_stub: ModelStub, keyed_stub: ModelStub
) -> None:
    # The administrator's provider, at its own address, gets the administrator's key.
    assert (await terax_api("ai/providers/keyed/test", method="POST"))["ok"] is True
    assert sent_keys(keyed_stub) == [f"Bearer {KEY}"]
    body = {"kind": "openai", "base_url": model_stub.url, "key_name": "KEYED_API_KEY"}
    await terax_api("ai/providers/mine", method="PUT", body={**body, "local": True})
    providers = {p["id"]: p for p in (await terax_api("ai/providers"))["providers"]}
    assert (providers["keyed"]["key_set"], providers["mine"]["key_set"]) == (True, False)
    assert (await terax_api("ai/providers/mine/test", method="POST"))["ok"] is True
    assert sent_keys(model_stub) == [None]
    # Hosted (not local): refused, with what to do about it.
    await terax_api(
        "ai/providers/mine",
        method="PUT",
        body={**body, "base_url": "https://llm.example.net/v1"},
    )
    refused = await terax_api("ai/providers/mine/test", method="POST")
    assert (refused["ok"], refused["reason"]) == (False, "key_not_for_url")
    assert refused["message"] == (
        f"The administrator's key KEYED_API_KEY is only sent to {keyed_stub.origin}; store "
        "your own KEYED_API_KEY in Terax settings to use mine at https://llm.example.net."
    )
    # The user's own key of that name goes where the user says.
    await terax_api("ai/providers/mine", method="PUT", body={**body, "local": True})
    await terax_api("secrets/KEYED_API_KEY", method="PUT", body={"value": ENV_KEY})
    assert (await terax_api("ai/providers/mine/test", method="POST"))["ok"] is True
    assert sent_keys(model_stub) == [None, f"Bearer {ENV_KEY}"]
