"""The agent end to end: a real server, a real model stub on 127.0.0.1, real files and bash."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import TYPE_CHECKING, Any

import psutil
import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.testing import model_stub as turns
from tests.services.ai.conftest import KEY

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api, Events

TWO_HUNKS = "".join(f"line {n}\n" for n in range(1, 31))


async def new_session(terax_api: Api, **fields: Any) -> str:
    session = await terax_api("ai/sessions", method="POST", body=fields)
    return str(session["id"])


async def run(
    terax_api: Api, open_events: Any, session_id: str, prompt: str, **extra: Any
) -> Events:
    session = await terax_api(f"ai/sessions/{session_id}")
    events = await open_events(session_id, after=str(session["last_seq"]))
    await terax_api(
        f"ai/sessions/{session_id}/runs", method="POST", body={"prompt": prompt, **extra}
    )
    return events


def tool_results(stub: ModelStub, request_index: int) -> list[dict[str, Any]]:
    body = stub.requests[request_index].body
    return [m for m in body["messages"] if m["role"] == "tool"]


# -- answers --------------------------------------------------------------------------------


async def test_a_streamed_answer_is_stored_as_it_comes(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    (jp_root_dir / "TERAX.md").write_text("# Memory\nAlways answer in haiku.\n")
    model_stub.script(
        [
            turns.text(
                "Hello from the stub, streamed in pieces.",
                chunk=5,
                input_tokens=30,
                output_tokens=9,
            )
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Say hello")
    finish = await events.until("finish")
    assert finish["reason"] == "stop"
    assert events.text() == "Hello from the stub, streamed in pieces."
    assert len(events.of("text_delta")) > 3
    assert [e["seq"] for e in events.seen] == sorted(e["seq"] for e in events.seen)
    messages = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    assert [(m["role"], m["status"]) for m in messages] == [
        ("user", "complete"),
        ("assistant", "complete"),
    ]
    assert messages[1]["content"] == "Hello from the stub, streamed in pieces."
    session = await terax_api(f"ai/sessions/{session_id}")
    assert session["title"] == "Say hello"
    assert not session["running"]
    assert session["usage"]["input_tokens"] == 30
    assert session["usage"]["output_tokens"] == 9
    sent = model_stub.requests[0].body
    assert sent["model"] == "stub-model"
    assert sent["messages"][0]["role"] == "system"
    assert "Always answer in haiku." in sent["messages"][0]["content"]  # project memory
    assert {tool["function"]["name"] for tool in sent["tools"]} >= {"read_file", "bash_run"}


async def test_the_anthropic_wire_format_runs_the_same_loop(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    (jp_root_dir / "notes.txt").write_text("anthropic can read this\n")
    model_stub.script(
        [turns.tool_call("read_file", {"path": "notes.txt"}), turns.text("It says it can read.")]
    )
    session_id = await new_session(terax_api, provider="stub-anthropic", model="claude-x")
    events = await run(terax_api, open_events, session_id, "Read notes.txt")
    assert (await events.until("finish"))["reason"] == "stop"
    assert model_stub.requests[0].path.endswith("/messages")
    finished = events.of("tool_call_finished")[0]
    assert "anthropic can read this" in finished["content"]
    assert not finished["is_error"]


async def test_turns_cost_what_the_model_is_priced_at(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    await terax_api(
        "ai/models",
        method="POST",
        body={
            "provider": "stub",
            "id": "priced",
            "context_window": 100000,
            "input_price": 3.0,
            "output_price": 15.0,
        },
    )
    model_stub.script([turns.text("Costly.", input_tokens=1000, output_tokens=200)])
    session_id = await new_session(terax_api, model="priced")
    events = await run(terax_api, open_events, session_id, "How much?")
    await events.until("finish")
    [usage] = events.of("usage")
    assert usage["cost"] == pytest.approx((1000 * 3.0 + 200 * 15.0) / 1e6)
    session = await terax_api(f"ai/sessions/{session_id}")
    assert session["usage"]["cost"] == pytest.approx(0.006)
    unpriced = await terax_api(f"ai/sessions/{await new_session(terax_api)}")
    assert unpriced["usage"]["cost"] is None
    for bad in (-1, "3", True, 1e9):
        with pytest.raises(HTTPClientError) as caught:
            await terax_api(
                "ai/models",
                method="POST",
                body={"provider": "stub", "id": "bad", "context_window": 4096, "input_price": bad},
            )
        assert caught.value.code == 400


async def test_todos_and_suggestions_reach_the_session(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    todos = [
        {"content": "Write the parser", "status": "in_progress"},
        {"content": "Test it", "status": "pending"},
    ]
    model_stub.script(
        [
            turns.tool_calls(
                [
                    ("todo_write", {"todos": todos}),
                    ("suggest_command", {"command": "pytest -q", "explanation": "tests"}),
                ]
            ),
            turns.text("Planned."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Plan the parser")
    await events.until("finish")
    assert not events.of("approval_requested")
    assert events.of("todos")[0]["todos"] == todos
    assert events.of("suggestion")[0]["command"] == "pytest -q"
    assert (await terax_api(f"ai/sessions/{session_id}"))["todos"] == todos


async def test_one_run_per_session(terax_api: Api, open_events: Any, model_stub: ModelStub) -> None:
    model_stub.script([turns.slow(turns.text("slow " * 20, chunk=5), 0.05)])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "first")
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(f"ai/sessions/{session_id}/runs", method="POST", body={"prompt": "2nd"})
    assert caught.value.code == 409
    assert error_of(caught.value)["reason"] == "run_active"
    await events.until("finish")


# -- tools and approvals --------------------------------------------------------------------


async def test_read_only_tools_run_at_once(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    (jp_root_dir / "README.md").write_text("# Project\nThe answer is 42.\n")
    model_stub.script(
        [turns.tool_call("read_file", {"path": "README.md"}), turns.text("The answer is 42.")]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "What is the answer?")
    await events.until("finish")
    assert not events.of("approval_requested")
    [result] = tool_results(model_stub, 1)
    assert "The answer is 42." in result["content"]
    calls = (await terax_api(f"ai/sessions/{session_id}/tool-calls"))["tool_calls"]
    assert [(c["name"], c["status"]) for c in calls] == [("read_file", "done")]


async def test_an_approved_edit_is_written(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    target = jp_root_dir / "app.py"
    target.write_text("print('hello')\n")
    model_stub.script(
        [
            turns.tool_call("read_file", {"path": "app.py"}),
            turns.tool_call(
                "edit", {"path": "app.py", "old_string": "hello", "new_string": "hello terax"}
            ),
            turns.text("Done."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Greet terax")
    requested = await events.until("approval_requested")
    approval = requested["approval"]
    assert approval["status"] == "pending"
    assert approval["proposal"]["path"] == "app.py"
    assert "+print('hello terax')" in approval["proposal"]["diff"]
    assert target.read_text() == "print('hello')\n"  # nothing before approval
    decided = await terax_api(
        f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"}
    )
    assert decided["status"] == "approved"
    assert decided["delivered"]
    assert (await events.until("finish"))["reason"] == "stop"
    assert target.read_text() == "print('hello terax')\n"
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "deny"})
    assert error_of(caught.value)["reason"] == "already_decided"


async def test_only_the_accepted_hunk_reaches_the_disk(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    target = jp_root_dir / "lines.txt"
    target.write_text(TWO_HUNKS)
    model_stub.script(
        [
            turns.tool_call("read_file", {"path": "lines.txt"}),
            turns.tool_call(
                "multi_edit",
                {
                    "path": "lines.txt",
                    "edits": [
                        {"old_string": "line 2\n", "new_string": "line two\n"},
                        {"old_string": "line 28\n", "new_string": "line twenty-eight\n"},
                    ],
                },
            ),
            turns.text("Edited."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Spell out two numbers")
    approval = (await events.until("approval_requested"))["approval"]
    assert len(approval["proposal"]["hunks"]) == 2
    decided = await terax_api(
        f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve", "hunks": [1]}
    )
    assert decided["status"] == "partially_approved"
    await events.until("finish")
    assert target.read_text() == TWO_HUNKS.replace("line 28\n", "line twenty-eight\n")
    [_, result] = tool_results(model_stub, 2)
    assert "1 of 2" in result["content"]


async def test_a_denied_command_never_runs(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    model_stub.script(
        [turns.tool_call("bash_run", {"command": "touch ran.txt"}), turns.text("Understood.")]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Make a file")
    approval = (await events.until("approval_requested"))["approval"]
    assert approval["proposal"]["command"] == "touch ran.txt"
    await terax_api(
        f"ai/approvals/{approval['id']}",
        method="POST",
        body={"decision": "deny", "message": "not now"},
    )
    await events.until("finish")
    assert not (jp_root_dir / "ran.txt").exists()
    [result] = tool_results(model_stub, 1)
    assert "denied" in result["content"]
    assert "not now" in result["content"]
    finished = events.of("tool_call_finished")[0]
    assert finished["status"] == "denied"
    assert finished["is_error"]


async def test_an_approved_command_runs_in_the_workspace(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    model_stub.script(
        [
            turns.tool_call("bash_run", {"command": "echo made > made.txt; echo $PWD"}),
            turns.text("Made."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Make a file")
    approval = (await events.until("approval_requested"))["approval"]
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await events.until("finish")
    assert (jp_root_dir / "made.txt").read_text() == "made\n"
    assert str(jp_root_dir) in tool_results(model_stub, 1)[0]["content"]


async def test_edits_need_a_fresh_read(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    target = jp_root_dir / "conf.ini"
    target.write_text("a=1\n")
    model_stub.script(
        [
            turns.tool_call("edit", {"path": "conf.ini", "old_string": "a=1", "new_string": "a=2"}),
            turns.tool_call("read_file", {"path": "conf.ini"}),
            turns.tool_call("bash_run", {"command": "echo a=3 > conf.ini"}),
            turns.tool_call("edit", {"path": "conf.ini", "old_string": "a=3", "new_string": "a=4"}),
            turns.text("Gave up."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Bump a")
    approval = (await events.until("approval_requested"))["approval"]
    assert approval["tool"] == "bash_run"  # the unread edit was refused without asking
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await events.until("finish")
    assert len(events.of("approval_requested")) == 1
    reasons = [e["data"].get("reason") for e in events.of("tool_call_finished")]
    assert reasons[0] == "not_read"
    assert reasons[3] == "changed_since_read"
    assert target.read_text() == "a=3\n"


async def test_denied_paths_and_commands_are_refused_without_asking(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    (jp_root_dir / ".env").write_text("TOKEN=never-read-me\n")
    model_stub.script(
        [
            turns.tool_calls(
                [
                    ("read_file", {"path": ".env"}),
                    ("bash_run", {"command": "rm -rf ~"}),
                    ("write_file", {"path": "/etc/terax-test", "content": "x"}),
                    ("read_file", {"path": "../outside.txt"}),
                ]
            ),
            turns.text("All refused."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Try the forbidden")
    await events.until("finish")
    assert not events.of("approval_requested")
    finished = events.of("tool_call_finished")
    assert all(e["is_error"] for e in finished)
    assert len(finished) == 4
    reasons = [e["data"]["reason"] for e in finished]
    assert reasons[0] == "path_denied"
    assert reasons[1] == "command_denied"
    assert reasons[2] in ("path_denied", "outside_workspace")
    assert reasons[3] == "outside_workspace"
    sent = json.dumps(model_stub.requests[1].body)
    assert "never-read-me" not in sent


async def test_tools_outside_the_agent_are_refused(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    await terax_api(
        "ai/agents/reader",
        method="PUT",
        body={"prompt": "Only read.", "tools": ["read_file", "grep"]},
    )
    model_stub.script(
        [turns.tool_call("bash_run", {"command": "touch nope"}), turns.text("Cannot.")]
    )
    session_id = await new_session(terax_api, agent="reader")
    events = await run(terax_api, open_events, session_id, "Run something")
    await events.until("finish")
    offered = {tool["function"]["name"] for tool in model_stub.requests[0].body["tools"]}
    assert offered == {"read_file", "grep"}
    assert events.of("tool_call_finished")[0]["data"]["reason"] == "tool_not_allowed"
    assert not events.of("approval_requested")
    assert not (jp_root_dir / "nope").exists()


async def test_auto_approve_rules_are_opt_in_and_audited(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path, jp_data_dir: Path
) -> None:
    model_stub.script(
        [
            turns.tool_call("bash_run", {"command": "touch auto.txt"}),
            turns.tool_call("bash_run", {"command": "touch asked.txt && echo more"}),
            turns.text("ok"),
        ]
    )
    session_id = await new_session(terax_api)
    session = await terax_api(
        f"ai/sessions/{session_id}/rules",
        method="PUT",
        body={"rules": [{"tool": "bash_run", "command_prefix": "touch"}]},
    )
    assert session["rules"] == [{"tool": "bash_run", "command_prefix": "touch"}]
    events = await run(terax_api, open_events, session_id, "go")
    approval = (await events.until("approval_requested"))["approval"]
    assert approval["proposal"]["command"].startswith("touch asked.txt &&")  # not auto
    assert (jp_root_dir / "auto.txt").exists()
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "deny"})
    await events.until("finish")
    assert len(events.of("auto_approved")) == 1
    audit = (jp_data_dir / "terax" / "audit.jsonl").read_text()
    actions = [json.loads(line)["action"] for line in audit.splitlines()]
    assert "ai.rules.set" in actions
    assert "ai.auto_approved" in actions


async def test_a_pending_approval_survives_a_reload(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    model_stub.script(
        [turns.tool_call("create_directory", {"path": "made"}), turns.text("Made it.")]
    )
    session_id = await new_session(terax_api)
    first = await run(terax_api, open_events, session_id, "Make a folder")
    approval = (await first.until("approval_requested"))["approval"]
    first.close()  # the page goes away
    session = await terax_api(f"ai/sessions/{session_id}")
    assert session["running"]
    assert [a["id"] for a in session["pending_approvals"]] == [approval["id"]]
    pending = await terax_api(f"ai/sessions/{session_id}/approvals", params={"status": "pending"})
    assert [a["id"] for a in pending["approvals"]] == [approval["id"]]
    again = await open_events(session_id, after=str(0))  # the reloaded page replays
    replayed = await again.until("approval_requested")
    assert replayed["approval"]["id"] == approval["id"]
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await again.until("finish")
    assert (jp_root_dir / "made").is_dir()


async def test_background_processes_end_with_their_session(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script(
        [
            turns.tool_call("bash_background", {"command": "echo serving; sleep 60"}),
            turns.tool_call("bash_list", {}),
            turns.text("It runs."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Start a server")
    approval = (await events.until("approval_requested"))["approval"]
    assert approval["proposal"]["kind"] == "process"
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await events.until("finish")
    listed = tool_results(model_stub, 2)[-1]["content"]
    pid = int(re.search(r"pid (\d+)", listed).group(1))
    assert "running" in listed
    assert psutil.pid_exists(pid)
    await terax_api(f"ai/sessions/{session_id}", method="DELETE")
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


async def test_the_agent_reads_a_terminal(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    terminal = await terax_api("pty/sessions", method="POST", body={"shell": "bash"})
    await terax_api(
        f"pty/sessions/{terminal['id']}/run",
        method="POST",
        body={"command": "echo terminal-says-$((6 * 7))", "timeout": 20},
    )
    model_stub.script(
        [turns.tool_call("get_terminal_output", {"block": -1}), turns.text("It printed 42.")]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "What did my terminal print?")
    await events.until("finish")
    [result] = tool_results(model_stub, 1)
    assert "terminal-says-42" in result["content"]
    await terax_api(f"pty/sessions/{terminal['id']}", method="DELETE")


# -- plan mode ------------------------------------------------------------------------------


async def test_plan_mode_queues_then_applies_what_the_user_keeps(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    (jp_root_dir / "a.txt").write_text("old\n")
    model_stub.script(
        [
            turns.tool_call("read_file", {"path": "a.txt"}),
            turns.tool_calls(
                [
                    ("edit", {"path": "a.txt", "old_string": "old", "new_string": "new"}),
                    ("bash_run", {"command": "touch planned.txt"}),
                ]
            ),
            turns.text("The plan is ready."),
            turns.text("Noted."),
        ]
    )
    session_id = await new_session(terax_api, plan_mode=True)
    events = await run(terax_api, open_events, session_id, "Plan it")
    await events.until("finish")
    assert not events.of("approval_requested")
    assert len(events.of("plan_item_queued")) == 2
    assert (jp_root_dir / "a.txt").read_text() == "old\n"
    assert not (jp_root_dir / "planned.txt").exists()
    items = (await terax_api(f"ai/sessions/{session_id}/plan"))["items"]
    assert [i["tool"] for i in items] == ["edit", "bash_run"]
    result = await terax_api(
        f"ai/sessions/{session_id}/plan",
        method="POST",
        body={"action": "apply", "decisions": {items[1]["id"]: {"decision": "deny"}}},
    )
    assert [o["status"] for o in result["outcomes"]] == ["approved", "denied"]
    assert (jp_root_dir / "a.txt").read_text() == "new\n"
    assert not (jp_root_dir / "planned.txt").exists()
    assert (await terax_api(f"ai/sessions/{session_id}/plan"))["items"] == []
    # The agent hears what happened on its next run.
    await terax_api(f"ai/sessions/{session_id}", method="PATCH", body={"plan_mode": False})
    again = await run(terax_api, open_events, session_id, "What happened?")
    await again.until("finish")
    history = json.dumps(model_stub.requests[-1].body["messages"])
    assert "The user reviewed the plan" in history
    assert "denied" in history


async def test_what_the_user_says_on_a_plan_item_reaches_the_agent(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    """A plan item applies through the same step as an approved call: the user's words on
    it go to the model with the result, as they do for a call approved during a run."""
    (jp_root_dir / "a.txt").write_text("old\n")
    model_stub.script(
        [
            turns.tool_call("read_file", {"path": "a.txt"}),
            turns.tool_call("edit", {"path": "a.txt", "old_string": "old", "new_string": "new"}),
            turns.text("Planned."),
            turns.text("Noted."),
        ]
    )
    session_id = await new_session(terax_api, plan_mode=True)
    events = await run(terax_api, open_events, session_id, "Plan it")
    await events.until("finish")
    [item] = (await terax_api(f"ai/sessions/{session_id}/plan"))["items"]
    said = {"decision": "approve", "message": "keep the old name in a comment"}
    result = await terax_api(
        f"ai/sessions/{session_id}/plan",
        method="POST",
        body={"action": "apply", "decisions": {item["id"]: said}},
    )
    [outcome] = result["outcomes"]
    assert outcome["status"] == "approved"
    assert "The user said: keep the old name in a comment" in outcome["result"]
    assert (jp_root_dir / "a.txt").read_text() == "new\n"
    await terax_api(f"ai/sessions/{session_id}", method="PATCH", body={"plan_mode": False})
    again = await run(terax_api, open_events, session_id, "What happened?")
    await again.until("finish")
    assert "keep the old name in a comment" in json.dumps(model_stub.requests[-1].body["messages"])


async def test_a_discarded_plan_changes_nothing(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    model_stub.script(
        [
            turns.tool_call("write_file", {"path": "new.txt", "content": "x\n"}),
            turns.text("Planned."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Plan", plan_mode=True)
    await events.until("finish")
    result = await terax_api(
        f"ai/sessions/{session_id}/plan", method="POST", body={"action": "discard"}
    )
    assert result == {"discarded": 1}
    assert not (jp_root_dir / "new.txt").exists()
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(f"ai/sessions/{session_id}/plan", method="POST", body={"action": "apply"})
    assert error_of(caught.value)["reason"] == "no_plan"


# -- sub-agents, limits, compaction, cancel -------------------------------------------------


async def test_a_subagent_explores_with_read_only_tools(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    (jp_root_dir / "core.py").write_text("def engine(): ...\n")
    model_stub.script(
        [
            turns.tool_call("run_subagent", {"agent": "explore", "task": "Where is engine?"}),
            turns.tool_call("grep", {"pattern": "def engine"}),  # the sub-agent
            turns.tool_call("edit", {"path": "core.py", "old_string": "a", "new_string": "b"}),
            turns.text("engine is in core.py line 1."),  # the sub-agent's answer
            turns.text("It is in core.py."),  # the main agent again
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Find engine")
    await events.until("finish")
    nested = [e for e in events.of("tool_call_finished") if e.get("parent_call_id")]
    assert [e["name"] for e in nested] == ["grep", "edit"]
    assert "core.py" in nested[0]["content"]
    assert nested[1]["data"]["reason"] == "tool_not_allowed"
    sub_tools = {tool["function"]["name"] for tool in model_stub.requests[1].body["tools"]}
    assert "run_subagent" not in sub_tools
    assert "edit" not in sub_tools
    [result] = tool_results(model_stub, 4)
    assert result["content"] == "engine is in core.py line 1."
    stored = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    assert len(stored) == 4  # user, call, result, answer: the sub-agent's turns stay out


@pytest.mark.parametrize("ai_config", [{"max_steps": 3}])
async def test_a_run_stops_at_the_step_limit(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    (jp_root_dir / "x.txt").write_text("x\n")
    model_stub.script([turns.tool_call("read_file", {"path": "x.txt"}) for _ in range(5)])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Loop")
    finish = await events.until("finish")
    assert finish["reason"] == "max_steps"
    assert finish["steps"] == 3
    assert len(model_stub.requests) == 3
    assert model_stub.pending == 2


async def test_context_is_compacted_before_the_window_fills(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    await terax_api(
        "ai/models",
        method="POST",
        body={"provider": "stub", "id": "tiny", "context_window": 12000, "max_output_tokens": 1000},
    )
    (jp_root_dir / "big.txt").write_text("".join(f"row {n} {'z' * 60}\n" for n in range(200)))
    model_stub.script(
        [
            turns.tool_call("read_file", {"path": "big.txt"}),
            turns.tool_call("read_file", {"path": "big.txt"}),
            turns.text("Read twice."),
        ]
    )
    session_id = await new_session(terax_api, model="tiny")
    events = await run(terax_api, open_events, session_id, "Read big.txt twice")
    await events.until("finish")
    [compaction] = events.of("compaction")
    assert compaction["superseded_reads"] == 1
    assert compaction["tokens_after"] < compaction["tokens_before"]
    results = tool_results(model_stub, 2)
    assert results[0]["content"].startswith("[Superseded")
    assert "row 199" in results[1]["content"]
    stored = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    assert "row 10 " in stored[2]["content"]  # the store keeps everything


async def test_cancel_keeps_what_was_streamed(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script([turns.slow(turns.text("word " * 200, chunk=5), 0.02), turns.text("next")])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Talk")
    for _ in range(5):
        await events.until("text_delta")
    await terax_api(f"ai/sessions/{session_id}/cancel", method="POST")
    finish = await events.until("finish")
    assert finish["reason"] == "cancelled"
    messages = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    assert messages[-1]["status"] == "cut"
    assert messages[-1]["content"].startswith("word word")
    assert messages[-1]["content"] == events.text()[: len(messages[-1]["content"])]
    again = await run(terax_api, open_events, session_id, "Again")
    assert (await again.until("finish"))["reason"] == "stop"
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(f"ai/sessions/{session_id}/cancel", method="POST")
    assert error_of(caught.value)["reason"] == "no_run"


async def test_cancel_while_waiting_for_approval_expires_it(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    model_stub.script([turns.tool_call("bash_run", {"command": "touch late.txt"})])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Wait")
    approval = (await events.until("approval_requested"))["approval"]
    await terax_api(f"ai/sessions/{session_id}/cancel", method="POST")
    await events.until("finish")
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(
            f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"}
        )
    assert error_of(caught.value)["reason"] == "already_decided"
    assert not (jp_root_dir / "late.txt").exists()


# -- what providers want back ----------------------------------------------------------------


async def move_builtin_to_the_stub(terax_api: Api, provider: str, stub: ModelStub) -> None:
    """A user points a built-in at the stub, as at a proxy: it stays that provider."""
    await terax_api(
        f"ai/providers/{provider}", method="PUT", body={"base_url": stub.url, "local": True}
    )


async def test_gemini_gets_its_thought_signatures_back_in_later_runs(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    """Issue 15 item 7: the signature Gemini attaches to a call is stored with the call and
    sent back in every later request, in this run and the next; the stub answers 400
    without it, as Gemini does."""
    (jp_root_dir / "app.py").write_text("print('hi')\n")
    model_stub.profile = "gemini"
    await move_builtin_to_the_stub(terax_api, "gemini", model_stub)
    model_stub.script(
        [
            turns.tool_call("read_file", {"path": "app.py"}),
            turns.text("It prints hi."),
            turns.tool_call("read_file", {"path": "app.py"}),
            turns.text("Still hi."),
        ]
    )
    session_id = await new_session(terax_api, provider="gemini", model="gemini-3-pro-preview")
    for prompt, answer in (("What does app.py do?", "It prints hi."), ("Again?", "Still hi.")):
        events = await run(terax_api, open_events, session_id, prompt)
        assert (await events.until("finish"))["reason"] == "stop", events.of("error")
        assert events.text().endswith(answer)
    assert len(model_stub.requests) == 4
    signed = [
        call["extra_content"]["google"]["thought_signature"]
        for message in model_stub.requests[3].body["messages"]
        for call in message.get("tool_calls") or []
    ]
    assert len(signed) == 2
    assert set(signed) <= model_stub.memory.signatures
    stored = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    calls = [c for m in stored for c in m["tool_calls"]]
    assert [c["extra"]["provider"] for c in calls] == ["gemini", "gemini"]


async def test_deepseek_gets_the_thoughts_of_a_turn_that_called_a_tool(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    """Issue 15 item 8: in thinking mode DeepSeek wants the reasoning_content of a turn that
    called a tool back (400 otherwise); the stored reasoning is sent, to DeepSeek only."""
    (jp_root_dir / "app.py").write_text("print('hi')\n")
    model_stub.profile = "deepseek"
    await move_builtin_to_the_stub(terax_api, "deepseek", model_stub)
    thinking = turns.tool_call("read_file", {"path": "app.py"})
    model_stub.script(
        [
            dataclasses.replace(thinking, reasoning="I should read app.py first."),
            turns.reasoning("Easy.", "It prints hi."),
        ]
    )
    session_id = await new_session(terax_api, provider="deepseek", model="deepseek-reasoner")
    events = await run(terax_api, open_events, session_id, "What does app.py do?")
    assert (await events.until("finish"))["reason"] == "stop", events.of("error")
    assert events.text().endswith("It prints hi.")
    [sent] = [m for m in model_stub.requests[1].body["messages"] if m.get("tool_calls")]
    assert sent["reasoning_content"] == "I should read app.py first."


# -- provider errors ------------------------------------------------------------------------


async def finish_with_error(terax_api: Api, open_events: Any, **session: Any) -> dict:
    session_id = await new_session(terax_api, **session)
    events = await run(terax_api, open_events, session_id, "hello")
    error = await events.until("error")
    assert (await events.until("finish"))["reason"] == "error"
    return error


async def test_a_local_server_that_is_not_running_says_so(terax_api: Api, open_events: Any) -> None:
    error = await finish_with_error(terax_api, open_events, provider="dead", model="llama3")
    assert error["reason"] == "provider_unreachable"
    assert error["message"].startswith("Nothing answers at http://127.0.0.1:")
    assert error["message"].endswith("is Ollama running?")


async def test_a_bad_key_is_named_and_never_shown(
    terax_api: Api,
    open_events: Any,
    keyed_stub: ModelStub,
    jp_data_dir: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    wrong = "sk-wrong-key-0b7d3e9f5a1c"
    await terax_api("secrets/KEYED_API_KEY", method="PUT", body={"value": wrong})
    error = await finish_with_error(terax_api, open_events, provider="keyed", model="m")
    assert error["reason"] == "bad_key"
    assert "KEYED_API_KEY" in error["message"]
    assert wrong not in json.dumps(error)
    await terax_api("secrets/KEYED_API_KEY", method="PUT", body={"value": KEY})
    keyed_stub.script([turns.text("Welcome.")])
    session_id = await new_session(terax_api, provider="keyed", model="m")
    events = await run(terax_api, open_events, session_id, "hello")
    await events.until("finish")
    assert events.text() == "Welcome."
    for path in (jp_data_dir / "terax").rglob("*"):
        if path.is_file() and "secrets" not in path.name:
            data = path.read_bytes()
            assert KEY.encode() not in data, path.name
            assert wrong.encode() not in data, path.name
    assert KEY not in caplog.text
    assert wrong not in caplog.text
    assert keyed_stub.requests[-1].headers["authorization"] == f"Bearer {KEY}"


async def test_rate_limits_are_retried_then_reported(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script(
        [turns.error(429, headers={"retry-after-ms": "50"}), turns.text("After the wait.")]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "hi")
    await events.until("finish")
    assert events.text() == "After the wait."
    assert len(model_stub.requests) == 2
    model_stub.script([turns.error(429, headers={"retry-after": "3600"})])
    error = await finish_with_error(terax_api, open_events)
    assert error["reason"] == "rate_limited"
    assert error["retry_after"] == 3600


@pytest.mark.parametrize("ai_config", [{"read_timeout": 0.3}])
async def test_a_model_that_stops_answering_times_out(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script([turns.slow(turns.text("late " * 5, chunk=5), 2.0)])
    error = await finish_with_error(terax_api, open_events)
    assert error["reason"] == "provider_timeout"
    assert "took too long" in error["message"]


@pytest.mark.parametrize("ai_config", [{"read_timeout": 1.0}])
async def test_keep_alive_comments_do_not_defeat_the_read_timeout(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    """Issue 15 item 11: read_timeout is the longest wait for data; a server sending only
    ": keep-alive" comments (4 s of them here) has stalled, however alive it says it is."""
    answer = turns.openai_events(turns.text("late"), "stub-model")
    stalled = [": keep-alive\n\n"] * 20 + answer
    model_stub.script([turns.slow(turns.raw(stalled), 0.2)])
    error = await finish_with_error(terax_api, open_events)
    assert error["reason"] == "provider_timeout"
    assert "took too long (the next part of the answer)" in error["message"]


async def test_an_unknown_model_and_a_cut_stream_are_errors_a_person_can_act_on(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script(
        [
            turns.error(
                404,
                body={"error": {"message": "model 'nope' not found", "code": "model_not_found"}},
            )
        ]
    )
    error = await finish_with_error(terax_api, open_events, model="nope")
    assert error["reason"] == "model_not_found"
    assert "nope" in error["message"]
    model_stub.script([turns.cut(turns.text("half an answer " * 10, chunk=5), 6)])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "hello")
    error = await events.until("error")
    assert error["reason"] == "stream_cut"
    messages = (await terax_api(f"ai/sessions/{session_id}/messages"))["messages"]
    assert messages[-1]["status"] == "cut"
    assert messages[-1]["content"].startswith("half an")


# -- sessions API ---------------------------------------------------------------------------


async def test_sessions_are_listed_searched_renamed_and_deleted(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script([turns.text("Sure.")])
    first = await new_session(terax_api, title="Refactor the parser")
    second = await new_session(terax_api)
    events = await run(terax_api, open_events, second, "Explain 100% of the_code")
    await events.until("finish")
    listed = (await terax_api("ai/sessions"))["sessions"]
    assert [s["id"] for s in listed][:2] == [second, first]
    found = (await terax_api("ai/sessions", params={"q": "100%"}))["sessions"]
    assert [s["id"] for s in found] == [second]
    renamed = await terax_api(f"ai/sessions/{first}", method="PATCH", body={"title": "Parser"})
    assert renamed["title"] == "Parser"
    await terax_api(f"ai/sessions/{first}", method="DELETE")
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(f"ai/sessions/{first}")
    assert caught.value.code == 404


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"prompt": ""}, "invalid_parameter"),
        ({"prompt": "x", "agent": "explore"}, "invalid_parameter"),
        ({"prompt": "x", "agent": "nobody"}, "agent_not_found"),
        ({"prompt": "x", "provider": "nowhere"}, "provider_not_found"),
        ({"prompt": "x", "colour": "red"}, "invalid_parameter"),
    ],
)
async def test_bad_runs_are_refused_and_start_nothing(
    terax_api: Api, model_stub: ModelStub, body: dict, reason: str
) -> None:
    session_id = await new_session(terax_api)
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(f"ai/sessions/{session_id}/runs", method="POST", body=body)
    assert error_of(caught.value)["reason"] == reason
    assert model_stub.requests == []
    assert not (await terax_api(f"ai/sessions/{session_id}"))["running"]


async def test_providers_models_and_connection_tests(terax_api: Api, model_stub: ModelStub) -> None:
    providers = {p["id"]: p for p in (await terax_api("ai/providers"))["providers"]}
    assert {"openai", "anthropic", "ollama", "stub"} <= set(providers)
    assert providers["openai"]["key_set"] is False
    assert providers["stub"]["local"] is True
    models = (await terax_api("ai/providers/stub/models"))["models"]
    assert [m["id"] for m in models] == ["stub-model", "tiny"]
    ok = await terax_api("ai/providers/stub/test", method="POST", body={"model": "tiny"})
    assert ok["ok"]
    assert ok["models"] == ["stub-model", "tiny"]
    missing = await terax_api("ai/providers/stub/test", method="POST", body={"model": "gone"})
    assert not missing["ok"]
    assert missing["reason"] == "model_not_found"
    dead = await terax_api("ai/providers/dead/test", method="POST")
    assert not dead["ok"]
    assert "is Ollama running?" in dead["message"]
    no_key = await terax_api("ai/providers/openai/test", method="POST")
    assert not no_key["ok"]
    assert no_key["reason"] == "missing_key"
