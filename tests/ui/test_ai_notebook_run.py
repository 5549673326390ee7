"""A run of the agent's in a notebook open in Lab: the outputs appear in the open notebook as
if the user had run the cell, and the server writes nothing to the file under it."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from terax_jupyter.testing.model_stub import text, tool_call

from .ai_helpers import ask, open_panel, use_stub_provider
from .helpers import artifact_name, write
from .test_ai_notebook_edit import _MODEL, _notebook, _open

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui

TIMEOUT_S = 60
OUTPUTS = f"""path => {_MODEL}.sharedModel.cells
    .map(cell => [cell.id, cell.execution_count ?? null, JSON.stringify(cell.outputs ?? [])])"""


def test_outputs_of_a_run_land_in_the_open_notebook(
    page: Page, root_lab: LabServer, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    path = f"nbrun-{uuid.uuid4().hex[:8]}/sales.ipynb"
    write(root_lab.root / path, _notebook())
    _open(page, path)
    before = (root_lab.root / path).read_text(encoding="utf-8")
    page.wait_for_timeout(3500)  # the page has told the server the notebook is open
    model_stub.script([tool_call("notebook_run", {"path": path, "ids": ["end"]}), text("Ran it.")])
    panel = open_panel(page)
    use_stub_provider(panel)
    ask(panel, "Run the last cell.")
    # The card shows the exact source it would run.
    card = panel.locator("[data-approval][data-kind='cells']")
    expect(card.locator("[data-cell='end'] pre")).to_have_text("print('done')", timeout=15_000)
    page.screenshot(path=artifact_name(request, "-card"))
    card.get_by_role("button", name="Approve", exact=True).click()
    deadline = time.monotonic() + TIMEOUT_S
    cells: list[list[object]] = []
    while time.monotonic() < deadline:
        cells = page.evaluate(OUTPUTS, path)
        if cells[2][1] is not None:
            break
        page.wait_for_timeout(200)
    assert "done" in str(cells[2][2]), cells
    assert isinstance(cells[2][1], int)
    # The open notebook took them; the file was left to the page to save.
    assert page.evaluate(f"path => {_MODEL}.dirty", path)
    assert (root_lab.root / path).read_text(encoding="utf-8") == before
