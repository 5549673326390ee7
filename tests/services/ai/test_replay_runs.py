"""``/replay``: the user replays a saved workflow in an AI session with no model call; a
destructive one asks on the same card as the agent's tool, and typed values stay out of the
conversation. Real Chromium, a real local web app, the model stub (which must hear nothing)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.browser.evals.site import EvalSite
from tests.services.ai.test_agent_api import new_session
from tests.services.browser.test_api import ref

if TYPE_CHECKING:
    from collections.abc import Iterator

    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api, Events


@pytest.fixture
def site() -> Iterator[EvalSite]:
    with EvalSite() as app:
        yield app


async def save_delete_alpha(terax_api: Api, site: EvalSite) -> None:
    """Record "delete alpha report" through the REST tab actions and save it destructive."""
    tab = "browser/tabs/rec"
    page = await terax_api(f"{tab}/open", method="POST", body={"url": site.url("/items")})
    page = await terax_api(
        f"{tab}/click", method="POST", body={"ref": ref(page, 'link "Delete alpha report"')}
    )
    await terax_api(
        f"{tab}/click", method="POST", body={"ref": ref(page, 'button "Confirm delete"')}
    )
    await terax_api(
        f"{tab}/save",
        method="POST",
        body={
            "name": "delete-alpha",
            "side_effect": "destructive",
            "postconditions": [{"kind": "text_contains", "value": "2 items"}],
        },
    )
    assert site.deleted == ["alpha report"]
    site.reset()


async def save_sign_in(terax_api: Api, site: EvalSite) -> None:
    tab = "browser/tabs/login"
    page = await terax_api(f"{tab}/open", method="POST", body={"url": site.url("/login")})
    await terax_api(
        f"{tab}/type",
        method="POST",
        body={"ref": ref(page, 'textbox "Username"'), "text": "alice", "input": "username"},
    )
    await terax_api(
        f"{tab}/type",
        method="POST",
        body={"ref": ref(page, 'textbox "Password"'), "text": "pw-1", "input": "password"},
    )
    await terax_api(f"{tab}/click", method="POST", body={"role": "button", "name": "Sign in"})
    await terax_api(f"{tab}/wait", method="POST", body={"title_contains": "Dashboard"})
    await terax_api(
        f"{tab}/save",
        method="POST",
        body={
            "name": "sign-in",
            "side_effect": "mutating",
            "postconditions": [{"kind": "title_contains", "value": "Dashboard"}],
        },
    )
    site.sign_ins.clear()


async def replay(
    terax_api: Api, open_events: Any, session_id: str, workflow: str, **inputs: str
) -> Events:
    session = await terax_api(f"ai/sessions/{session_id}")
    events = await open_events(session_id, after=str(session["last_seq"]))
    body: dict[str, Any] = {"workflow": workflow}
    if inputs:
        body["inputs"] = inputs
    await terax_api(f"ai/sessions/{session_id}/runs", method="POST", body={"replay": body})
    return events


async def test_a_destructive_replay_asks_once_and_runs_with_no_model_call(
    terax_api: Api, open_events: Any, model_stub: ModelStub, site: EvalSite
) -> None:
    await save_delete_alpha(terax_api, site)
    session_id = await new_session(terax_api)
    # A "*" rule covers no destructive replay: the card is shown all the same.
    await terax_api(
        f"ai/sessions/{session_id}/rules", method="PUT", body={"rules": [{"tool": "*"}]}
    )

    events = await replay(terax_api, open_events, session_id, "delete-alpha")
    approval = (await events.until("approval_requested"))["approval"]
    shown = approval["proposal"]["payload"]["shown"]
    assert (shown["version"], shown["side_effect"]) == (1, "destructive")
    assert shown["origin"] == site.url("/").rstrip("/")
    assert site.deleted == []  # nothing before the answer
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "deny"})
    finish = await events.until("finish")
    assert finish["reason"] == "stop"
    assert site.deleted == []

    events = await replay(terax_api, open_events, session_id, "delete-alpha")
    approval = (await events.until("approval_requested"))["approval"]
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await events.until("finish")
    assert site.deleted == ["alpha report"]
    done = [e for e in events.of("tool_call_finished")][-1]
    assert (done["name"], done["status"]) == ("browser_run_destructive_workflow", "done")
    assert done["data"]["steps_replayed"] >= 2

    assert model_stub.requests == []  # no model was asked, in either run
    messages = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"] * 2
    assert messages[0]["content"] == "/replay delete-alpha"
    assert messages[1]["tool_calls"][0]["name"] == "browser_run_destructive_workflow"
    assert "denied" in messages[2]["content"]
    assert "Replayed 'delete-alpha'" in messages[5]["content"]


async def test_a_replay_with_inputs_keeps_the_values_out_of_the_conversation(
    terax_api: Api, open_events: Any, model_stub: ModelStub, site: EvalSite
) -> None:
    await save_sign_in(terax_api, site)
    # A session with no provider or model may replay: no model is asked.
    session_id = await new_session(terax_api, provider=None, model=None)
    assert (await terax_api(f"ai/sessions/{session_id}"))["model"] is None
    events = await replay(
        terax_api, open_events, session_id, "sign-in", username="bob", password="s3cret-pw"
    )
    await events.until("finish")
    assert not events.of("approval_requested")  # mutating: runs at once outside plan mode
    assert site.sign_ins == ["bob"]
    assert model_stub.requests == []

    messages = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    assert messages[0]["content"] == "/replay sign-in (password, username)"
    stored = repr(messages) + repr(
        (await terax_api(f"ai/sessions/{session_id}/tool-calls"))["tool_calls"]
    )
    assert "s3cret-pw" not in stored
    assert "bob" not in stored
    assert "{{password}}" in stored


async def test_bad_replays_are_refused_and_start_nothing(
    terax_api: Api, model_stub: ModelStub, site: EvalSite
) -> None:
    session_id = await new_session(terax_api)
    cases = [
        ({"replay": {"workflow": "nothing-here"}}, 404, "workflow_not_found"),
        ({"replay": {"workflow": "x"}, "prompt": "and this"}, 400, "invalid_parameter"),
        ({"replay": {"workflow": ""}}, 400, "invalid_parameter"),
        ({"replay": {"workflow": "x", "inputs": {"not a name": "v"}}}, 400, "invalid_input_name"),
        ({"replay": {"workflow": "x", "inputs": {"a": 1}}}, 400, "invalid_parameter"),
        ({"replay": {"workflow": "x", "extra": True}}, 400, "invalid_parameter"),
        ({"replay": "x"}, 400, "invalid_parameter"),
    ]
    for body, status, reason in cases:
        with pytest.raises(HTTPClientError) as caught:
            await terax_api(f"ai/sessions/{session_id}/runs", method="POST", body=body)
        assert (caught.value.code, error_of(caught.value)["reason"]) == (status, reason), body
    assert (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"] == []
    assert model_stub.requests == []
