"""A notebook change set in Chromium: the agent proposes notebook_edit on a notebook open in
Lab with unsaved edits; the review shows it cell by cell, one hunk is rejected from the
keyboard, and Apply changes the open notebook (the user's typing kept, nothing written under
it) while the server finds the change made. A cell the user changed refuses the change."""

from __future__ import annotations

import hashlib
import json
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
LONG = "".join(f"value_{n} = {n}\n" for n in range(1, 31))
NEW_LONG = LONG.replace("value_2 = 2\n", "value_2 = 'two'\n").replace(
    "value_27 = 27\n", "value_27 = 'twenty-seven'\n"
)
SOURCES = {"title": "title = 'Sales'", "values": LONG, "end": "print('done')"}

_MODEL = """Array.from(window.jupyterapp.shell.widgets('main'))
    .find(widget => widget.context && widget.context.path === path).context.model"""
CELL_SOURCES = f"""path => {_MODEL}.sharedModel.cells
    .map(cell => [cell.id, cell.cell_type, cell.getSource()])"""
DIRTY = f"path => {_MODEL}.dirty"


def _hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:12]


def _notebook() -> str:
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": cell_id,
            "metadata": {},
            "outputs": [],
            "source": source,
        }
        for cell_id, source in SOURCES.items()
    ]
    spec = {"display_name": "Python 3", "language": "python", "name": "python3"}
    book = {"cells": cells, "metadata": {"kernelspec": spec}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(book, indent=1)


def _propose(lab: LabServer, model_stub: ModelStub, path: str) -> dict[str, Any]:
    """Run the agent until it proposes a change set: two hunks in one cell and an insert."""
    ops = [
        {"op": "replace", "id": "values", "expected_hash": _hash(LONG), "source": NEW_LONG},
        {"op": "insert", "after": "end", "cell_type": "markdown", "source": "## Totals"},
    ]
    model_stub.script(
        [tool_call("notebook_edit", {"path": path, "ops": ops}), text("Edited the notebook.")]
    )
    session = server_api(lab, "terax/api/ai/sessions", {})
    server_api(lab, f"terax/api/ai/sessions/{session['id']}/runs", {"prompt": "Tidy it."})
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        pending = server_api(lab, f"terax/api/ai/sessions/{session['id']}")["pending_approvals"]
        if pending:
            assert pending[0]["proposal"]["kind"] == "notebook"
            return pending[0]
        time.sleep(0.1)
    raise AssertionError("the agent proposed no notebook change")


def _open(page: Page, path: str) -> Locator:
    page.evaluate(
        "path => window.jupyterapp.commands.execute('docmanager:open', { path }).then(() => 1)",
        path,
    )
    panel = page.locator(".jp-NotebookPanel").last
    expect(panel.locator(".jp-Cell")).to_have_count(3, timeout=TIMEOUT_MS)
    return panel


def _type_into(panel: Locator, page: Page, path: str, index: int, typed: str) -> None:
    """Type at the end of a cell's editor, as the user would; the notebook is not saved."""
    panel.locator(".jp-Cell").nth(index).locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(typed)
    page.wait_for_function(DIRTY, arg=path, timeout=TIMEOUT_MS)


def _review(page: Page, approval_id: str) -> Locator:
    page.evaluate(
        "id => window.jupyterapp.commands.execute('terax:ai-review', { approvalId: id })"
        ".then(() => true)",
        approval_id,
    )
    review = page.locator(REVIEW)
    expect(review.locator(".jp-TeraxAiReview-cell")).to_have_count(2, timeout=TIMEOUT_MS)
    return review


def _review_and_reject_first_hunk(page: Page, approval_id: str) -> Locator:
    """Open the review of the change set, check it cell by cell and reject its first hunk
    from the keyboard; Apply then takes the other two (the review is returned, focused)."""
    review = _review(page, approval_id)
    values, insert = review.locator(".jp-TeraxAiReview-cell").all()
    expect(values).to_have_attribute("data-op", "replace")
    expect(values.locator(".jp-TeraxAiReview-unit")).to_have_count(2)
    expect(values).to_contain_text("+value_2 = 'two'")
    expect(insert).to_have_attribute("data-op", "insert")
    expect(insert).to_contain_text("+## Totals")
    # From the keyboard: the first hunk is active; reject it, which moves to the next.
    first = values.locator(".jp-TeraxAiReview-unit").nth(0)
    expect(first).to_have_attribute("aria-current", "true")
    review.focus()
    page.keyboard.press("Alt+Shift+R")
    expect(first).to_have_attribute("data-state", "rejected")
    expect(values).to_have_attribute("data-state", "partial")
    expect(values.locator(".jp-TeraxAiReview-unit").nth(1)).to_have_attribute(
        "aria-current", "true"
    )
    apply = review.locator("[data-action='apply']")
    expect(apply).to_have_text("Apply 2 of 3 Hunks")
    return review


def _assert_applied(cells: list[list[str]]) -> None:
    """The open notebook took the kept hunks and the insert; the user's typing is there."""
    assert [cell[0] for cell in cells[:3]] == ["title", "values", "end"]
    assert cells[0][2] == "title = 'Sales'  # typed, not saved"
    assert cells[1][2] == LONG.replace("value_27 = 27\n", "value_27 = 'twenty-seven'\n")
    assert cells[3][1:] == ["markdown", "## Totals"]


def _tool_result(lab: LabServer, session_id: str) -> str:
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        calls = server_api(lab, f"terax/api/ai/sessions/{session_id}/tool-calls")["tool_calls"]
        done = [c for c in calls if c["name"] == "notebook_edit" and c["ended_at"]]
        if done:
            return str(done[0]["result"])
        time.sleep(0.1)
    raise AssertionError("notebook_edit did not finish")


def test_a_change_set_goes_through_the_open_notebook_and_keeps_unsaved_edits(
    page: Page, root_lab: LabServer, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    path = f"nbedit-{uuid.uuid4().hex[:8]}/sales.ipynb"
    write(root_lab.root / path, _notebook())
    panel = _open(page, path)
    _type_into(panel, page, path, 0, "  # typed, not saved")
    approval = _propose(root_lab, model_stub, path)

    review = _review_and_reject_first_hunk(page, approval["id"])
    values = review.locator(".jp-TeraxAiReview-cell").first
    page.screenshot(path=artifact_name(request, "-light"))
    change_theme(page, DARK)
    try:
        expect(values).to_be_visible()
        page.screenshot(path=artifact_name(request, "-dark"))
    finally:
        change_theme(page, LIGHT)

    page.keyboard.press("Control+Enter")
    outcome = review.locator("[data-outcome]")
    expect(outcome).to_have_attribute("data-outcome", "applied", timeout=TIMEOUT_MS)
    # The open notebook took the change: the user's typing is still there, saved with it.
    _assert_applied(page.evaluate(CELL_SOURCES, path))
    assert not page.evaluate(DIRTY, path)
    on_disk = json.loads((root_lab.root / path).read_text(encoding="utf-8"))
    assert [c["id"] for c in on_disk["cells"]][:3] == ["title", "values", "end"]
    assert "".join(on_disk["cells"][0]["source"]) == "title = 'Sales'  # typed, not saved"
    assert "".join(on_disk["cells"][3]["source"]) == "## Totals"
    # The server found it made and wrote nothing over the save.
    result = _tool_result(root_lab, approval["session_id"])
    assert "already has these changes" in result, result
    decided = server_api(root_lab, f"terax/api/ai/approvals/{approval['id']}")
    assert decided["decision"]["hunks"] == [1, 2]


def test_an_unsaved_edit_of_a_changed_cell_refuses_the_change(
    page: Page, root_lab: LabServer, model_stub: ModelStub
) -> None:
    path = f"nbedit-{uuid.uuid4().hex[:8]}/sales.ipynb"
    write(root_lab.root / path, _notebook())
    panel = _open(page, path)
    approval = _propose(root_lab, model_stub, path)
    _type_into(panel, page, path, 1, "value_31 = 31")
    before = (root_lab.root / path).read_text(encoding="utf-8")

    review = _review(page, approval["id"])
    review.locator("[data-action='apply']").click()
    outcome = review.locator("[data-outcome]")
    expect(outcome).to_have_attribute("data-outcome", "failed", timeout=TIMEOUT_MS)
    expect(outcome).to_contain_text("Cell values changed in the open notebook")
    # Nothing changed: not the open notebook, not the file; the approval still waits.
    cells = page.evaluate(CELL_SOURCES, path)
    assert len(cells) == 3
    assert cells[1][2].endswith("value_31 = 31")
    assert page.evaluate(DIRTY, path)
    assert (root_lab.root / path).read_text(encoding="utf-8") == before
    pending = server_api(root_lab, f"terax/api/ai/approvals/{approval['id']}")
    assert pending["status"] == "pending"
