"""todo_write and suggest_command: what they emit, what they refuse, and that nothing runs."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.ai.tools.planning import MAX_TODOS, SuggestCommand, TodoWrite

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.services.ai.tools.base import ToolContext

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def emitted(context: ToolContext) -> list[dict[str, Any]]:
    return context.emitted  # type: ignore[attr-defined,no-any-return]


async def test_todo_write_replaces_the_list_and_emits_it(context: ToolContext) -> None:
    todos = [
        {"content": "Read the   code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Run the tests", "status": "pending"},
    ]
    result = await TodoWrite().run({"todos": todos}, context)
    assert result.content == (
        "Todo list updated: 1 of 3 completed, 1 pending. In progress: Fix the bug"
    )
    expected = [{**todos[0], "content": "Read the code"}, todos[1], todos[2]]
    assert emitted(context) == [{"type": "todos", "todos": expected}]
    assert result.data == {"todos": expected}
    second = [{"content": "Only this", "status": "pending"}]
    await TodoWrite().run({"todos": second}, context)
    assert emitted(context)[-1] == {"type": "todos", "todos": second}
    cleared = await TodoWrite().run({"todos": []}, context)
    assert cleared.content == "Todo list cleared."
    assert emitted(context)[-1] == {"type": "todos", "todos": []}


@pytest.mark.parametrize(
    ("todos", "words"),
    [
        (
            [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}],
            "At most one todo may be in_progress",
        ),
        ([{"content": "a", "status": "done"}], "Todo 1 has status 'done'"),
        ([{"content": "  ", "status": "pending"}], "Todo 1 has no content"),
        ([{"content": "a"}], "status None"),
        ([{"content": "a", "status": "pending", "id": 1}], "only content and status"),
        (["a"], "must be an object"),
        ("a, b", "must be a list"),
        (None, "must be a list"),
        ([{"content": "x" * 501, "status": "pending"}], "longer than 500"),
        ([{"content": "x", "status": "pending"}] * (MAX_TODOS + 1), f"At most {MAX_TODOS}"),
    ],
)
async def test_todo_write_refuses_bad_lists(context: ToolContext, todos: Any, words: str) -> None:
    with pytest.raises(InvalidRequest, match=words):
        await TodoWrite().run({"todos": todos}, context)
    assert emitted(context) == []


async def test_todo_write_redacts_secrets(context: ToolContext) -> None:
    todos = [{"content": f"Use key {SECRET}", "status": "pending"}]
    result = await TodoWrite().run({"todos": todos}, context)
    assert SECRET not in str(emitted(context))
    assert SECRET not in str(result.data)


async def test_suggest_command_emits_and_never_runs(context: ToolContext, ws: Path) -> None:
    command = f"touch {ws / 'marker'}"
    result = await SuggestCommand().run(
        {"command": command, "explanation": "Creates the marker.\nHarmless."}, context
    )
    assert "not run" in result.content
    assert emitted(context) == [
        {"type": "suggestion", "command": command, "explanation": "Creates the marker.\nHarmless."}
    ]
    await asyncio.sleep(0.05)
    assert not (ws / "marker").exists()
    assert not SuggestCommand.mutating


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("ls\nrm -rf ~", "control_character"),
        ("ls\r", "control_character"),
        ("echo \x1b[2Jhi", "control_character"),
        ("echo\tx", "control_character"),
        ("echo \u202eexe.sh", "control_character"),
        ("echo a\u200bb", "control_character"),
        ("   ", "invalid_argument"),
        ("", "invalid_argument"),
        ("x" * 8193, "invalid_argument"),
    ],
)
async def test_suggest_command_refuses_hidden_characters(
    context: ToolContext, command: str, reason: str
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        await SuggestCommand().run({"command": command, "explanation": "x"}, context)
    assert raised.value.reason == reason
    assert emitted(context) == []


async def test_suggest_command_explanation_rules_and_redaction(context: ToolContext) -> None:
    with pytest.raises(InvalidRequest, match="explanation contains a control"):
        await SuggestCommand().run({"command": "ls", "explanation": "a\x1b]0;x\x07"}, context)
    with pytest.raises(InvalidRequest, match="'explanation' is required"):
        await SuggestCommand().run({"command": "ls"}, context)
    await SuggestCommand().run(
        {"command": f"export OPENAI_API_KEY={SECRET}", "explanation": "Sets the key."}, context
    )
    assert SECRET not in str(emitted(context))
