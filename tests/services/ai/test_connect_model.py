"""Connecting a model (issue 16, item 9): the defaults the panel shows before any session, a
connection test and a model list that answer soon, and a refused local server in one log line.

Real parts only: the model stub on 127.0.0.1, a port nothing listens on, and a socket that
takes connections but never answers."""

from __future__ import annotations

import logging
import socket
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.services.ai.conftest import Api

SILENT_TIMEOUT = 0.5


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 whose server takes connections (the kernel's backlog) and never
    answers: what a hung model server or a black-holed network looks like."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield int(server.getsockname()[1])


async def test_the_provider_list_names_the_defaults_of_new_sessions(terax_api: Api) -> None:
    answer = await terax_api("ai/providers")
    assert (answer["default_provider"], answer["default_model"]) == ("stub", "stub-model")
    assert {p["id"] for p in answer["providers"]} >= {"stub", "ollama", "openai"}


@pytest.mark.parametrize("ai_config", [{"default_provider": "", "default_model": ""}])
async def test_without_defaults_the_provider_list_says_so(terax_api: Api, ai_config: dict) -> None:
    answer = await terax_api("ai/providers")
    assert (answer["default_provider"], answer["default_model"]) == (None, None)


async def test_a_refused_local_server_is_one_log_line(
    terax_api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG), pytest.raises(HTTPClientError) as caught:
        await terax_api("ai/providers/dead/models")
    assert caught.value.code == 502
    error = error_of(caught.value)
    assert error["reason"] == "provider_unreachable"
    assert "is Ollama running?" in error["message"]

    about = [r for r in caplog.records if "ai/providers/dead/models" in r.getMessage()]
    assert len(about) == 1, [r.getMessage() for r in about]
    line = about[0]
    assert line.levelno == logging.WARNING
    assert line.exc_info is None
    text = line.getMessage()
    assert text.startswith("502 GET /")
    assert "/terax/api/ai/providers/dead/models (127.0.0.1) " in text
    assert "Nothing answers at http://127.0.0.1:" in text
    assert "(provider_unreachable)" in text
    assert "\n" not in text
    # (httpcore's own DEBUG lines name the exception; the server's log at INFO and up does not.)
    shown = [r for r in caplog.records if r.levelno >= logging.INFO]
    everything = "\n".join(r.getMessage() + (r.exc_text or "") for r in shown)
    assert "Traceback" not in everything
    assert "ConnectError" not in everything


async def test_other_failures_still_log_a_traceback(
    terax_api: Api, caplog: pytest.LogCaptureFixture, jp_serverapp: Any, monkeypatch: Any
) -> None:
    """The one-line form is for provider failures only; a bug keeps its traceback."""
    ai = jp_serverapp.web_app.settings["terax"].ai

    async def broken(provider_id: str) -> list[dict[str, Any]]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(ai, "provider_models", broken)
    with caplog.at_level(logging.DEBUG), pytest.raises(HTTPClientError) as caught:
        await terax_api("ai/providers/stub/models")
    assert caught.value.code == 500
    assert any(r.exc_info for r in caplog.records)


@pytest.mark.parametrize("ai_config", [{"connection_test_timeout": SILENT_TIMEOUT}])
async def test_a_server_that_never_answers_fails_the_test_soon_and_says_so(
    terax_api: Api, silent_port: int, ai_config: dict
) -> None:
    base = f"http://127.0.0.1:{silent_port}/v1"
    await terax_api(
        "ai/providers/silent",
        method="PUT",
        body={"kind": "openai", "label": "Silent", "base_url": base, "local": True},
    )
    # The old test waited out the 120 s read timeout (and this request's 30 s) silently.
    result = await terax_api("ai/providers/silent/test", method="POST", body={}, request_timeout=30)
    assert result["ok"] is False
    assert result["reason"] == "provider_timeout"
    assert result["message"] == (
        f"Silent did not answer within {SILENT_TIMEOUT:g} s at http://127.0.0.1:{silent_port}: "
        "check the network connection, that the server is running, and the base URL."
    )
    # The model list behind the panel's dropdown answers as soon.
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("ai/providers/silent/models", request_timeout=30)
    assert caught.value.code == 504
    assert error_of(caught.value)["reason"] == "provider_timeout"


async def test_the_connection_test_lists_the_models(terax_api: Api) -> None:
    result = await terax_api("ai/providers/stub/test", method="POST", body={})
    assert result["ok"] is True
    assert result["models"] == ["stub-model", "tiny"]
    models = await terax_api("ai/providers/stub/models")
    assert [m["id"] for m in models["models"]] == ["stub-model", "tiny"]
