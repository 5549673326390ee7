"""The agent checks a web app in the headless browser, saves what it did as a workflow and
replays it with no model calls; a destructive workflow runs only after an approval. Real
Chromium, a real local web app, the model stub, through the server's API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.services.browser.evals.site import EvalSite
from terax_jupyter.testing import model_stub as turns
from tests.services.ai.test_agent_api import new_session, run, tool_results

if TYPE_CHECKING:
    from collections.abc import Iterator

    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api

# The login page's snapshot numbers its elements in document order (see EvalSite.login_page).
USERNAME, PASSWORD, SIGN_IN = "e5", "e7", "e8"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def site() -> Iterator[EvalSite]:
    with EvalSite() as app:
        yield app


def sign_in_turns(site: EvalSite, user: str) -> list[turns.Turn]:
    return [
        turns.tool_call("browser_open", {"url": site.url("/login")}),
        turns.tool_call("browser_type", {"ref": USERNAME, "text": user, "input": "username"}),
        turns.tool_call("browser_type", {"ref": PASSWORD, "text": "pw-1", "input": "password"}),
        turns.tool_call("browser_click", {"role": "button", "name": "Sign in"}),
        turns.tool_call("browser_wait", {"title_contains": "Dashboard"}),
    ]


async def test_the_agent_records_a_flow_and_replays_it_without_the_model(
    terax_api: Api, jp_fetch: Any, open_events: Any, model_stub: ModelStub, site: EvalSite
) -> None:
    model_stub.script(
        [
            *sign_in_turns(site, "alice"),
            turns.tool_call(
                "browser_save_workflow",
                {
                    "name": "sign-in",
                    "side_effect": "mutating",
                    "postconditions": [{"kind": "title_contains", "value": "Dashboard"}],
                },
            ),
            turns.tool_call(
                "browser_run_workflow",
                {"name": "sign-in", "inputs": {"username": "bob", "password": "pw-2"}},
            ),
            turns.tool_call("browser_screenshot", {}),
            turns.text("Signed in as alice, saved it, replayed it for bob."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Check the sign-in")
    await events.until("finish")
    assert not events.of("approval_requested")  # looking and clicking need no approval
    calls = (await terax_api(f"ai/sessions/{session_id}/tool-calls"))["tool_calls"]
    assert [c["status"] for c in calls] == ["done"] * 8, tool_results(model_stub, 8)[-1]

    opened = tool_results(model_stub, 1)[0]["content"]
    assert 'textbox "Username"' in opened
    assert f"[ref={SIGN_IN}]" in opened
    waited = tool_results(model_stub, 5)[-1]["content"]
    assert 'heading "Welcome, alice"' in waited
    replayed = tool_results(model_stub, 7)[-1]["content"]
    assert "Replayed 'sign-in'" in replayed
    assert "no model calls" in replayed
    # The replay signed bob in for real, and the model was asked exactly once per step.
    assert site.sign_ins == ["alice", "bob"]
    assert len(model_stub.requests) == 9
    # The screenshot is kept for the chat to show, under the id the tool call returned.
    shot = calls[-1]["data"]["screenshot"]
    image = await jp_fetch("terax", "api", "browser", "screenshots", shot)
    assert image.headers["Content-Type"] == "image/png"
    assert image.body.startswith(PNG)

    workflows = await terax_api("browser/workflows")
    [saved] = workflows["workflows"]
    assert saved["name"] == "sign-in"
    assert saved["inputs"] == ["username", "password"]
    assert saved["policy"]["scope_id"] == site.origin
    # Typed values are placeholders in what is stored, never the text.
    assert "alice" not in str(saved)
    assert "pw-1" not in str(saved)


async def test_a_flow_with_typed_literals_cannot_be_saved(
    terax_api: Api, open_events: Any, model_stub: ModelStub, site: EvalSite
) -> None:
    model_stub.script(
        [
            turns.tool_call("browser_open", {"url": site.url("/login")}),
            turns.tool_call("browser_type", {"ref": USERNAME, "text": "carol"}),
            turns.tool_call("browser_save_workflow", {"name": "x", "side_effect": "mutating"}),
            turns.text("Could not save."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Record")
    await events.until("finish")
    saved = tool_results(model_stub, 3)[-1]
    assert "non_cacheable" in saved["content"] or "cannot" in saved["content"].lower()
    assert (await terax_api("browser/workflows"))["workflows"] == []


async def test_the_browser_stays_on_loopback(
    terax_api: Api, open_events: Any, model_stub: ModelStub
) -> None:
    model_stub.script(
        [
            turns.tool_call("browser_open", {"url": "file:///etc/passwd"}),
            turns.tool_call("browser_open", {"url": "http://169.254.169.254/latest/meta-data"}),
            turns.text("Both refused."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Open things")
    await events.until("finish")
    first = tool_results(model_stub, 1)[-1]["content"]
    second = tool_results(model_stub, 2)[-1]["content"]
    assert "root:" not in first
    assert "may not open file:" in first
    assert "is not on this machine; the browser may only reach local servers" in second
    calls = (await terax_api(f"ai/sessions/{session_id}/tool-calls"))["tool_calls"]
    assert [c["status"] for c in calls] == ["error", "error"]


async def test_a_destructive_workflow_runs_only_after_approval(
    terax_api: Api, open_events: Any, model_stub: ModelStub, site: EvalSite
) -> None:
    record = [
        turns.tool_call("browser_open", {"url": site.url("/items")}),
        # /items: heading e2, "3 items" e3, list e4, first item text e6, its link e7.
        turns.tool_call("browser_snapshot", {}),
    ]
    model_stub.script([*record, turns.text("Looked.")])
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Look at the items")
    await events.until("finish")
    snapshot = tool_results(model_stub, 2)[-1]["content"]
    link = _ref_of(snapshot, 'link "Delete alpha report"')

    model_stub.script(
        [
            turns.tool_call("browser_click", {"ref": link}),
            turns.tool_call("browser_snapshot", {}),
            turns.text("On the confirm page."),
        ]
    )
    events = await run(terax_api, open_events, session_id, "Open the delete page")
    await events.until("finish")
    confirm_page = tool_results(model_stub, 4)[-1]["content"]
    confirm = _ref_of(confirm_page, 'button "Confirm delete"')

    model_stub.script(
        [
            turns.tool_call("browser_click", {"ref": confirm}),
            turns.tool_call(
                "browser_save_workflow",
                {
                    "name": "delete-alpha",
                    "side_effect": "destructive",
                    "postconditions": [{"kind": "text_contains", "value": "2 items"}],
                },
            ),
            turns.text("Saved."),
        ]
    )
    events = await run(terax_api, open_events, session_id, "Delete and save")
    await events.until("finish")
    assert site.deleted == ["alpha report"]
    site.reset()

    # A "*" rule does not cover a destructive replay; the user is asked, and denies.
    await terax_api(
        f"ai/sessions/{session_id}/rules", method="PUT", body={"rules": [{"tool": "*"}]}
    )
    model_stub.script(
        [
            turns.tool_call("browser_run_destructive_workflow", {"name": "delete-alpha"}),
            turns.text("Denied."),
        ]
    )
    events = await run(terax_api, open_events, session_id, "Replay the delete")
    approval = (await events.until("approval_requested"))["approval"]
    assert approval["proposal"]["kind"] == "replay"
    assert "delete-alpha" in approval["proposal"]["summary"]
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "deny"})
    await events.until("finish")
    assert site.deleted == []

    # Approved, but the page changed after the approval was asked for: refused, untouched.
    model_stub.script(
        [
            turns.tool_call("browser_run_destructive_workflow", {"name": "delete-alpha"}),
            turns.text("Refused."),
        ]
    )
    events = await run(terax_api, open_events, session_id, "Replay it")
    approval = (await events.until("approval_requested"))["approval"]
    assert "Items" in approval["proposal"]["command"]  # the page it is for
    site.add_item("delta plan")
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await events.until("finish")
    refused = tool_results(model_stub, -1)[-1]["content"]
    assert "The approval token was issued for another task, scope, policy, page" in refused
    assert site.deleted == []
    site.reset()

    # Asked again and approved: the replay deletes, with no model call while it runs.
    model_stub.script(
        [
            turns.tool_call("browser_run_destructive_workflow", {"name": "delete-alpha"}),
            turns.text("Deleted."),
        ]
    )
    asked = len(model_stub.requests)
    events = await run(terax_api, open_events, session_id, "Replay the delete, approved")
    approval = (await events.until("approval_requested"))["approval"]
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await events.until("finish")
    assert site.deleted == ["alpha report"]
    assert len(model_stub.requests) == asked + 2
    result = tool_results(model_stub, -1)[-1]["content"]
    assert "Replayed 'delete-alpha'" in result

    # Replayed again, the item is gone: the target is missing, and nothing is deleted.
    model_stub.script(
        [
            turns.tool_call("browser_run_destructive_workflow", {"name": "delete-alpha"}),
            turns.text("Refused."),
        ]
    )
    events = await run(terax_api, open_events, session_id, "Once more")
    approval = (await events.until("approval_requested"))["approval"]
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await events.until("finish")
    refused = tool_results(model_stub, -1)[-1]["content"]
    assert "no link named 'Delete alpha report'" in refused
    assert site.deleted == ["alpha report"]


def _ref_of(snapshot: str, what: str) -> str:
    for line in snapshot.splitlines():
        if what in line and "[ref=" in line:
            return line.rsplit("[ref=", 1)[1].rstrip("]")
    raise AssertionError(f"{what} is not in the snapshot:\n{snapshot}")
