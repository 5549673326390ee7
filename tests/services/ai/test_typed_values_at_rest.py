"""What the agent types into pages and gives workflows as inputs is stored in ai.sqlite3 as
placeholders: tool-call arguments, the assistant messages that carry them, and the proposals
of workflow runs. The raw bytes of the database (and its WAL) are scanned; the approval still
runs with the real values, and after a restart a placeholder is refused, never typed."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import ReplayRefused
from terax_jupyter.services.ai.store import AiStore
from terax_jupyter.services.browser.evals.site import EvalSite
from terax_jupyter.testing import model_stub as turns
from tests.services.ai.test_agent_api import new_session, run, tool_results
from tests.services.browser import replay_fixtures
from tests.services.browser.replay_fixtures import ACCOUNTS, FakePage, login_policy, record_login

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api
    from tests.services.browser.replay_fixtures import Engine

engine = replay_fixtures.engine  # the browser engine over tmp_path

USERNAME, PASSWORD = "e5", "e7"  # the login page's refs (see test_browser_agent)
TYPED_PASSWORD = "pw-Typed-9931"
RUN_INPUTS = {"username": "bob-Run-7315", "password": "pw-Run-8842"}
DESTRUCTIVE_INPUTS = {"username": "carol-Destr-6060", "password": "pw-Destr-1234"}


@pytest.fixture
def site() -> Iterator[EvalSite]:
    with EvalSite() as app:
        yield app


def database_bytes(folder: Path) -> bytes:
    """ai.sqlite3 with its WAL and shared memory, as they are on disk."""
    return b"".join(p.read_bytes() for p in folder.glob("ai.sqlite3*") if p.is_file())


def assert_absent(raw: bytes, *values: str) -> None:
    assert b"browser_type" in raw  # the file was read: the calls are in it
    for value in values:
        assert value.encode() not in raw, value


async def test_typed_values_are_placeholders_in_the_agents_store(
    terax_api: Api,
    open_events: Any,
    model_stub: ModelStub,
    site: EvalSite,
    jp_data_dir: Path,
) -> None:
    folder = jp_data_dir / "terax"
    model_stub.script(
        [
            turns.tool_call("browser_open", {"url": site.url("/login")}),
            turns.tool_call(
                "browser_type", {"ref": USERNAME, "text": "alice", "input": "username"}
            ),
            turns.tool_call(
                "browser_type", {"ref": PASSWORD, "text": TYPED_PASSWORD, "input": "password"}
            ),
            turns.tool_call("browser_click", {"role": "button", "name": "Sign in"}),
            turns.tool_call("browser_wait", {"title_contains": "Dashboard"}),
            *[
                turns.tool_call(
                    "browser_save_workflow",
                    {
                        "name": name,
                        "side_effect": side_effect,
                        "postconditions": [{"kind": "title_contains", "value": "Dashboard"}],
                    },
                )
                for name, side_effect in (("sign-in", "mutating"), ("sign-in-d", "destructive"))
            ],
            turns.tool_call("browser_run_workflow", {"name": "sign-in", "inputs": RUN_INPUTS}),
            turns.tool_call(
                "browser_run_destructive_workflow",
                {"name": "sign-in-d", "inputs": DESTRUCTIVE_INPUTS},
            ),
            turns.text("Done."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Sign in, save, replay")
    approval = (await events.until("approval_requested"))["approval"]
    # The card (and the REST view of the approval) shows the values the run will type...
    assert approval["proposal"]["payload"]["inputs"] == DESTRUCTIVE_INPUTS
    # ...while the database holds placeholders only, pending approval included.
    secrets = (TYPED_PASSWORD, *RUN_INPUTS.values(), *DESTRUCTIVE_INPUTS.values())
    assert_absent(database_bytes(folder), *secrets)

    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await events.until("finish")
    results = tool_results(model_stub, 9)
    assert "Replayed 'sign-in'" in results[-2]["content"], results[-2]
    assert "Replayed 'sign-in-d'" in results[-1]["content"], results[-1]
    # The replays typed the real values.
    assert site.sign_ins == ["alice", RUN_INPUTS["username"], DESTRUCTIVE_INPUTS["username"]]
    assert_absent(database_bytes(folder), *secrets)

    db = sqlite3.connect(folder / "ai.sqlite3")
    try:
        arguments = [
            (name, json.loads(text))
            for name, text in db.execute("SELECT name, arguments FROM tool_calls ORDER BY rowid")
        ]
        proposal = json.loads(db.execute("SELECT proposal FROM approvals").fetchone()[0])
    finally:
        db.close()
    typed = [args["text"] for name, args in arguments if name == "browser_type"]
    assert typed == ["{{username}}", "{{password}}"]  # "alice" is not there either
    runs = [args["inputs"] for name, args in arguments if name.startswith("browser_run")]
    assert runs == [{"username": "{{username}}", "password": "{{password}}"}] * 2
    assert proposal["payload"]["inputs"] == {"username": "{{username}}", "password": "{{password}}"}


def test_a_proposals_inputs_live_in_memory_until_decided(tmp_path: Path) -> None:
    path = tmp_path / "state" / "ai.sqlite3"
    proposal = {
        "tool": "browser_run_workflow",
        "kind": "replay",
        "summary": "Replay",
        "payload": {"name": "sign-in", "inputs": {"password": "pw-Queued-2718", "bad key": "x"}},
    }
    store = AiStore(str(path))
    session = store.create_session(title="t")["id"]
    store.add_tool_call(
        session, None, "c1", "browser_type", {"ref": "e5", "text": "no-input-Typed-31"}
    )
    approval = store.add_approval(session, None, "c1", "browser_run_workflow", proposal)
    # The caller's proposal is not changed, and the store gives the values back while open.
    assert proposal["payload"]["inputs"]["password"] == "pw-Queued-2718"
    assert approval["proposal"]["payload"]["inputs"]["password"] == "pw-Queued-2718"
    [queued] = store.approvals(session)
    assert queued["proposal"]["payload"]["inputs"]["password"] == "pw-Queued-2718"
    raw = b"".join(p.read_bytes() for p in path.parent.glob("ai.sqlite3*"))
    assert b"pw-Queued-2718" not in raw
    assert b"no-input-Typed-31" not in raw
    assert b"[typed]" in raw  # text typed with no input name
    [call] = store.tool_calls(session)
    assert call["arguments"]["text"] == "[typed]"
    store.close()

    # After a restart the values are gone: the proposal has placeholders only.
    reopened = AiStore(str(path))
    try:
        stored = reopened.get_approval(approval["id"])["proposal"]["payload"]["inputs"]
        assert stored == {"password": "{{password}}", "[typed]1": "[typed]"}
        decided = reopened.decide_approval(
            approval["id"], status="approved", decision={}, user=None
        )
        assert decided["status"] == "approved"
    finally:
        reopened.close()


async def test_a_replay_refuses_an_input_that_is_only_its_placeholder(engine: Engine) -> None:
    entry = engine.store.put_entry("login", await record_login(FakePage()), login_policy())
    page = FakePage()
    inputs = {"username": "bob-replayer", "password": "{{password}}"}
    with pytest.raises(ReplayRefused) as caught:
        await engine.replayer.replay(entry, page, inputs, task="t", policy=login_policy())
    assert caught.value.reason == "input_missing"
    assert "password" in caught.value.message
    assert page.performed() == []  # nothing typed, nothing opened
    assert ACCOUNTS["bob-replayer"] != inputs["password"]
