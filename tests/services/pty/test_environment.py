"""What a terminal inherits: the server's environment without its provider keys."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.base import SETTINGS_KEY

from .helpers import Recorder, wait_for

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from terax_jupyter.services.pty.manager import PtyManager

    Api = Callable[..., Awaitable[Any]]

pytestmark = pytest.mark.usefixtures("server_shell_home")

OPENAI_VALUE = "sk-server-openai-31415926535897"
CORP_VALUE = "corp-admin-key-27182818284590"
CONFIG_VALUE = "cfg-admin-key-16180339887498"
HUB_TOKEN = "hub-token-of-this-user-0123456789"


@pytest.fixture
def terax_config() -> dict[str, Any]:
    # An administrator's extra environment name and a configured key.
    return {
        "SecretsManager": {
            "backend": "file",
            "environment_names": ["OPENAI_API_KEY", "CORP_LLM_KEY"],
            "keys": {"CORP_KEY": CONFIG_VALUE},
        }
    }


def environment_of(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.isidentifier():
            found[name] = value
    return found


async def test_a_terminal_does_not_inherit_the_servers_provider_keys(
    terax_api: Api, jp_serverapp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_VALUE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-server-anthropic-0123456789")  # a known name
    monkeypatch.setenv("CORP_LLM_KEY", CORP_VALUE)  # the administrator's configured name
    monkeypatch.setenv("SOME_ALIAS", CONFIG_VALUE)  # a configured key under another name
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", HUB_TOKEN)
    monkeypatch.setenv("TERAX_TEST_PLAIN", "still-here")
    pty: PtyManager = jp_serverapp.web_app.settings[SETTINGS_KEY].pty
    described = await terax_api("pty/sessions", method="POST", body={"shell": "bash"})
    session = pty.get(described["id"])
    await wait_for(lambda: session.phase == "input", 15, "prompt")
    result = await terax_api(
        f"pty/sessions/{session.id}/run", method="POST", body={"command": "env"}
    )
    assert result["block"]["exit_code"] == 0
    seen = environment_of(result["text"])
    assert seen["TERAX_TEST_PLAIN"] == "still-here"
    assert seen["TERAX_TERMINAL"] == "1"
    # The hub token is the user's own credential to the hub (jupyterhub-singleuser and the
    # user's own hub API calls use it); Lab's terminals have it as well.
    assert seen["JUPYTERHUB_API_TOKEN"] == HUB_TOKEN
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CORP_LLM_KEY", "SOME_ALIAS"):
        assert name not in seen, name
    for value in (OPENAI_VALUE, CORP_VALUE, CONFIG_VALUE):
        assert value not in result["text"]
    # The server keeps them for itself: the key is still there for its provider.
    assert jp_serverapp.web_app.settings[SETTINGS_KEY].secrets.get("CORP_LLM_KEY") == CORP_VALUE


async def test_a_manager_without_the_keys_service_still_drops_the_usual_names(
    make_manager: Callable[..., PtyManager], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_VALUE)
    monkeypatch.setenv("TERAX_TEST_PLAIN", "still-here")
    manager = make_manager()
    session = await manager.create(shell="bash")
    recorder = Recorder()
    session.attach(recorder)
    await wait_for(lambda: session.phase == "input", 15, "prompt")
    session.write(b"env; echo DONE-$((40+2))\r")
    await wait_for(lambda: b"DONE-42" in recorder.output, 15, "env")
    text = recorder.output.decode(errors="replace").replace("\r", "")
    assert "TERAX_TEST_PLAIN=still-here" in text
    assert "OPENAI_API_KEY" not in text
    assert OPENAI_VALUE not in text
