"""The administrator's policy as the agent applies it (issue 17 item 6): providers and models,
forced approvals, limits and the audit log of agent actions.

A real server with a policy file in a temporary folder (``TERAX_POLICY_DIRS``), the model stub
on 127.0.0.1, the real store, real bash. A few tests change the policy of the running server
(``security.policy``) to stand for a policy the administrator added after the user's work.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.notebook_view.cells import source_hash
from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.security.policy import Policy
from terax_jupyter.services.ai.agent_audit import arguments_digest
from terax_jupyter.services.ai.governance import parse_admin_rule
from terax_jupyter.testing import model_stub as turns
from tests.services.ai.test_agent_api import new_session, run

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api

ALLOWED = {
    "ai": {
        "providers": ["stub", "stub-anthropic"],
        "models": {"stub": ["stub-model"]},
    }
}


@pytest.fixture
def policy() -> dict[str, Any]:
    """The policy file of one test (parametrize to change)."""
    return {}


@pytest.fixture
def admin_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the administrator's audit log (``@LOGS@`` in a policy)."""
    return tmp_path_factory.mktemp("admin-logs")


@pytest.fixture
def terax_config(
    terax_config: dict[str, Any],
    policy: dict[str, Any],
    admin_logs: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("policy")
    text = json.dumps(policy).replace("@LOGS@", str(admin_logs))
    (folder / "terax_policy.json").write_text(text)
    monkeypatch.setenv("TERAX_POLICY_DIRS", str(folder))
    return terax_config


def ai_of(jp_serverapp: Any) -> Any:
    return jp_serverapp.web_app.settings["terax"].ai


async def refused(call: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(HTTPClientError) as caught:
        await call
    return caught.value.code, error_of(caught.value)


# -- providers and models -------------------------------------------------------------------


@pytest.mark.parametrize("policy", [ALLOWED])
async def test_only_allowed_providers_and_models_are_offered(
    terax_api: Api, model_stub: ModelStub
) -> None:
    answer = await terax_api("ai/providers")
    providers = {p["id"]: p for p in answer["providers"]}
    assert set(providers) == {"stub", "stub-anthropic"}  # no built-ins, no keyed, no dead
    assert providers["stub"]["allowed_models"] == ["stub-model"]
    assert providers["stub-anthropic"]["allowed_models"] is None
    assert providers["stub"]["locked"] is True
    assert answer["policy"]["providers"] == ["stub", "stub-anthropic"]
    listed = (await terax_api("ai/providers/stub/models"))["models"]
    assert [m["id"] for m in listed] == ["stub-model"]  # the stub offers tiny as well
    known = (await terax_api("ai/models"))["models"]
    assert all(m["provider"] in ("stub", "stub-anthropic") for m in known)


@pytest.mark.parametrize("policy", [ALLOWED])
async def test_a_disallowed_provider_or_model_is_refused_everywhere(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    checks = [
        terax_api("ai/sessions", method="POST", body={"provider": "keyed", "model": "x"}),
        terax_api("ai/sessions", method="POST", body={"provider": "stub", "model": "tiny"}),
        terax_api("ai/providers/keyed/test", method="POST", body={}),
        terax_api("ai/providers/openai/models"),
        terax_api("ai/providers/stub/test", method="POST", body={"model": "tiny"}),
        terax_api("ai/complete", method="POST", body={"prefix": "x", "provider": "keyed"}),
        terax_api(
            "ai/complete", method="POST", body={"prefix": "x", "provider": "stub", "model": "tiny"}
        ),
        terax_api(
            "ai/models",
            method="POST",
            body={"provider": "stub", "id": "big", "context_window": 1000},
        ),
    ]
    for check in checks:
        code, error = await refused(check)
        assert (code, error["reason"]) == (403, "model_not_allowed"), error
    code, error = await refused(
        terax_api("ai/providers/stub", method="PUT", body={"base_url": "http://10.9.9.9/v1"})
    )
    assert (code, error["reason"]) == (403, "provider_locked")
    session_id = await new_session(terax_api, provider="stub", model="stub-model")
    code, error = await refused(
        terax_api(f"ai/sessions/{session_id}", method="PATCH", body={"model": "tiny"})
    )
    assert (code, error["reason"]) == (403, "model_not_allowed")
    assert "tiny" in error["message"]
    assert "stub-model" in error["message"]
    # A model picked for one message.
    code, error = await refused(
        terax_api(
            f"ai/sessions/{session_id}/runs",
            method="POST",
            body={"prompt": "hi", "model": "tiny"},
        )
    )
    assert (code, error["reason"]) == (403, "model_not_allowed")
    assert model_stub.requests == []  # no model was asked anything
    session = await terax_api(f"ai/sessions/{session_id}")
    assert session["model"] == "stub-model"  # the refusals changed nothing
    # The allowed model still runs.
    model_stub.script([turns.text("Allowed.")])
    events = await run(terax_api, open_events, session_id, "hi")
    assert (await events.until("finish"))["reason"] == "stop"


@pytest.mark.parametrize(
    "policy", [{"ai": {"default_provider": "stub-anthropic", "default_model": "claude-x"}}]
)
async def test_the_policy_default_wins_over_the_configured_one(
    terax_api: Api, model_stub: ModelStub
) -> None:
    answer = await terax_api("ai/providers")  # configured: stub / stub-model
    assert (answer["default_provider"], answer["default_model"]) == ("stub-anthropic", "claude-x")
    session = await terax_api("ai/sessions", method="POST", body={})
    assert (session["provider"], session["model"]) == ("stub-anthropic", "claude-x")
    model_stub.script([turns.text("completed")])
    completion = await terax_api("ai/complete", method="POST", body={"prefix": "x"})
    # Completions follow the newest chat session, which has the policy's default.
    assert (completion["provider"], completion["model"]) == ("stub-anthropic", "claude-x")


async def test_a_session_stored_before_the_policy_is_refused_at_run_start(
    terax_api: Api, model_stub: ModelStub, jp_serverapp: Any
) -> None:
    session_id = await new_session(terax_api, provider="stub", model="tiny")
    ai_of(jp_serverapp).security.policy = Policy(models={"stub": ("stub-model",)})
    code, error = await refused(
        terax_api(f"ai/sessions/{session_id}/runs", method="POST", body={"prompt": "hi"})
    )
    assert (code, error["reason"]) == (403, "model_not_allowed")
    assert "tiny" in error["message"]
    assert model_stub.requests == []
    session = await terax_api(f"ai/sessions/{session_id}")
    assert not session["running"]


async def test_a_users_own_definition_of_an_allowed_provider_is_not_used(
    terax_api: Api, model_stub: ModelStub, jp_serverapp: Any
) -> None:
    # Moved before the policy: the work would go to the user's address, not the admin's.
    await terax_api("ai/providers/ollama", method="PUT", body={"base_url": model_stub.url})
    session_id = await new_session(terax_api, provider="ollama", model="stub-model")
    ai_of(jp_serverapp).security.policy = Policy(providers=("ollama", "stub"))
    code, error = await refused(
        terax_api(f"ai/sessions/{session_id}/runs", method="POST", body={"prompt": "hi"})
    )
    assert (code, error["reason"]) == (403, "model_not_allowed")
    assert "Remove your settings" in error["message"]
    assert model_stub.requests == []
    providers = {p["id"] for p in (await terax_api("ai/providers"))["providers"]}
    assert providers == {"stub"}


# -- approvals ------------------------------------------------------------------------------


RULE = {"tool": "bash_run", "command_prefix": "touch"}


@pytest.mark.parametrize("policy", [{"ai": {"approvals": "always"}}])
async def test_always_asks_even_with_a_rule_saved_earlier(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    session_id = await new_session(terax_api)
    code, error = await refused(
        terax_api(f"ai/sessions/{session_id}/rules", method="PUT", body={"rules": [RULE]})
    )
    assert (code, error["reason"]) == (403, "disabled_by_policy")
    assert (await terax_api(f"ai/sessions/{session_id}"))["rules"] == []
    # A rule the user saved before the administrator's policy: stored, but never applied.
    ai = ai_of(jp_serverapp)
    await ai.worker.call(ai.store.update_session, session_id, rules=[RULE])
    model_stub.script([turns.tool_call("bash_run", {"command": "touch asked.txt"}), turns.text("")])
    events = await run(terax_api, open_events, session_id, "go")
    approval = (await events.until("approval_requested"))["approval"]
    assert approval["proposal"]["command"] == "touch asked.txt"
    assert not (jp_root_dir / "asked.txt").exists()
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "deny"})
    await events.until("finish")
    assert events.of("auto_approved") == []
    session = await terax_api(f"ai/sessions/{session_id}")
    assert session["approvals"] == {"mode": "always", "admin_rules": []}
    # Clearing rules stays possible.
    cleared = await terax_api(f"ai/sessions/{session_id}/rules", method="PUT", body={"rules": []})
    assert cleared["rules"] == []


@pytest.mark.parametrize(
    "policy", [{"ai": {"approvals": "admin_rules", "admin_rules": ["bash_run: touch"]}}]
)
async def test_only_the_administrators_rules_auto_approve(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    session_id = await new_session(terax_api)
    mine = {"tool": "bash_run", "command_prefix": "echo"}
    code, error = await refused(
        terax_api(f"ai/sessions/{session_id}/rules", method="PUT", body={"rules": [mine]})
    )
    assert (code, error["reason"]) == (403, "disabled_by_policy")
    ai = ai_of(jp_serverapp)
    await ai.worker.call(ai.store.update_session, session_id, rules=[mine])  # from before
    model_stub.script(
        [
            turns.tool_call("bash_run", {"command": "touch admin.txt"}),
            turns.tool_call("bash_run", {"command": "echo hi > mine.txt"}),
            turns.text("done"),
        ]
    )
    events = await run(terax_api, open_events, session_id, "go")
    approval = (await events.until("approval_requested"))["approval"]
    assert approval["proposal"]["command"] == "echo hi > mine.txt"  # the user's rule: no
    assert (jp_root_dir / "admin.txt").exists()  # the administrator's rule approved it
    [auto] = events.of("auto_approved")
    assert auto["rule"] == RULE
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "deny"})
    await events.until("finish")
    session = await terax_api(f"ai/sessions/{session_id}")
    assert session["approvals"] == {"mode": "admin_rules", "admin_rules": [RULE]}


def test_admin_rules_are_written_as_text() -> None:
    assert parse_admin_rule("bash_run") == {"tool": "bash_run"}
    assert parse_admin_rule("*") == {"tool": "*"}
    assert parse_admin_rule(" bash_run:  git status ") == {
        "tool": "bash_run",
        "command_prefix": "git status",
    }
    assert parse_admin_rule("edit @ docs/**") == {"tool": "edit", "path": "docs/**"}
    for bad in ("", "bash_run:", "Bash Run", "edit @ ", "rm -rf"):
        with pytest.raises(ValueError, match="is not 'TOOL'"):
            parse_admin_rule(bad)


# -- limits ---------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", [{"limits": {"agent_steps_per_run": 2}}])
async def test_the_steps_per_run_limit_caps_the_configured_one(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    (jp_root_dir / "x.txt").write_text("x\n")
    model_stub.script([turns.tool_call("read_file", {"path": "x.txt"}) for _ in range(5)])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Loop")  # configured: 24 steps
    finish = await events.until("finish")
    assert (finish["reason"], finish["steps"]) == ("max_steps", 2)
    [limit] = events.of("step_limit")
    assert limit == {**limit, "limit": 2, "by_policy": True}
    assert len(model_stub.requests) == 2


@pytest.mark.parametrize("policy", [{"limits": {"agent_steps_per_run": 0}}])
async def test_a_step_limit_of_zero_refuses_runs(terax_api: Api, model_stub: ModelStub) -> None:
    session_id = await new_session(terax_api)
    code, error = await refused(
        terax_api(f"ai/sessions/{session_id}/runs", method="POST", body={"prompt": "hi"})
    )
    assert (code, error["reason"]) == (413, "policy_limit")
    assert "agent steps in one run" in error["message"]


@pytest.mark.parametrize("policy", [{"limits": {"concurrent_runs": 1}}])
async def test_runs_at_once_are_limited_across_sessions(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script(
        [turns.tool_call("create_directory", {"path": "made"}), turns.text("ok"), turns.text("2")]
    )
    first = await new_session(terax_api)
    second = await new_session(terax_api)
    events = await run(terax_api, open_events, first, "Make a folder")
    approval = (await events.until("approval_requested"))["approval"]  # the run waits
    code, error = await refused(
        terax_api(f"ai/sessions/{second}/runs", method="POST", body={"prompt": "hi"})
    )
    assert (code, error["reason"]) == (413, "policy_limit")
    assert "at most 1 agent runs at once" in error["message"]
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "deny"})
    await events.until("finish")
    later = await run(terax_api, open_events, second, "hi")  # the first one ended
    assert (await later.until("finish"))["reason"] == "stop"


@pytest.mark.parametrize("policy", [{"limits": {"concurrent_runs": 1}}])
async def test_runs_started_at_the_same_moment_keep_the_limit(
    terax_api: Api, model_stub: ModelStub, jp_serverapp: Any
) -> None:
    model_stub.script([turns.slow(turns.text("one"), 0.3), turns.text("two")])
    sessions = [await new_session(terax_api) for _ in range(3)]
    starts = [
        terax_api(f"ai/sessions/{session_id}/runs", method="POST", body={"prompt": "hi"})
        for session_id in sessions
    ]
    outcomes = await asyncio.gather(*starts, return_exceptions=True)
    started = [o for o in outcomes if isinstance(o, dict)]
    refusals = [error_of(o)["reason"] for o in outcomes if isinstance(o, HTTPClientError)]
    assert (len(started), refusals) == (1, ["policy_limit", "policy_limit"])
    ai = ai_of(jp_serverapp)
    for session_id in sessions:
        await ai.wait_run(session_id)


@pytest.mark.parametrize(
    "policy", [{"limits": {"tokens_per_day": 100}, "audit_log": "@LOGS@/agent.jsonl"}]
)
async def test_tokens_per_day_stop_a_run_and_refuse_the_next(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path, admin_logs: Path
) -> None:
    (jp_root_dir / "x.txt").write_text("x\n")
    model_stub.script(
        [
            turns.tool_call("read_file", {"path": "x.txt"}, input_tokens=90, output_tokens=20),
            turns.text("never asked"),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Read")
    finish = await events.until("finish")
    assert finish["reason"] == "policy_limit"
    [error] = events.of("error")
    assert error["reason"] == "policy_limit"
    assert "100 model tokens per day" in error["message"]
    assert "110" in error["message"]
    assert len(model_stub.requests) == 1  # stopped before the second step
    assert events.of("tool_call_finished")[0]["status"] == "done"  # the step's call ran
    # Deleting the session does not give the day's tokens back.
    await terax_api(f"ai/sessions/{session_id}", method="DELETE")
    fresh = await new_session(terax_api)
    code, refusal = await refused(
        terax_api(f"ai/sessions/{fresh}/runs", method="POST", body={"prompt": "again"})
    )
    assert (code, refusal["reason"]) == (413, "policy_limit")
    assert "midnight UTC" in refusal["message"]
    assert len(model_stub.requests) == 1
    lines = [json.loads(line) for line in (admin_logs / "agent.jsonl").read_text().splitlines()]
    ended = next(line for line in lines if line["event"] == "run.finished")
    assert (ended["reason"], ended["error"]["reason"]) == ("policy_limit", "policy_limit")
    assert lines[-1]["event"] == "run.refused"
    assert (lines[-1]["session"], lines[-1]["reason"]) == (fresh, "policy_limit")


@pytest.mark.parametrize("policy", [{"limits": {"cost_per_day": 0.01}}])
async def test_cost_per_day_refuses_the_next_run(
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
    model_stub.script([turns.text("Costly.", input_tokens=1000, output_tokens=600)])  # $0.012
    session_id = await new_session(terax_api, model="priced")
    events = await run(terax_api, open_events, session_id, "hi")
    assert (await events.until("finish"))["reason"] == "stop"
    code, error = await refused(
        terax_api(f"ai/sessions/{session_id}/runs", method="POST", body={"prompt": "more"})
    )
    assert (code, error["reason"]) == (413, "policy_limit")
    assert "0.01 USD of model use per day" in error["message"]
    assert len(model_stub.requests) == 1


@pytest.mark.parametrize("policy", [{"limits": {"background_processes": 1}}])
async def test_background_processes_at_once_are_limited(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script(
        [
            turns.tool_call("bash_background", {"command": "sleep 60"}),
            turns.tool_call("bash_background", {"command": "sleep 61"}),
            turns.text("ok"),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Start two")
    for _ in range(2):
        approval = (await events.until("approval_requested"))["approval"]
        await terax_api(
            f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"}
        )
    await events.until("finish")
    first, second = events.of("tool_call_finished")
    assert not first["is_error"]
    assert second["is_error"]
    assert "at most 1 background processes at once" in second["content"]
    assert second["data"]["reason"] == "policy_limit"
    await terax_api(f"ai/sessions/{session_id}", method="DELETE")  # stops the first


# -- the audit log --------------------------------------------------------------------------


@pytest.mark.parametrize("policy", [{"audit_log": "@LOGS@/agent.jsonl"}])
async def test_every_agent_action_is_one_json_line_in_the_admins_file(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path, admin_logs: Path
) -> None:
    audit_file = admin_logs / "agent.jsonl"
    arguments = {"command": "touch made.txt"}
    model_stub.script([turns.tool_call("bash_run", arguments), turns.text("Made.")])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Make a file")
    approval = (await events.until("approval_requested"))["approval"]
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await events.until("finish")
    assert (jp_root_dir / "made.txt").exists()
    lines = [json.loads(line) for line in audit_file.read_text().splitlines()]
    assert [line["event"] for line in lines] == [
        "run.started",
        "approval.requested",
        "approval.decided",
        "tool.call",
        "run.finished",
    ]
    for line in lines:
        assert line["v"] == 1
        assert line["source"] == "terax.agent"
        assert line["session"] == session_id
        assert line["user"]
        assert line["time"].endswith("Z")
    call = lines[3]
    assert call["tool"] == "bash_run"
    assert call["arguments_digest"] == arguments_digest(arguments)
    assert (call["decision"], call["outcome"]) == ("approved", "done")
    assert "touch made.txt" not in audit_file.read_text()  # arguments only as a digest
    assert lines[-1]["status"] == "finished"
    assert lines[-1]["steps"] == 2
    assert os.stat(audit_file).st_mode & 0o777 == 0o600


@pytest.mark.parametrize("policy", [{"audit_log": "stdout"}])
async def test_the_audit_goes_to_stdout_for_the_hubs_logs(
    terax_api: Api,
    open_events: Any,
    model_stub: ModelStub,
    jp_root_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (jp_root_dir / "x.txt").write_text("x\n")
    model_stub.script([turns.tool_call("read_file", {"path": "x.txt"}), turns.text("Read.")])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Read")
    await events.until("finish")
    out = capsys.readouterr().out
    lines = [json.loads(line) for line in out.splitlines() if '"terax.agent"' in line]
    assert [line["event"] for line in lines] == ["run.started", "tool.call", "run.finished"]
    assert lines[1]["decision"] == "not_gated"
    assert lines[1]["tool"] == "read_file"
    assert all(line["session"] == session_id for line in lines)


@pytest.mark.parametrize("policy", [{"audit_log": "@LOGS@/agent.jsonl"}])
async def test_rules_and_auto_approvals_are_in_the_audit(
    terax_api: Api, open_events: Any, model_stub: ModelStub, admin_logs: Path
) -> None:
    model_stub.script([turns.tool_call("bash_run", {"command": "touch a.txt"}), turns.text("")])
    session_id = await new_session(terax_api)
    await terax_api(f"ai/sessions/{session_id}/rules", method="PUT", body={"rules": [RULE]})
    events = await run(terax_api, open_events, session_id, "go")
    await events.until("finish")
    lines = [json.loads(line) for line in (admin_logs / "agent.jsonl").read_text().splitlines()]
    assert [line["event"] for line in lines] == [
        "rules.set",
        "run.started",
        "approval.auto",
        "tool.call",
        "run.finished",
    ]
    assert lines[2]["rule_source"] == "user"
    assert lines[3]["decision"] == "rule"


@pytest.fixture
def audit_target(admin_logs: Path, request: pytest.FixtureRequest) -> Path:
    """What the policy's audit_log names: a symbolic link or a folder (not a regular file)."""
    kind = request.param
    target = admin_logs / "agent.jsonl"
    if kind == "symlink":
        (admin_logs / "elsewhere.txt").write_text("keep\n")
        target.symlink_to(admin_logs / "elsewhere.txt")
    else:
        target.mkdir()
    return target


@pytest.mark.parametrize("audit_target", ["symlink", "folder"], indirect=True)
@pytest.mark.parametrize("policy", [{"audit_log": "@LOGS@/agent.jsonl"}])
async def test_an_audit_log_that_is_not_a_regular_file_keeps_the_agent_off(
    audit_target: Path, terax_api: Api, admin_logs: Path, model_stub: ModelStub
) -> None:
    code, error = await refused(terax_api("ai/sessions", method="POST", body={}))
    assert (code, error["reason"]) == (503, "audit_unavailable")
    assert str(audit_target) in error["message"]
    code, error = await refused(terax_api("ai/complete", method="POST", body={"prefix": "x"}))
    assert (code, error["reason"]) == (503, "audit_unavailable")
    assert _untouched(audit_target, admin_logs / "elsewhere.txt")
    assert model_stub.requests == []


def _untouched(target: Path, linked: Path) -> bool:
    """The link's file (when the target is a link) still holds only what it held."""
    return not target.is_symlink() or linked.read_text() == "keep\n"


def test_the_audit_file_is_appended_to_and_a_fifo_is_refused(tmp_path: Path) -> None:
    from terax_jupyter.security.redact import Redactor
    from terax_jupyter.services.ai.agent_audit import AgentAudit

    log = tmp_path / "agent.jsonl"
    log.write_text('{"earlier": true}\n')
    audit = AgentAudit(str(log), Redactor(), server_user="alice")
    assert audit.problem is None
    audit.record("run.started", user=None, session="s1", run="r1")
    audit.close()
    first, second = log.read_text().splitlines()
    assert json.loads(first) == {"earlier": True}  # kept: append-only, never truncated
    entry = json.loads(second)
    assert (entry["event"], entry["user"], entry["session"]) == ("run.started", "alice", "s1")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    refused_audit = AgentAudit(str(fifo), Redactor(), server_user="alice")
    assert refused_audit.problem is not None
    assert refused_audit.record("run.started", user="alice", session=None) is None


@pytest.mark.parametrize("policy", [{"audit_log": "@LOGS@/agent.jsonl"}])
async def test_notebook_changes_and_runs_are_audited_with_the_sources_approved(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path, admin_logs: Path
) -> None:
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell("x = 1")]
    book.cells[0].id = "first"
    (jp_root_dir / "nb.ipynb").write_text(nbformat.writes(book))
    edit = {
        "op": "replace",
        "id": "first",
        "expected_hash": source_hash("x = 1")[:12],
        "source": "x = 2",
    }
    model_stub.script(
        [
            turns.tool_call("notebook_edit", {"path": "nb.ipynb", "ops": [edit]}),
            turns.tool_call("notebook_run", {"path": "nb.ipynb", "ids": ["first"]}),
            turns.text("Done."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Change and run it")
    for decision in ("approve", "deny"):
        approval = (await events.until("approval_requested"))["approval"]
        await terax_api(
            f"ai/approvals/{approval['id']}", method="POST", body={"decision": decision}
        )
    await events.until("finish")
    lines = [json.loads(line) for line in (admin_logs / "agent.jsonl").read_text().splitlines()]
    decided = {line["tool"]: line for line in lines if line["event"] == "approval.decided"}
    assert decided["notebook_edit"]["decision"] == "approved"
    assert decided["notebook_edit"]["subject"] == {
        "path": "nb.ipynb",
        "ops": [
            {
                "op": "replace",
                "id": "first",
                "expected_hash": source_hash("x = 1")[:12],
                "source_hash": source_hash("x = 2"),
            }
        ],
    }
    ran = decided["notebook_run"]
    assert ran["decision"] == "denied"
    assert ran["subject"]["path"] == "nb.ipynb"
    assert ran["subject"]["kernel"] is None  # it was to start one
    [cell] = ran["subject"]["cells"]
    assert cell["id"] == "first"
    assert source_hash("x = 2").startswith(cell["source_hash"])
    assert "x = 2" not in (admin_logs / "agent.jsonl").read_text()  # sources only as hashes


@pytest.mark.parametrize("policy", [{"audit_log": "@LOGS@/agent.jsonl"}])
async def test_an_applied_plan_is_audited_with_what_each_item_changed(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path, admin_logs: Path
) -> None:
    model_stub.script(
        [turns.tool_call("notebook_create", {"path": "new.ipynb"}), turns.text("Planned.")]
    )
    session_id = await new_session(terax_api, plan_mode=True)
    events = await run(terax_api, open_events, session_id, "Plan a notebook")
    await events.until("finish")
    [item] = (await terax_api(f"ai/sessions/{session_id}/plan"))["items"]
    await terax_api(f"ai/sessions/{session_id}/plan", method="POST", body={"action": "apply"})
    assert nbformat.read(jp_root_dir / "new.ipynb", as_version=4).cells == []
    lines = [json.loads(line) for line in (admin_logs / "agent.jsonl").read_text().splitlines()]
    [applied] = [line for line in lines if line["event"] == "plan.applied"]
    assert applied["items"] == [
        {
            "approval": item["id"],
            "tool": "notebook_create",
            "decision": "approved",
            "subject": {"path": "new.ipynb"},
        }
    ]
