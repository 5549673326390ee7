"""The agent on a read-only server: a chat and the tools that look still work; every tool
that would change something (edits, commands, process kills, workflow saves and replays
that act) is refused with ``read_only`` before it is proposed, so nothing asks for an
approval and nothing is queued in a plan."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.testing import model_stub as turns
from tests.services.ai.test_agent_api import new_session, run, tool_results

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api

MUTATING_CALLS = [
    ("write_file", {"path": "new.txt", "content": "x\n"}),
    ("edit", {"path": "README.md", "old_string": "42", "new_string": "43"}),
    ("create_directory", {"path": "made"}),
    ("bash_run", {"command": "touch ran.txt"}),
    ("bash_background", {"command": "touch bg.txt"}),
    ("bash_kill", {"id": "p1"}),
    ("browser_save_workflow", {"name": "flow", "side_effect": "read_only"}),
    ("browser_run_destructive_workflow", {"name": "wipe", "inputs": {}}),
]


@pytest.fixture
def terax_config(terax_config: dict[str, Any]) -> dict[str, Any]:
    return {**terax_config, "TeraxApp": {"read_only": True}}


@pytest.mark.parametrize("plan_mode", [False, True])
async def test_read_only_agent_reads_and_refuses_every_change(
    terax_api: Api,
    open_events: Any,
    model_stub: ModelStub,
    jp_root_dir: Path,
    plan_mode: bool,
) -> None:
    (jp_root_dir / "README.md").write_text("The answer is 42.\n")
    model_stub.script(
        [
            turns.tool_calls([("read_file", {"path": "README.md"}), *MUTATING_CALLS]),
            turns.text("I can only read here."),
        ]
    )
    session_id = await new_session(terax_api, plan_mode=plan_mode)
    events = await run(terax_api, open_events, session_id, "Change things")
    await events.until("finish")
    assert not events.of("approval_requested")
    assert not events.of("plan_item_queued")
    results = tool_results(model_stub, 1)
    assert "The answer is 42." in results[0]["content"]
    for result, (name, _) in zip(results[1:], MUTATING_CALLS, strict=True):
        assert result["content"].startswith("The server is read-only"), (name, result)
    calls = (await terax_api(f"ai/sessions/{session_id}/tool-calls"))["tool_calls"]
    assert [(c["name"], c["status"]) for c in calls] == [("read_file", "done")] + [
        (name, "error") for name, _ in MUTATING_CALLS
    ]
    assert (await terax_api(f"ai/sessions/{session_id}/plan"))["items"] == []
    assert (jp_root_dir / "README.md").read_text() == "The answer is 42.\n"
    for name in ("new.txt", "made", "ran.txt", "bg.txt"):
        assert not (jp_root_dir / name).exists(), name
