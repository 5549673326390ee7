"""Answers the model did not end itself, and steps that failed: a tool call cut by the output
limit stops the run at once (and a run may continue with a higher limit), an answer cut by the
limit or a content filter is reported, and a failed step leaves no empty assistant message
that a strict provider (Mistral) would refuse in every later request."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.ai.providers.base import Message
from terax_jupyter.testing import model_stub as turns
from tests.services.ai.test_agent_api import new_session, run

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api

# The stub's models are unknown and local: 4096 output tokens per step by default.
DEFAULT_LIMIT = 4096
CUT_ARGUMENTS = '{"path": "big.txt", "content": "line 1\\nline 2\\nline 3\\nli'


def cut_write(**usage: int) -> turns.Turn:
    """A write_file call whose arguments the output limit cut off mid-string."""
    turn = turns.tool_call("write_file", CUT_ARGUMENTS, output_tokens=DEFAULT_LIMIT, **usage)
    return dataclasses.replace(turn, finish="length")


def sent_limit(body: dict[str, Any]) -> int:
    return int(body.get("max_tokens") or body.get("max_completion_tokens"))


@pytest.mark.parametrize("provider", ["stub", "stub-anthropic"])
async def test_a_tool_call_cut_by_the_output_limit_stops_at_once(
    terax_api: Api,
    open_events: Any,
    model_stub: ModelStub,
    jp_root_dir: Path,
    jp_serverapp: Any,
    provider: str,
) -> None:
    # Before, the run asked again with the same limit until the step limit (24 calls).
    model_stub.script([cut_write() for _ in range(30)])
    session_id = await new_session(terax_api, provider=provider)
    events = await run(terax_api, open_events, session_id, "Write big.txt")
    finish = await events.until("finish")
    assert len(model_stub.requests) == 1
    assert sent_limit(model_stub.requests[0].body) == DEFAULT_LIMIT
    assert finish["reason"] == "output_limit"
    assert finish["max_output_tokens"] == DEFAULT_LIMIT
    assert finish["continue_max_output_tokens"] == 2 * DEFAULT_LIMIT
    assert finish["tools"] == ["write_file"]
    (cut,) = events.of("answer_cut")
    assert cut["reason"] == "length"
    assert cut["tools"] == ["write_file"]
    (refused,) = events.of("tool_call_finished")
    assert refused["is_error"]
    assert refused["data"] == {"reason": "output_limit"}
    assert "output limit of 4096 tokens cut this write_file call off" in refused["content"]
    assert not events.of("step_limit")
    assert not events.of("approval_requested")
    assert not (jp_root_dir / "big.txt").exists()
    (stored,) = jp_serverapp.web_app.settings["terax"].ai.store.runs(session_id)
    assert (stored["status"], stored["steps"]) == ("finished", 1)

    # Continue with the higher limit: the model sees that its call did not run and tries
    # again with room for it.
    model_stub.script(
        [
            turns.tool_call("write_file", {"path": "big.txt", "content": "line 1\nline 2\n"}),
            turns.text("Written."),
        ]
    )
    again = await run(
        terax_api,
        open_events,
        session_id,
        "Continue",
        max_output_tokens=finish["continue_max_output_tokens"],
    )
    approval = (await again.until("approval_requested"))["approval"]
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    finished = await again.until("finish")
    assert finished["reason"] == "stop"
    assert again.of("run_started")[0]["run"]["max_output_tokens"] == 2 * DEFAULT_LIMIT
    assert (jp_root_dir / "big.txt").read_text() == "line 1\nline 2\n"
    second = model_stub.requests[1].body
    assert sent_limit(second) == 2 * DEFAULT_LIMIT
    assert "Not run: the output limit" in str(second["messages"])
    assert sent_limit(model_stub.requests[2].body) == 2 * DEFAULT_LIMIT
    # The next run without the option is back at the default.
    model_stub.script([turns.text("ok")])
    third = await run(terax_api, open_events, session_id, "And now?")
    await third.until("finish")
    assert sent_limit(model_stub.requests[-1].body) == DEFAULT_LIMIT


async def test_a_cut_call_among_complete_ones_runs_none_of_them(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    turn = turns.tool_calls(
        [("create_directory", {"path": "made"}), ("write_file", CUT_ARGUMENTS)],
        output_tokens=DEFAULT_LIMIT,
    )
    model_stub.script([dataclasses.replace(turn, finish="length"), turns.text("never")])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Make both")
    finish = await events.until("finish")
    assert finish["reason"] == "output_limit"
    assert finish["tools"] == ["create_directory", "write_file"]
    assert len(model_stub.requests) == 1
    assert len(events.of("tool_call_finished")) == 2
    assert not events.of("approval_requested")
    assert not (jp_root_dir / "made").exists()


async def test_no_higher_limit_is_offered_above_the_ceiling(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script([cut_write()])
    session_id = await new_session(terax_api)
    ceiling = 65536
    events = await run(
        terax_api, open_events, session_id, "Write big.txt", max_output_tokens=ceiling
    )
    finish = await events.until("finish")
    assert finish["reason"] == "output_limit"
    assert finish["max_output_tokens"] == ceiling
    assert finish["continue_max_output_tokens"] is None
    assert sent_limit(model_stub.requests[0].body) == ceiling


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (65537, "at most 65536"),
        (0, "whole number"),
        (True, "whole number"),
        ("8192", "whole number"),
        (1.5, "whole number"),
    ],
)
async def test_a_bad_output_limit_is_refused_and_starts_nothing(
    terax_api: Api, model_stub: ModelStub, jp_serverapp: Any, value: Any, says: str
) -> None:
    session_id = await new_session(terax_api)
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(
            f"ai/sessions/{session_id}/runs",
            method="POST",
            body={"prompt": "hi", "max_output_tokens": value},
        )
    error = error_of(caught.value)
    assert caught.value.code == 400
    assert error["reason"] == "invalid_parameter"
    assert says in error["message"]
    assert jp_serverapp.web_app.settings["terax"].ai.store.runs(session_id) == []
    assert model_stub.requests == []


@pytest.mark.parametrize(
    ("finish", "continue_limit"), [("length", 2 * DEFAULT_LIMIT), ("content_filter", None)]
)
async def test_an_answer_cut_by_the_limit_or_a_filter_is_reported(
    terax_api: Api, open_events: Any, model_stub: ModelStub, finish: str, continue_limit: Any
) -> None:
    model_stub.script([turns.text("The first half of the answ", finish=finish)])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Explain")
    ended = await events.until("finish")
    (cut,) = events.of("answer_cut")
    assert cut["reason"] == finish
    assert cut["tools"] == []
    assert ended["reason"] == finish
    assert ended["cut"] == finish
    assert ended.get("continue_max_output_tokens") == continue_limit
    assert events.text() == "The first half of the answ"
    # Stored as cut, so a reloaded panel still says the answer was cut off.
    messages = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    assert [(m["role"], m["status"]) for m in messages] == [
        ("user", "complete"),
        ("assistant", "cut"),
    ]


async def test_an_answer_that_ends_normally_reports_no_cut(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script([turns.text("All of it.")])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Explain")
    ended = await events.until("finish")
    assert not events.of("answer_cut")
    assert "cut" not in ended
    assert ended["reason"] == "stop"


# -- empty assistant messages --------------------------------------------------------------


@pytest.mark.parametrize("provider", ["stub", "stub-anthropic"])
async def test_a_failed_step_leaves_nothing_a_strict_provider_refuses(
    terax_api: Api, open_events: Any, model_stub: ModelStub, provider: str
) -> None:
    model_stub.strict = True  # 400 to an empty assistant message, as Mistral answers
    model_stub.script([turns.error(400)])
    session_id = await new_session(terax_api, provider=provider)
    failed = await run(terax_api, open_events, session_id, "First")
    assert (await failed.until("error"))["reason"] != "internal_error"
    await failed.until("finish")
    messages = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    assert [m["role"] for m in messages] == ["user"]

    model_stub.script([turns.text("Second answer.")])
    events = await run(terax_api, open_events, session_id, "Second")
    ended = await events.until("finish")
    assert not events.of("error"), events.of("error")
    assert ended["reason"] == "stop"
    assert events.text() == "Second answer."
    # and the run after that too (before, every later run failed)
    model_stub.script([turns.text("Third answer.")])
    third = await run(terax_api, open_events, session_id, "Third")
    assert (await third.until("finish"))["reason"] == "stop"
    assert not third.of("error")


async def test_an_empty_answer_already_stored_is_not_sent(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_serverapp: Any
) -> None:
    # A history stored by an older version, with the empty "cut" row a failed step left.
    session_id = await new_session(terax_api)
    store = jp_serverapp.web_app.settings["terax"].ai.store
    store.add_message(session_id, Message("user", "Earlier"))
    store.add_message(session_id, Message("assistant"), status="cut")
    store.add_message(session_id, Message("assistant", " \n", reasoning="hm"))
    model_stub.strict = True
    model_stub.script([turns.text("Fine.")])
    events = await run(terax_api, open_events, session_id, "Now")
    ended = await events.until("finish")
    assert ended["reason"] == "stop", events.of("error")
    sent = model_stub.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user"]


def test_the_strict_stub_refuses_an_empty_assistant_message(model_stub: ModelStub) -> None:
    # The checks above could pass with a stub that refuses nothing: show that it refuses.
    model_stub.strict = True
    body = {
        "model": "stub-model",
        "stream": True,
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "b"},
        ],
    }
    answer = httpx.post(f"{model_stub.url}/chat/completions", json=body)
    assert answer.status_code == 400
    assert "Assistant message must have either content or tool_calls" in answer.text
    body["messages"][1] = {"role": "assistant", "content": "x"}
    assert httpx.post(f"{model_stub.url}/chat/completions", json=body).status_code == 200
