"""Approval policies: rules as the server matches them, callables, and what happens to a
call nobody decided (a person, or a denial with a note when the run is headless)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.notebook import kernel
from terax_jupyter.notebook.policy import HEADLESS_NOTE, Approval, ApprovalPolicy

TOOLS = {"edit", "write_file", "bash_run", "read_file"}


def approval(tool: str, *, path: str | None = None, command: str | None = None) -> Approval:
    return Approval.from_json(
        {
            "id": f"a-{tool}",
            "session_id": "s",
            "run_id": "r",
            "tool": tool,
            "status": "pending",
            "proposal": {
                "tool": tool,
                "kind": "command" if command else "edit",
                "summary": f"{tool} {path or command}",
                "path": path,
                "command": command,
                "diff": "-a\n+b\n" if path else None,
                "hunks": [],
                "payload": {},
            },
        }
    )


EDIT = approval("edit", path="src/app.py")
COMMAND = approval("bash_run", command="rm -rf build")


def test_rules_approve_what_they_cover_and_nothing_else() -> None:
    policy = ApprovalPolicy.of([{"tool": "edit", "path": "src/**"}], TOOLS)
    verdict = policy.verdict(EDIT, headless=True)
    assert verdict is not None
    assert (verdict.decision, verdict.by, verdict.rule) == (
        "approve",
        "rule",
        {"tool": "edit", "path": "src/**"},
    )
    assert policy.verdict(approval("edit", path="docs/x.md"), headless=False) is None
    denied = policy.verdict(COMMAND, headless=True)
    assert denied is not None
    assert (denied.decision, denied.by) == ("deny", "headless")


def test_command_prefixes_match_whole_words_without_shell_operators() -> None:
    policy = ApprovalPolicy.of([{"tool": "bash_run", "command_prefix": "git status"}], TOOLS)
    ok = policy.verdict(approval("bash_run", command="git status --short"), headless=True)
    assert ok is not None
    assert ok.decision == "approve"
    sneaky = policy.verdict(approval("bash_run", command="git status; rm -rf x"), headless=True)
    assert sneaky is not None
    assert sneaky.decision == "deny"


def test_bad_rules_are_refused_with_the_servers_message() -> None:
    with pytest.raises(InvalidRequest, match="Unknown tool"):
        ApprovalPolicy.of([{"tool": "nope"}], TOOLS)
    with pytest.raises(InvalidRequest, match="shell operators"):
        ApprovalPolicy.of([{"tool": "bash_run", "command_prefix": "a && b"}], TOOLS)
    with pytest.raises(ValueError, match="no 'approve everything'"):
        ApprovalPolicy.of("approve")
    with pytest.raises(TypeError):
        ApprovalPolicy.of(42)


@pytest.mark.parametrize(
    ("answer", "decision", "by"),
    [
        ("approve", "approve", "policy"),
        (True, "approve", "policy"),
        ("deny", "deny", "policy"),
        (False, "deny", "policy"),
        ("yes please", "deny", "policy_error"),  # not an answer: denied, never approved
        (("deny", "use git mv"), "deny", "policy"),
    ],
)
def test_a_callable_decides(answer: Any, decision: str, by: str) -> None:
    verdict = ApprovalPolicy.of(lambda a: answer).verdict(EDIT, headless=False)
    assert verdict is not None
    assert (verdict.decision, verdict.by) == (decision, by)
    if answer == ("deny", "use git mv"):
        assert verdict.message == "use git mv"
        assert verdict.body() == {"decision": "deny", "message": "use git mv"}


def test_a_callable_sees_the_proposal() -> None:
    seen: list[Approval] = []
    ApprovalPolicy.of(lambda a: seen.append(a)).verdict(EDIT, headless=False)
    assert seen[0].tool == "edit"
    assert seen[0].path == "src/app.py"
    assert "+b" in seen[0].diff


def test_a_callable_that_does_not_decide_leaves_it_to_a_person_or_the_headless_rule() -> None:
    policy = ApprovalPolicy.of(lambda a: None)
    assert policy.verdict(EDIT, headless=False) is None
    verdict = policy.verdict(EDIT, headless=True)
    assert verdict is not None
    assert (verdict.decision, verdict.by, verdict.message) == ("deny", "headless", HEADLESS_NOTE)
    assert "policy=" in HEADLESS_NOTE  # the note says what to pass


def test_a_failing_callable_denies() -> None:
    def broken(approval: Approval) -> str:
        raise KeyError("oops")

    verdict = ApprovalPolicy.of(broken).verdict(EDIT, headless=False)
    assert verdict is not None
    assert (verdict.decision, verdict.by) == ("deny", "policy_error")
    assert "KeyError" in (verdict.message or "")


def test_deny_denies_the_rest_even_with_a_person_there() -> None:
    verdict = ApprovalPolicy.of("deny").verdict(EDIT, headless=False)
    assert verdict is not None
    assert (verdict.decision, verdict.by) == ("deny", "policy")


def test_no_policy_waits_for_a_person_or_denies_headless() -> None:
    assert ApprovalPolicy.of(None).verdict(EDIT, headless=False) is None
    verdict = ApprovalPolicy.of(None).verdict(COMMAND, headless=True)
    assert verdict is not None
    assert verdict.decision == "deny"


def test_async_callables() -> None:
    async def decide(approval: Approval) -> str:
        await asyncio.sleep(0)
        return "approve" if approval.tool == "edit" else "deny"

    policy = ApprovalPolicy.of(decide)
    verdict = asyncio.run(policy.averdict(EDIT, headless=True))
    assert verdict is not None
    assert verdict.decision == "approve"
    verdict = policy.verdict(COMMAND, headless=False, resolve=asyncio.run)
    assert verdict is not None
    assert verdict.decision == "deny"
    # Without a loop to run on, an async policy cannot answer: denied, not approved.
    unresolved = policy.verdict(EDIT, headless=False)
    assert unresolved is not None
    assert unresolved.by == "policy_error"


def test_headless_detection() -> None:
    interactive = SimpleNamespace(_allow_stdin=True)
    unattended = SimpleNamespace(_allow_stdin=False)
    assert kernel.headless({}, interactive) is False  # JupyterLab
    assert kernel.headless({}, unattended) is True  # nbclient, papermill
    assert kernel.headless({"TERAX_HEADLESS": "1"}, interactive) is True
    assert kernel.headless({"TERAX_HEADLESS": "0"}, unattended) is False
    assert kernel.headless({}) is True  # a script: no kernel, no one to ask
