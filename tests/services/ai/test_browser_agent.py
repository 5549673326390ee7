"""The agent checks a web app in the headless browser, saves what it did as a workflow and
replays it with no model calls; a destructive workflow runs only after an approval. Real
Chromium, a real local web app, the model stub, through the server's API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of
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


# -- approvals bound to what the user saw (issue 15, items 1, 4 and 11) ---------------------


async def record_delete(terax_api: Api, site: EvalSite, name: str, item: str, **save: Any) -> Any:
    """Record "delete ``item``" from the item list through the REST tab API and save it as a
    destructive workflow (recording really deletes it; the site is reset afterwards)."""
    tab = f"rec-{name}"
    await terax_api(f"browser/tabs/{tab}/open", method="POST", body={"url": site.url("/items")})
    for role, label in (("link", f"Delete {item}"), ("button", "Confirm delete")):
        await terax_api(
            f"browser/tabs/{tab}/click", method="POST", body={"role": role, "name": label}
        )
    saved = await terax_api(
        f"browser/tabs/{tab}/save",
        method="POST",
        body={"name": name, "side_effect": "destructive", **save},
    )
    await terax_api(f"browser/tabs/{tab}", method="DELETE")
    site.reset()
    return saved


def delete_turns(site: EvalSite, item: str) -> list[turns.Turn]:
    return [
        turns.tool_call("browser_open", {"url": site.url("/items")}),
        turns.tool_call("browser_click", {"role": "link", "name": f"Delete {item}"}),
        turns.tool_call("browser_click", {"role": "button", "name": "Confirm delete"}),
    ]


async def decide(terax_api: Api, approval: dict[str, Any], decision: str) -> None:
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": decision})


async def last_call(terax_api: Api, session_id: str) -> dict[str, Any]:
    calls = (await terax_api(f"ai/sessions/{session_id}/tool-calls"))["tool_calls"]
    return calls[-1]


async def test_an_approval_runs_only_the_workflow_version_it_showed(
    terax_api: Api, open_events: Any, model_stub: ModelStub, site: EvalSite
) -> None:
    await record_delete(terax_api, site, "delete-item", "alpha report")
    model_stub.script(
        [
            turns.tool_call("browser_run_destructive_workflow", {"name": "delete-item"}),
            # A second session replaces the workflow while the first approval is open: same
            # start page, another item (the "reject" for the "approve" the user saw).
            *delete_turns(site, "beta notes"),
            turns.tool_call(
                "browser_save_workflow",
                {"name": "delete-item", "side_effect": "destructive", "overwrite": True},
            ),
            turns.text("Replaced."),
            turns.text("Refused."),
        ]
    )
    first = await new_session(terax_api)
    events = await run(terax_api, open_events, first, "Delete the alpha report")
    pending = (await events.until("approval_requested"))["approval"]
    proposal = pending["proposal"]
    # The card shows the scope, origin, version and the exact steps it is for.
    shown = proposal["payload"]["shown"]
    assert shown["scope"] == shown["origin"] == site.origin
    assert shown["version"] == 1
    assert shown["steps"] == [
        {"kind": "navigate", "url": site.url("/items")},
        {"kind": "click", "role": "link", "name": "Delete alpha report"},
        {"kind": "click", "role": "button", "name": "Confirm delete"},
    ]
    assert "version 1" in proposal["command"]
    assert "click link 'Delete alpha report'" in proposal["command"]
    assert "token" not in proposal["summary"]

    second = await new_session(terax_api)
    other = await run(terax_api, open_events, second, "Make it delete beta instead")
    replace = (await other.until("approval_requested"))["approval"]
    # Replacing a destructive workflow is itself a proposal the user approves.
    assert replace["tool"] == "browser_save_workflow"
    assert replace["proposal"]["kind"] == "workflow"
    assert replace["proposal"]["payload"]["shown"]["previous_version"] == 1
    assert replace["proposal"]["payload"]["shown"]["version"] == 2
    await decide(terax_api, replace, "approve")
    await other.until("finish")
    assert site.deleted == ["beta notes"]  # the recording clicked for real
    site.reset()
    stored = await terax_api("browser/workflows/delete-item")
    assert stored["policy"]["workflow_version"] == 2

    # The user approves what they saw (version 1): version 2 is refused, nothing is deleted.
    await decide(terax_api, pending, "approve")
    await events.until("finish")
    call = await last_call(terax_api, first)
    assert call["status"] == "error"
    assert call["data"]["reason"] == "version_mismatch"
    assert "nothing was run" in tool_results(model_stub, -1)[-1]["content"]
    assert site.deleted == []

    # Asked again, the card shows version 2; approved, it runs.
    model_stub.script(
        [
            turns.tool_call("browser_run_destructive_workflow", {"name": "delete-item"}),
            turns.text("Deleted."),
        ]
    )
    events = await run(terax_api, open_events, first, "Delete with the new version")
    pending = (await events.until("approval_requested"))["approval"]
    assert pending["proposal"]["payload"]["shown"]["version"] == 2
    assert "Delete beta notes" in pending["proposal"]["command"]
    await decide(terax_api, pending, "approve")
    await events.until("finish")
    assert (await last_call(terax_api, first))["status"] == "done"
    assert site.deleted == ["beta notes"]


async def test_an_approval_shown_for_one_origin_never_runs_on_another(
    terax_api: Api, open_events: Any, model_stub: ModelStub, site: EvalSite
) -> None:
    await record_delete(terax_api, site, "delete-item", "alpha report")
    model_stub.script(
        [
            turns.tool_call("browser_run_destructive_workflow", {"name": "delete-item"}),
            turns.text("Refused."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Delete the alpha report")
    pending = (await events.until("approval_requested"))["approval"]
    assert pending["proposal"]["payload"]["shown"]["origin"] == site.origin
    with EvalSite() as elsewhere:
        # While the card is open the workflow is deleted and saved again, at version 1 as
        # before, with the same steps and start page, but for another origin.
        await terax_api("browser/workflows/delete-item", method="DELETE")
        saved = await record_delete(terax_api, elsewhere, "delete-item", "alpha report")
        assert saved["policy"]["workflow_version"] == 1
        assert saved["policy"]["scope_id"] == elsewhere.origin != site.origin
        await decide(terax_api, pending, "approve")
        await events.until("finish")
        call = await last_call(terax_api, session_id)
        assert call["data"]["reason"] == "scope_mismatch", call
        assert elsewhere.deleted == []
    assert site.deleted == []


async def test_lowering_a_destructive_workflow_asks_and_no_rule_covers_it(
    terax_api: Api, open_events: Any, model_stub: ModelStub, site: EvalSite
) -> None:
    await record_delete(terax_api, site, "delete-beta", "beta notes")
    # No session rule may name the destructive tools: each run is its own approval.
    session_id = await new_session(terax_api)
    for tool in ("browser_run_destructive_workflow", "browser_save_workflow"):
        with pytest.raises(HTTPClientError) as caught:
            await terax_api(
                f"ai/sessions/{session_id}/rules", method="PUT", body={"rules": [{"tool": tool}]}
            )
        assert caught.value.code == 400
        assert error_of(caught.value)["reason"] == "rule_not_allowed"
        assert "needs its own approval" in error_of(caught.value)["message"]
    assert (await terax_api(f"ai/sessions/{session_id}"))["rules"] == []

    # The agent re-saves it as read-only: the user is asked, denies, and nothing changes.
    model_stub.script(
        [
            *delete_turns(site, "beta notes"),
            turns.tool_call(
                "browser_save_workflow",
                {"name": "delete-beta", "side_effect": "read_only", "overwrite": True},
            ),
            turns.text("Denied."),
        ]
    )
    events = await run(terax_api, open_events, session_id, "Make it read-only")
    asked = (await events.until("approval_requested"))["approval"]
    shown = asked["proposal"]["payload"]["shown"]
    assert (shown["previous_side_effect"], shown["side_effect"]) == ("destructive", "read_only")
    assert "read_only" in asked["proposal"]["summary"]
    await decide(terax_api, asked, "deny")
    await events.until("finish")
    site.reset()
    stored = await terax_api("browser/workflows/delete-beta")
    assert stored["policy"]["side_effect"] == "destructive"
    assert stored["policy"]["workflow_version"] == 1
    # So a REST (or MCP) run still refuses it without an approval.
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("browser/workflows/delete-beta/run", method="POST", body={})
    assert error_of(caught.value)["reason"] == "approval_required"
    assert site.deleted == []


async def test_in_plan_mode_a_mutating_workflow_is_queued_not_run(
    terax_api: Api, open_events: Any, model_stub: ModelStub, site: EvalSite
) -> None:
    model_stub.script(
        [
            *sign_in_turns(site, "alice"),
            turns.tool_call(
                "browser_save_workflow", {"name": "sign-in", "side_effect": "mutating"}
            ),
            turns.text("Saved."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Record the sign-in")
    await events.until("finish")
    assert site.sign_ins == ["alice"]

    await terax_api(f"ai/sessions/{session_id}", method="PATCH", body={"plan_mode": True})
    model_stub.script(
        [
            turns.tool_call(
                "browser_run_workflow",
                {"name": "sign-in", "inputs": {"username": "bob", "password": "pw-2"}},
            ),
            turns.text("Queued."),
        ]
    )
    events = await run(terax_api, open_events, session_id, "Sign bob in")
    await events.until("finish")
    assert len(events.of("plan_item_queued")) == 1
    assert site.sign_ins == ["alice"]  # nothing ran yet
    assert (await last_call(terax_api, session_id))["status"] == "queued"
    [item] = (await terax_api(f"ai/sessions/{session_id}/plan"))["items"]
    assert item["tool"] == "browser_run_workflow"
    assert item["proposal"]["payload"]["shown"]["version"] == 1
    assert "{{username}}" in item["proposal"]["command"]
    assert "bob" not in item["proposal"]["command"]
    result = await terax_api(
        f"ai/sessions/{session_id}/plan", method="POST", body={"action": "apply"}
    )
    assert [o["status"] for o in result["outcomes"]] == ["approved"], result
    assert site.sign_ins == ["alice", "bob"]
