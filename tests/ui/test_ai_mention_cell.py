"""`@notebook.ipynb#cell` in the AI composer, in Chromium against the model stub: `#` after a
notebook offers its cells, the keyboard picks one, and the prompt carries that cell's source
(and its error), read when sent; from the open notebook's unsaved edits when it is open. An
unknown id is not sent and says why."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from .ai_helpers import TIMEOUT_MS, chat_prompts, open_panel, use_stub_provider
from .helpers import artifact_name, write
from .test_ai_context import notebook_with_an_error

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui


def options(panel: Locator) -> Locator:
    return panel.locator(".jp-TeraxAi-picker [role='option']")


def sent(panel: Locator, model_stub: ModelStub, count: int) -> str:
    """Wait for the stub's echo of prompt number ``count``; what the model was asked."""
    expect(panel.locator(".jp-TeraxAi-markdown")).to_have_count(count, timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_contain_text("echo:", timeout=TIMEOUT_MS)
    prompts = chat_prompts(model_stub)
    assert len(prompts) == count
    return prompts[-1]


def test_a_cell_is_mentioned_by_notebook_and_id(
    root_lab: LabServer, page: Page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    path = f"mention-{uuid.uuid4().hex[:8]}/analysis.ipynb"
    write(root_lab.root / path, notebook_with_an_error())
    panel = open_panel(page)
    use_stub_provider(panel)
    composer = panel.locator(".jp-TeraxAi-input")
    composer.click()

    # The notebook is not open: its cells come from the server, each with its type and first line.
    composer.press_sequentially(f"Why does @{path}#")
    items = options(panel)
    expect(items).to_have_count(2, timeout=TIMEOUT_MS)
    expect(items.nth(0)).to_contain_text("#cell-setup")
    expect(items.nth(0)).to_contain_text("code · values = [1, 2, 3]")
    expect(items.nth(1)).to_contain_text("total = sum(values) / 0")
    # What follows `#` filters them, by id or source.
    composer.press_sequentially("sum")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("#cell-broken")
    for _ in range(3):
        composer.press("Backspace")
    expect(items).to_have_count(2)
    composer.press("ArrowDown")
    expect(items.nth(1)).to_have_attribute("aria-selected", "true")
    page.screenshot(path=artifact_name(request, "-picker"))
    composer.press("Enter")
    expect(panel.locator(".jp-TeraxAi-picker")).to_have_count(0)
    expect(composer).to_have_value(f"Why does @{path}#cell-broken ")
    composer.press_sequentially("fail?")
    composer.press("Enter")
    prompt = sent(panel, model_stub, 1)
    assert prompt.startswith(f"Why does @{path}#cell-broken fail?")
    assert f"Notebook cell {path}#cell-broken" in prompt
    assert "```python\ntotal = sum(values) / 0\n```" in prompt
    assert "ZeroDivisionError: division by zero" in prompt
    assert "\x1b[" not in prompt
    assert "values = [1, 2, 3]\n```" not in prompt
    expect(composer).to_have_value("")

    # An unknown id: not sent, said why, the text kept.
    composer.fill(f"And @{path}#cell-gone?")
    composer.press("Enter")
    problem = panel.locator(".jp-TeraxAi-composerProblem")
    expect(problem).to_contain_text("has no cell with the id cell-gone", timeout=TIMEOUT_MS)
    expect(composer).to_have_value(f"And @{path}#cell-gone?")
    assert len(chat_prompts(model_stub)) == 1
    page.screenshot(path=artifact_name(request, "-unknown"))
    # Typing clears the message.
    composer.fill("")
    expect(problem).to_have_count(0)

    # Open, with an unsaved edit: the notebook's model wins over the saved file.
    page.evaluate(
        "path => window.jupyterapp.commands.execute('docmanager:open', { path }).then(() => true)",
        path,
    )
    cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    expect(cells).to_have_count(2, timeout=TIMEOUT_MS)
    editor = cells.nth(0).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\nunsaved_marker = 42")
    expect(editor).to_contain_text("unsaved_marker = 42")
    composer.click()
    composer.press_sequentially(f"Explain @{path}#unsav")
    expect(items).to_have_count(1, timeout=TIMEOUT_MS)
    expect(items.first).to_contain_text("#cell-setup")
    composer.press("Tab")
    expect(composer).to_have_value(f"Explain @{path}#cell-setup ")
    composer.press("Enter")
    prompt = sent(panel, model_stub, 2)
    assert "values = [1, 2, 3]\nunsaved_marker = 42" in prompt
    assert "Its error" not in prompt
    page.screenshot(path=artifact_name(request, "-sent"))

    # `#` right after a notebook picked with `@` asks for its cells (the file chip goes).
    folder = path.split("/")[0]
    composer.press_sequentially(f"@{folder}/analysis")
    expect(items.first).to_contain_text(path, timeout=TIMEOUT_MS)
    composer.press("Enter")
    expect(composer).to_have_value(f"@{path} ")
    chip = panel.locator(".jp-TeraxAi-chips li")
    expect(chip).to_have_count(1)
    composer.press_sequentially("#")
    expect(composer).to_have_value(f"@{path}#")
    expect(chip).to_have_count(0)
    expect(items).to_have_count(2, timeout=TIMEOUT_MS)
    # Escape closes the picker and keeps the text.
    composer.press("Escape")
    expect(panel.locator(".jp-TeraxAi-picker")).to_have_count(0)
    expect(composer).to_have_value(f"@{path}#")
