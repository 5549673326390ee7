"""Inline completion through the server, against the real model stub on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.ai.completion import strip_fences
from terax_jupyter.testing import model_stub as turns

if TYPE_CHECKING:
    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api


def paths(stub: ModelStub) -> list[str]:
    return [r.path for r in stub.requests]


async def complete(terax_api: Api, **body: Any) -> dict[str, Any]:
    return await terax_api("ai/complete", method="POST", body=body)  # type: ignore[no-any-return]


async def failure(terax_api: Api, body: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("ai/complete", method="POST", body=body)
    return caught.value.code, error_of(caught.value)


async def test_a_local_openai_provider_fills_in_the_middle(
    terax_api: Api, model_stub: ModelStub
) -> None:
    model_stub.script([turns.text("(a, b):\n    return a + b")])
    answer = await complete(
        terax_api, prefix="def add", suffix="\n\nprint(add(1, 2))\n", path="src/m.py"
    )
    assert answer["text"] == "(a, b):\n    return a + b"
    assert (answer["mode"], answer["provider"], answer["model"]) == ("fim", "stub", "stub-model")
    assert answer["latency_ms"] >= 0
    assert paths(model_stub) == ["/v1/completions"]
    sent = model_stub.requests[0].body
    assert sent["prompt"] == "def add"
    assert sent["suffix"] == "\n\nprint(add(1, 2))\n"
    assert sent["model"] == "stub-model"
    assert sent["max_tokens"] == 128
    assert sent["stream"] is False


async def test_without_fim_it_falls_back_to_chat_and_remembers(
    terax_api: Api, model_stub: ModelStub
) -> None:
    model_stub.script([turns.error(404), turns.text("x + 1"), turns.text("y + 2")])
    first = await complete(terax_api, prefix="return ", suffix="\n", language="python")
    assert (first["text"], first["mode"]) == ("x + 1", "chat")
    assert paths(model_stub) == ["/v1/completions", "/v1/chat/completions"]
    chat = model_stub.requests[1].body
    assert chat["messages"][0]["role"] == "system"
    assert "<CURSOR>" in chat["messages"][0]["content"]
    assert chat["messages"][1]["content"].endswith("return <CURSOR>\n")
    assert "Language: python" in chat["messages"][1]["content"]
    assert "tools" not in chat

    second = await complete(terax_api, prefix="return ", suffix="\n")
    assert (second["text"], second["mode"]) == ("y + 2", "chat")
    assert paths(model_stub)[2:] == ["/v1/chat/completions"]  # /completions not asked again


async def test_anthropic_completes_through_chat(terax_api: Api, model_stub: ModelStub) -> None:
    model_stub.script([turns.text("```python\nreturn 42\n```\nThis returns the answer.")])
    answer = await complete(
        terax_api, prefix="def f():\n    ", suffix="\n", provider="stub-anthropic"
    )
    assert answer["text"] == "return 42"
    assert (answer["mode"], answer["provider"]) == ("chat", "stub-anthropic")
    assert paths(model_stub) == ["/v1/messages"]
    sent = model_stub.requests[0].body
    assert "<CURSOR>" in str(sent["system"])
    assert sent["max_tokens"] == 128
    assert not sent.get("tools")


async def test_the_context_is_capped_and_the_answer_too(
    terax_api: Api, model_stub: ModelStub
) -> None:
    long_answer = "\n".join(f"line {n}" for n in range(40))
    model_stub.script([turns.text(long_answer)])
    prefix = "p" * 5000 + "q" * 6000
    suffix = "s" * 2000 + "t" * 5000
    answer = await complete(terax_api, prefix=prefix, suffix=suffix)
    assert answer["text"].split("\n") == [f"line {n}" for n in range(20)]
    sent = model_stub.requests[0].body
    assert sent["prompt"] == "q" * 6000
    assert sent["suffix"] == "s" * 2000


def test_fences_are_stripped() -> None:
    assert strip_fences("```py\na = 1\nb = 2\n```") == "a = 1\nb = 2"
    assert strip_fences("```\na = 1") == "a = 1"  # cut before its end
    assert strip_fences("a = 1  # no fence") == "a = 1  # no fence"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"prefix": 1},
        {"prefix": "x", "suffix": ["y"]},
        {"prefix": "x", "path": 3},
        {"prefix": "x", "provider": ""},
        {"prefix": "x", "extra": True},
        {"prefix": "x" * 1_000_001},
        ["prefix"],
    ],
)
async def test_bad_input_is_400(terax_api: Api, model_stub: ModelStub, body: Any) -> None:
    code, error = await failure(terax_api, body)
    assert code == 400
    assert error["reason"] in ("invalid_parameter", "invalid_json")
    assert model_stub.requests == []


async def test_an_unknown_provider_is_404(terax_api: Api, model_stub: ModelStub) -> None:
    code, error = await failure(terax_api, {"prefix": "x", "provider": "nope"})
    assert (code, error["reason"]) == (404, "provider_not_found")
    assert model_stub.requests == []


@pytest.mark.parametrize("ai_config", [{"default_provider": "", "default_model": ""}])
async def test_no_model_configured_is_400(terax_api: Api, ai_config: dict) -> None:
    code, error = await failure(terax_api, {"prefix": "x", "suffix": ""})
    assert (code, error["reason"]) == (400, "no_model")


@pytest.mark.parametrize(
    "ai_config", [{"completion_provider": "stub-anthropic", "completion_model": "tiny"}]
)
async def test_completion_settings_override_the_session_defaults(
    terax_api: Api, model_stub: ModelStub, ai_config: dict
) -> None:
    model_stub.script([turns.text("1")])
    answer = await complete(terax_api, prefix="x = ")
    assert (answer["provider"], answer["model"], answer["mode"]) == (
        "stub-anthropic",
        "tiny",
        "chat",
    )


async def test_provider_errors_are_provider_errors(terax_api: Api, model_stub: ModelStub) -> None:
    model_stub.script([turns.error(401)])
    code, error = await failure(terax_api, {"prefix": "x"})
    assert code == 502
    code, error = await failure(terax_api, {"prefix": "x", "provider": "dead"})
    assert (code, error["reason"]) == (502, "provider_unreachable")


async def test_a_client_that_hangs_up_cancels_the_call(
    terax_api: Api, model_stub: ModelStub, jp_serverapp: Any
) -> None:
    model_stub.script([turns.slow(turns.text("late"), 30)])
    service = jp_serverapp.web_app.settings["terax"].ai.completion
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("ai/complete", method="POST", body={"prefix": "x"}, request_timeout=1)
    assert caught.value.code == 599
    started = time.monotonic()
    for _ in range(200):
        if not service.in_flight:
            break
        await asyncio.sleep(0.05)
    assert service.in_flight == 0
    assert time.monotonic() - started < 5  # not the 30 s the stub would take


# -- which model: the chat's unless one is set for completions (issue 16, item 5) ----------


async def new_session(terax_api: Api, **fields: Any) -> dict[str, Any]:
    return await terax_api("ai/sessions", method="POST", body=fields)  # type: ignore[no-any-return]


@pytest.mark.parametrize("ai_config", [{"default_provider": "", "default_model": ""}])
async def test_without_defaults_completion_uses_the_model_picked_for_chat(
    terax_api: Api, model_stub: ModelStub, ai_config: dict
) -> None:
    code, error = await failure(terax_api, {"prefix": "x"})
    assert (code, error["reason"]) == (400, "no_model")
    assert "AI panel" in error["message"]  # says where to connect one

    await new_session(terax_api, provider="stub", model="tiny")
    model_stub.script([turns.text("1")])
    answer = await complete(terax_api, prefix="x = ")
    assert (answer["provider"], answer["model"]) == ("stub", "tiny")
    assert model_stub.requests[-1].body["model"] == "tiny"


async def test_a_model_picked_in_the_chat_beats_the_session_defaults(
    terax_api: Api, model_stub: ModelStub
) -> None:
    older = await new_session(terax_api)
    newer = await new_session(terax_api)
    await terax_api(f"ai/sessions/{older['id']}", method="PATCH", body={"model": "old-pick"})
    # The chat the user works in now is the one whose pick counts.
    await terax_api(
        f"ai/sessions/{newer['id']}",
        method="PATCH",
        body={"provider": "stub-anthropic", "model": "tiny"},
    )
    model_stub.script([turns.text("1")])
    answer = await complete(terax_api, prefix="x = ")
    assert (answer["provider"], answer["model"], answer["mode"]) == (
        "stub-anthropic",
        "tiny",
        "chat",
    )
    assert paths(model_stub) == ["/v1/messages"]

    # A provider asked for alone takes a model of that provider, not the chat's other one.
    model_stub.script([turns.text("2")])
    answer = await complete(terax_api, prefix="x = ", provider="stub")
    assert (answer["provider"], answer["model"]) == ("stub", "stub-model")


@pytest.mark.parametrize("ai_config", [{"completion_provider": "stub", "completion_model": "tiny"}])
async def test_a_model_set_for_completions_beats_the_chats(
    terax_api: Api, model_stub: ModelStub, ai_config: dict
) -> None:
    await new_session(terax_api, provider="stub-anthropic", model="stub-model")
    model_stub.script([turns.text("1")])
    answer = await complete(terax_api, prefix="x = ")
    assert (answer["provider"], answer["model"]) == ("stub", "tiny")


async def test_the_chat_model_the_page_names_beats_the_newest_session(
    terax_api: Api, model_stub: ModelStub
) -> None:
    # Picked in the panel before any session exists: the page sends what its chat uses.
    await new_session(terax_api, provider="stub", model="stub-model")
    model_stub.script([turns.text("1")])
    answer = await complete(terax_api, prefix="x = ", chat_provider="stub", chat_model="tiny")
    assert (answer["provider"], answer["model"]) == ("stub", "tiny")
    # Below the request's own choice.
    model_stub.script([turns.text("2")])
    answer = await complete(
        terax_api, prefix="x = ", model="stub-model", chat_provider="stub", chat_model="tiny"
    )
    assert answer["model"] == "stub-model"
    code, error = await failure(terax_api, {"prefix": "x", "chat_model": ""})
    assert (code, error["reason"]) == (400, "invalid_parameter")
