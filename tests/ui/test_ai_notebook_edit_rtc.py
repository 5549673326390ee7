"""The notebook change set of test_ai_notebook_edit.py with jupyter-collaboration installed:
the open notebook's model is the shared document of a collaboration room, which the server
saves by itself a moment after every change. Apply goes through that shared model: the
user's typing is kept, the server finds the change made and writes nothing; an edit of a
changed cell refuses the change; a collaborator typing while it is applied loses nothing.

The lab runs from a second environment with jupyter-collaboration (``.venv-rtc``, see
``.ci/run``), so this suite's own environment stays without it."""

from __future__ import annotations

import json
import os
import time
import urllib.request
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from .conftest import VIEWPORT, start_lab
from .helpers import artifact_name, server_api, wait_for_lab, write
from .test_ai_notebook_edit import (
    _MODEL,
    CELL_SOURCES,
    LONG,
    TIMEOUT_MS,
    _assert_applied,
    _notebook,
    _open,
    _propose,
    _review,
    _review_and_reject_first_hunk,
    _tool_result,
    _type_into,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from playwright.sync_api import Browser, Locator, Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui

REPO = Path(__file__).resolve().parents[2]
RTC_PYTHON = os.environ.get("TERAX_RTC_PYTHON") or str(REPO / ".venv-rtc" / "bin" / "python")
CREATE = (
    "python3 -m venv .venv-rtc && SKIP_JUPYTER_BUILDER=1 .venv-rtc/bin/pip install -e . "
    '"jupyter-collaboration==5.0.*" (as .ci/run does)'
)
# The server saves a room this long after its last change (YDocExtension.document_save_delay
# is 1 s), so what is on disk is checked for a while.
SAVED_S = 10.0
COLLABORATIVE = f"path => {_MODEL}.collaborative"
CLEAN = f"path => !{_MODEL}.dirty"
# A collaborator's typing: through the cell's editor (as a key press does), a character at
# a time at the end of the title cell, while the test applies the change set elsewhere.
TYPE_SLOWLY = f"""([path, text]) => {{
    const widget = Array.from(window.jupyterapp.shell.widgets('main'))
        .find(widget => widget.context && widget.context.path === path);
    const editor = widget.content.widgets[0].editor;
    window.teraxTyped = 0;
    const timer = setInterval(() => {{
        if (window.teraxTyped === text.length) {{
            clearInterval(timer);
            return;
        }}
        const end = editor.getPositionAt(editor.model.sharedModel.getSource().length);
        editor.setCursorPosition(end);
        editor.replaceSelection(text[window.teraxTyped]);
        window.teraxTyped += 1;
    }}, 40);
    return {_MODEL}.collaborative;
}}"""


@pytest.fixture(scope="module")
def rtc_lab(
    tmp_path_factory: pytest.TempPathFactory, model_stub: ModelStub, keyed_stub: ModelStub
) -> Iterator[LabServer]:
    """A lab run by the environment that has jupyter-collaboration."""
    if not Path(RTC_PYTHON).is_file():
        reason = f"no Python with jupyter-collaboration at {RTC_PYTHON}; create it with: {CREATE}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with start_lab(tmp_path_factory, model_stub, keyed_stub, python=RTC_PYTHON) as server:
        # The collaboration server extension answers: document sessions exist.
        request = urllib.request.Request(
            f"{server.url}api/collaboration/session/README.md",
            data=json.dumps({"format": "text", "type": "file"}).encode(),
            method="PUT",
            headers={"Authorization": f"token {server.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["fileId"]
        yield server


def _new_page(browser: Browser, lab: LabServer) -> tuple[Page, list[str]]:
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    # Shown by pytest only when the test fails.
    page.on(
        "console",
        lambda message: (
            print(f"console {message.type}: {message.text}")
            if message.type in ("error", "warning")
            else None
        ),
    )
    page.goto(lab.lab_url())
    wait_for_lab(page)
    return page, errors


@pytest.fixture
def rtc_page(
    browser: Browser, rtc_lab: LabServer, request: pytest.FixtureRequest
) -> Iterator[Page]:
    """A logged-in page of the RTC lab; screenshotted when the test ends."""
    page, errors = _new_page(browser, rtc_lab)
    try:
        yield page
        assert not errors, errors
    finally:
        try:
            page.screenshot(path=artifact_name(request))
        finally:
            page.context.close()


def _open_shared(page: Page, path: str) -> Locator:
    """Open the notebook and check it is the shared document of a collaboration room."""
    panel = _open(page, path)
    assert page.evaluate(COLLABORATIVE, path) is True, "the notebook is not collaborative"
    return panel


def _on_disk(lab: LabServer, path: str) -> list[list[str]]:
    book = json.loads((lab.root / path).read_text(encoding="utf-8"))
    return [[c["id"], c["cell_type"], "".join(c["source"])] for c in book["cells"]]


def _wait_on_disk(lab: LabServer, path: str, check: Callable[[list[list[str]]], bool]) -> None:
    deadline = time.monotonic() + SAVED_S
    cells = _on_disk(lab, path)
    while not check(cells) and time.monotonic() < deadline:
        time.sleep(0.1)
        cells = _on_disk(lab, path)
    assert check(cells), cells


def test_rtc_a_change_set_goes_through_the_shared_notebook_and_keeps_the_users_edits(
    rtc_page: Page, rtc_lab: LabServer, model_stub: ModelStub
) -> None:
    page = rtc_page
    path = f"nbedit-{uuid.uuid4().hex[:8]}/sales.ipynb"
    write(rtc_lab.root / path, _notebook())
    panel = _open_shared(page, path)
    _type_into(panel, page, path, 0, "  # typed, not saved")
    approval = _propose(rtc_lab, model_stub, path)

    review = _review_and_reject_first_hunk(page, approval["id"])
    page.keyboard.press("Control+Enter")
    outcome = review.locator("[data-outcome]")
    expect(outcome).to_have_attribute("data-outcome", "applied", timeout=TIMEOUT_MS)
    cells = page.evaluate(CELL_SOURCES, path)
    _assert_applied(cells)
    assert len(cells) == 4  # the insert is made once, not once more by the room
    # The server found it made and wrote nothing over it; the room saves what the page has.
    result = _tool_result(rtc_lab, approval["session_id"])
    assert "already has these changes" in result, result
    decided = server_api(rtc_lab, f"terax/api/ai/approvals/{approval['id']}")
    assert decided["decision"]["hunks"] == [1, 2]
    _wait_on_disk(rtc_lab, path, lambda on_disk: on_disk == cells)
    page.wait_for_function(CLEAN, arg=path, timeout=TIMEOUT_MS)
    assert page.evaluate(CELL_SOURCES, path) == cells


def test_rtc_an_edit_of_a_changed_cell_refuses_the_change(
    rtc_page: Page, rtc_lab: LabServer, model_stub: ModelStub
) -> None:
    page = rtc_page
    path = f"nbedit-{uuid.uuid4().hex[:8]}/sales.ipynb"
    write(rtc_lab.root / path, _notebook())
    panel = _open_shared(page, path)
    approval = _propose(rtc_lab, model_stub, path)
    _type_into(panel, page, path, 1, "value_31 = 31")

    review = _review(page, approval["id"])
    review.locator("[data-action='apply']").click()
    outcome = review.locator("[data-outcome]")
    expect(outcome).to_have_attribute("data-outcome", "failed", timeout=TIMEOUT_MS)
    expect(outcome).to_contain_text("Cell values changed in the open notebook")
    # Nothing of the change anywhere: the room saves the user's edit, and only it.
    cells = page.evaluate(CELL_SOURCES, path)
    assert len(cells) == 3
    assert cells[1][2] == LONG + "value_31 = 31"
    _wait_on_disk(rtc_lab, path, lambda on_disk: on_disk == cells)
    pending = server_api(rtc_lab, f"terax/api/ai/approvals/{approval['id']}")
    assert pending["status"] == "pending"


def test_rtc_a_collaborator_types_while_the_change_set_is_applied(
    rtc_page: Page,
    rtc_lab: LabServer,
    browser: Browser,
    model_stub: ModelStub,
    request: pytest.FixtureRequest,
) -> None:
    page = rtc_page
    path = f"nbedit-{uuid.uuid4().hex[:8]}/sales.ipynb"
    write(rtc_lab.root / path, _notebook())
    _open_shared(page, path)
    other, errors = _new_page(browser, rtc_lab)
    try:
        _open_shared(other, path)
        approval = _propose(rtc_lab, model_stub, path)
        review = _review_and_reject_first_hunk(page, approval["id"])
        typed = " # the collaborator typed this while the agent's change was applied"
        other.evaluate(TYPE_SLOWLY, [path, typed])
        # Apply once the collaborator's typing has reached this page, in the middle of it.
        page.wait_for_function(
            f"path => {_MODEL}.sharedModel.cells[0].getSource().length > 20", arg=path
        )
        page.keyboard.press("Control+Enter")
        assert other.evaluate("() => window.teraxTyped") < len(typed), "typed before applying"
        expect(review.locator("[data-outcome]")).to_have_attribute(
            "data-outcome", "applied", timeout=TIMEOUT_MS
        )
        other.wait_for_function(f"n => window.teraxTyped === {len(typed)}", arg=len(typed))
        expected = [
            ["title", "code", "title = 'Sales'" + typed],
            ["values", "code", LONG.replace("value_27 = 27\n", "value_27 = 'twenty-seven'\n")],
            ["end", "code", "print('done')"],
        ]
        # Both pages and the file come to the same notebook: both edits, each once.
        for each in (page, other):
            each.wait_for_function(
                f"path => {_MODEL}.sharedModel.cells[0].getSource().endsWith('applied')",
                arg=path,
            )
            cells = each.evaluate(CELL_SOURCES, path)
            assert [cell[:3] for cell in cells[:3]] == expected
            assert [cell[1:] for cell in cells[3:]] == [["markdown", "## Totals"]]
        _wait_on_disk(rtc_lab, path, lambda on_disk: on_disk == cells)
        result = _tool_result(rtc_lab, approval["session_id"])
        assert "already has these changes" in result, result
        assert not errors, errors
    finally:
        other.screenshot(path=artifact_name(request, "-collaborator"))
        other.context.close()
