"""A run that makes one named tool call (what ``jupyter terax mcp`` sends for an external
agent): only the notebook tools that change or run something, only those the session's agent
has, one kind of run at a time, and a caller's name shown as plain text."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.services.ai.tool_requests import MAX_ARGUMENTS_CHARS
from tests.services.ai.test_agent_api import new_session

if TYPE_CHECKING:
    from tests.services.ai.conftest import Api


async def refused(terax_api: Api, session_id: str, body: dict[str, Any]) -> str:
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(f"ai/sessions/{session_id}/runs", method="POST", body=body)
    assert caught.value.code == 400
    assert caught.value.response is not None
    return json.loads(caught.value.response.body)["message"]


@pytest.mark.parametrize(
    "body",
    [
        {"tool": {"name": "bash_run", "arguments": {"command": "rm -rf ~"}}},
        {"tool": {"name": "write_file", "arguments": {"path": "x", "content": "y"}}},
        {"tool": {"name": "notebook_run", "arguments": {}, "as_user": "root"}},
        {"tool": {"name": "notebook_run", "arguments": ["not", "an", "object"]}},
        {"tool": {"name": "notebook_run", "arguments": {"path": "x" * MAX_ARGUMENTS_CHARS}}},
        {"tool": {"name": "notebook_run"}, "prompt": "and a prompt"},
        {"tool": {"name": "notebook_run"}, "replay": {"workflow": "w"}},
        {"tool": {"name": "notebook_run", "caller": 7}},
    ],
)
async def test_what_is_not_a_served_tool_call_is_refused_and_starts_nothing(
    terax_api: Api, body: dict[str, Any]
) -> None:
    session_id = await new_session(terax_api)
    await refused(terax_api, session_id, body)
    session = await terax_api(f"ai/sessions/{session_id}")
    assert not session["running"]
    assert (await terax_api(f"ai/sessions/{session_id}/tool-calls"))["tool_calls"] == []


async def test_a_tool_the_sessions_agent_lacks_is_refused(terax_api: Api) -> None:
    session_id = await new_session(terax_api, agent="ask")  # reads only
    message = await refused(
        terax_api, session_id, {"tool": {"name": "notebook_edit", "arguments": {}}}
    )
    assert "has no tool notebook_edit" in message


async def test_the_callers_name_is_shown_as_plain_text(terax_api: Api, open_events: Any) -> None:
    session_id = await new_session(terax_api)
    session = await terax_api(f"ai/sessions/{session_id}")
    events = await open_events(session_id, after=str(session["last_seq"]))
    started = await terax_api(
        f"ai/sessions/{session_id}/runs",
        method="POST",
        body={
            "tool": {
                "name": "kernel_variables",
                "arguments": {"path": "missing.ipynb"},
                "caller": "Evil\x1b[2J\nAgent\u202e" + "x" * 500,
            }
        },
    )
    await events.until("finish")
    messages = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    prompt = messages[0]["content"]
    assert prompt.startswith("kernel_variables, asked by Evil[2JAgentxxx")
    for hidden in ("\x1b", "\n", "\u202e"):
        assert hidden not in prompt
    assert len(prompt) < 200
    [call] = (await terax_api(f"ai/sessions/{session_id}/tool-calls"))["tool_calls"]
    assert call["id"] == started["tool_call_id"]
    assert call["status"] == "error"  # the tool's own refusal: no such notebook
