"""The review of an AI edit in Chromium: a real agent run against the model stub proposes a
multi_edit with two far-apart hunks; the review rejects one, accepts the other and applies."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import expect

from terax_jupyter.testing.model_stub import text, tool_call

from .helpers import DARK, LIGHT, artifact_name, change_theme, server_api, write

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui

REVIEW = ".jp-TeraxAiReview"
TIMEOUT_MS = 15_000

# 30 numbered lines: changes at lines 2 and 27 are far enough apart for two hunks.
ORIGINAL = "".join(f"value_{n} = {n}\n" for n in range(1, 31))


def pending_approval(lab: LabServer, session_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        session = server_api(lab, f"terax/api/ai/sessions/{session_id}")
        if session["pending_approvals"]:
            return session["pending_approvals"][0]
        time.sleep(0.1)
    raise AssertionError(f"no approval was requested: {session}")


def propose_two_hunks(lab: LabServer, model_stub: ModelStub, path: str) -> dict[str, Any]:
    """Run the agent until it proposes a multi_edit of ``path`` with two far-apart hunks."""
    write(lab.root / path, ORIGINAL)
    model_stub.script(
        [
            tool_call("read_file", {"path": path}),
            tool_call(
                "multi_edit",
                {
                    "path": path,
                    "edits": [
                        {"old_string": "value_2 = 2\n", "new_string": "value_2 = 'two'\n"},
                        {
                            "old_string": "value_27 = 27\n",
                            "new_string": "value_27 = 'twenty-seven'\n",
                        },
                    ],
                },
            ),
            text("Done."),
        ]
    )
    session = server_api(lab, "terax/api/ai/sessions", {})
    prompt = {"prompt": "Spell out two values."}
    server_api(lab, f"terax/api/ai/sessions/{session['id']}/runs", prompt)
    approval = pending_approval(lab, session["id"])
    assert [h["index"] for h in approval["proposal"]["hunks"]] == [0, 1]
    return approval


def open_review(page: Page, approval_id: str) -> Locator:
    page.evaluate(
        "id => window.jupyterapp.commands.execute('terax:ai-review', { approvalId: id })"
        ".then(() => true)",
        approval_id,
    )
    review = page.locator(REVIEW)
    expect(review).to_be_visible(timeout=TIMEOUT_MS)
    expect(review.locator(".jp-TeraxAiReview-hunk")).to_have_count(2, timeout=TIMEOUT_MS)
    return review


def test_review_rejects_one_hunk_and_applies_the_other(
    page: Page, lab: LabServer, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    path = f"review-{uuid.uuid4().hex[:8]}/settings.py"
    approval = propose_two_hunks(lab, model_stub, path)

    # An editor open on the file reloads once the agent wrote it.
    page.evaluate(
        "path => window.jupyterapp.commands.execute('docmanager:open', { path }).then(() => true)",
        path,
    )
    editor = page.locator(".jp-FileEditor .cm-content")
    expect(editor).to_contain_text("value_27 = 27", timeout=TIMEOUT_MS)

    review = open_review(page, approval["id"])
    hunks = review.locator(".jp-TeraxAiReview-hunk")
    expect(review.locator(".jp-TeraxAiReview-status")).to_have_attribute("data-status", "pending")
    # The merge view: current on the left, proposed on the right, both changes shown.
    current = review.locator(".cm-merge-a .cm-content")
    proposed = review.locator(".cm-merge-b .cm-content")
    expect(current).to_contain_text("value_27 = 27")
    expect(proposed).to_contain_text("value_2 = 'two'")
    expect(proposed).to_contain_text("value_27 = 'twenty-seven'")
    expect(review.locator(".cm-merge-b .cm-changedLine")).to_have_count(2)
    expect(review.locator(".jp-TeraxAiReview-hunkMarker")).to_have_count(2)

    first, second = hunks.nth(0), hunks.nth(1)
    first.locator("[data-action='reject']").click()
    expect(first).to_have_attribute("data-state", "rejected")
    second.locator("[data-action='accept']").click()
    expect(second).to_have_attribute("data-state", "accepted")
    # Rejected lines are dimmed in both editors.
    expect(review.locator(".cm-merge-b .jp-TeraxAiReview-rejectedLine")).to_have_count(1)
    second.locator(".jp-TeraxAiReview-hunkGo").click()
    expect(second).to_have_attribute("aria-current", "true")
    # The keyboard moves between hunks (Alt+Up/Down, from the plugin's schema).
    page.keyboard.press("Alt+ArrowUp")
    expect(first).to_have_attribute("aria-current", "true")
    page.keyboard.press("Alt+ArrowDown")
    expect(second).to_have_attribute("aria-current", "true")
    apply = review.locator("[data-action='apply']")
    expect(apply).to_have_text("Apply 1 of 2 Hunks")
    page.screenshot(path=artifact_name(request, "-light"))

    change_theme(page, DARK)
    try:
        expect(review.locator(".cm-merge-b .cm-changedLine").first).to_be_visible()
        page.screenshot(path=artifact_name(request, "-dark"))
    finally:
        change_theme(page, LIGHT)

    apply.click()
    outcome = review.locator("[data-outcome]")
    expect(outcome).to_have_attribute("data-outcome", "applied", timeout=TIMEOUT_MS)
    expect(outcome).to_contain_text("Applied 1 of 2 hunks")
    on_disk = (lab.root / path).read_text(encoding="utf-8")
    assert on_disk == ORIGINAL.replace("value_27 = 27\n", "value_27 = 'twenty-seven'\n")

    # Decided: read-only, showing what was written.
    expect(review.locator(".jp-TeraxAiReview-status")).to_have_attribute(
        "data-status", "partially_approved"
    )
    expect(first.locator("[data-action='reject']")).to_be_disabled()
    expect(review.locator("[data-action='apply']")).to_have_count(0)
    decided = server_api(lab, f"terax/api/ai/approvals/{approval['id']}")
    assert decided["status"] == "partially_approved"
    assert decided["decision"]["hunks"] == [1]
    expect(editor).to_contain_text("value_27 = 'twenty-seven'", timeout=TIMEOUT_MS)
    expect(editor).to_contain_text("value_2 = 2")


def test_review_of_a_queued_plan_item_is_a_selection_only(
    page: Page, lab: LabServer, model_stub: ModelStub
) -> None:
    path = f"plan-{uuid.uuid4().hex[:8]}/settings.py"
    write(lab.root / path, ORIGINAL)
    edits = [
        {"old_string": "value_3 = 3\n", "new_string": "value_3 = 'three'\n"},
        {"old_string": "value_28 = 28\n", "new_string": "value_28 = 'twenty-eight'\n"},
    ]
    model_stub.script(
        [
            tool_call("read_file", {"path": path}),
            tool_call("multi_edit", {"path": path, "edits": edits}),
            text("Planned."),
        ]
    )
    session = server_api(lab, "terax/api/ai/sessions", {"plan_mode": True})
    server_api(lab, f"terax/api/ai/sessions/{session['id']}/runs", {"prompt": "Plan two values."})
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    items: list[dict[str, Any]] = []
    while not items and time.monotonic() < deadline:
        items = server_api(lab, f"terax/api/ai/sessions/{session['id']}/plan")["items"]
        time.sleep(0.1)
    assert len(items) == 1, items

    page.evaluate(
        "id => window.jupyterapp.commands.execute('terax:ai-review', { approvalId: id })"
        ".then(() => true)",
        items[0]["id"],
    )
    review = page.locator(REVIEW)
    expect(review.locator(".jp-TeraxAiReview-status")).to_have_attribute(
        "data-status", "queued", timeout=TIMEOUT_MS
    )
    expect(review.locator(".jp-TeraxAiReview-notice[data-kind='info']")).to_contain_text("plan")
    # The plan is applied as a batch from the panel: no Apply here, but hunks can be chosen.
    expect(review.locator("[data-action='apply']")).to_have_count(0)
    hunk = review.locator(".jp-TeraxAiReview-hunk").nth(1)
    hunk.locator("[data-action='reject']").click()
    expect(hunk).to_have_attribute("data-state", "rejected")
    expect(review.locator(".cm-merge-b .cm-content")).to_contain_text("'twenty-eight'")
    assert (lab.root / path).read_text(encoding="utf-8") == ORIGINAL


def test_review_is_decided_from_the_keyboard(
    page: Page, root_lab: LabServer, model_stub: ModelStub
) -> None:
    lab = root_lab
    path = f"review-keys-{uuid.uuid4().hex[:8]}/settings.py"
    approval = propose_two_hunks(lab, model_stub, path)
    review = open_review(page, approval["id"])
    first, second = (review.locator(".jp-TeraxAiReview-hunk").nth(i) for i in range(2))
    # The review opens focused on its first hunk: no mouse needed.
    expect(first).to_have_attribute("aria-current", "true", timeout=TIMEOUT_MS)
    # Deciding a hunk moves on to the next one.
    page.keyboard.press("Alt+Shift+R")
    expect(first).to_have_attribute("data-state", "rejected")
    expect(second).to_have_attribute("aria-current", "true")
    page.keyboard.press("Alt+Shift+A")
    expect(second).to_have_attribute("data-state", "accepted")
    # The last one stays current; Alt+Up/Down move (and wrap) without deciding.
    expect(second).to_have_attribute("aria-current", "true")
    page.keyboard.press("Alt+ArrowDown")
    expect(first).to_have_attribute("aria-current", "true")
    page.keyboard.press("Alt+ArrowUp")
    expect(second).to_have_attribute("aria-current", "true")
    expect(first).to_have_attribute("data-state", "rejected")
    # Changing one's mind: back up, accept the first after all, then reject it again.
    page.keyboard.press("Alt+ArrowUp")
    page.keyboard.press("Alt+Shift+A")
    expect(first).to_have_attribute("data-state", "accepted")
    page.keyboard.press("Alt+ArrowUp")
    page.keyboard.press("Alt+Shift+R")
    expect(first).to_have_attribute("data-state", "rejected")
    expect(review.locator("[data-action='apply']")).to_have_text("Apply 1 of 2 Hunks")
    page.keyboard.press("Control+Enter")
    expect(review.locator("[data-outcome]")).to_have_attribute(
        "data-outcome", "applied", timeout=TIMEOUT_MS
    )
    on_disk = (lab.root / path).read_text(encoding="utf-8")
    assert on_disk == ORIGINAL.replace("value_27 = 27\n", "value_27 = 'twenty-seven'\n")
    assert server_api(lab, f"terax/api/ai/approvals/{approval['id']}")["decision"]["hunks"] == [1]
