"""Context reaches the agent from where people work: the keyboard opens the panel and
attaches an editor selection, the file browser's context menu attaches a file, a terminal
block's "Ask Terax" and a terminal selection attach what the terminal shows. Each test sends
the prompt and checks what the model received."""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from .ai_helpers import PANEL, TIMEOUT_MS, chat_prompts, use_stub_provider
from .helpers import artifact_name, write
from .terminal_helpers import header, open_terminal, run

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui

SOURCE = "".join(f"line_{n} = {n}\n" for n in range(1, 7))


def chips(page: Page) -> Locator:
    return page.locator(f"{PANEL} .jp-TeraxAi-chips li")


def asked(model_stub: ModelStub, starting: str) -> str:
    """What the model was last asked (the prompt with its attachments), once the prompt
    ``starting`` so has arrived: the chat's last echo may still be the turn before."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while True:
        prompts = chat_prompts(model_stub)
        if (prompts and prompts[-1].startswith(starting)) or time.monotonic() > deadline:
            assert prompts, "the model was never asked"
            return prompts[-1]
        time.sleep(0.1)


def send(page: Page, prompt: str) -> None:
    """Send from the panel on the stub provider and wait for the stub's echo."""
    panel = page.locator(PANEL)
    use_stub_provider(panel)
    composer = panel.locator(".jp-TeraxAi-input")
    composer.fill(prompt)
    composer.press("Enter")
    # The chat shows the prompt with what was attached.
    expect(panel.locator(".jp-TeraxAi-prompt").last).to_contain_text(prompt, timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_contain_text("echo:", timeout=TIMEOUT_MS)
    # Sent: the attachments went with the prompt.
    expect(chips(page)).to_have_count(0)


def context_menu_item(page: Page, label: str) -> Locator:
    return page.locator(".lm-Menu .lm-Menu-item").filter(has_text=label)


def test_the_keyboard_opens_the_panel_and_attaches_an_editor_selection(
    root_lab: LabServer, page: Page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    path = f"ctx-{uuid.uuid4().hex[:8]}/sample.py"
    write(root_lab.root / path, SOURCE)
    panel = page.locator(PANEL)
    page.evaluate("() => window.jupyterapp.shell.collapseRight()")
    expect(panel).to_be_hidden()

    # Alt+Shift+I shows the panel with the prompt focused, and hides it again from there.
    page.keyboard.press("Alt+Shift+I")
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxAi-input")).to_be_focused(timeout=TIMEOUT_MS)
    page.keyboard.press("Alt+Shift+I")
    expect(panel).to_be_hidden()

    page.evaluate(
        "path => window.jupyterapp.commands.execute('docmanager:open', { path }).then(() => true)",
        path,
    )
    editor = page.locator(".jp-FileEditor .cm-content")
    expect(editor).to_contain_text("line_6 = 6", timeout=TIMEOUT_MS)
    editor.click()
    # Lines 2 and 3, whole.
    page.keyboard.press("Control+Home")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Shift+ArrowDown")
    page.keyboard.press("Shift+End")
    page.keyboard.press("Alt+Shift+A")
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)
    chip = chips(page)
    expect(chip).to_have_count(1, timeout=TIMEOUT_MS)
    expect(chip).to_have_attribute("data-kind", "selection")
    expect(chip).to_contain_text("sample.py:2-3")
    expect(panel.locator(".jp-TeraxAi-input")).to_be_focused()
    page.screenshot(path=artifact_name(request, "-chip"))

    send(page, "What do these lines do?")
    prompt = asked(model_stub, "What do these lines do?")
    assert prompt.startswith("What do these lines do?")
    assert f"from {path}" in prompt
    assert "line_2 = 2\nline_3 = 3" in prompt
    assert "line_1 = 1" not in prompt
    assert "line_4 = 4" not in prompt
    # The chat shows the prompt as typed, the selection folded beneath it.
    bubble = page.locator(f"{PANEL} .jp-TeraxAi-prompt").last
    context = bubble.locator(".jp-TeraxAi-promptContext")
    expect(context).not_to_have_attribute("open", "")
    expect(context.locator("summary")).to_have_text("Attached context")
    expect(context).to_contain_text("line_2 = 2")
    page.screenshot(path=artifact_name(request, "-sent"))


def test_the_file_browser_attaches_a_file(
    root_lab: LabServer, page: Page, model_stub: ModelStub
) -> None:
    folder = f"ctx-{uuid.uuid4().hex[:8]}"
    write(root_lab.root / folder / "notes.md", "# Notes\n")
    write(root_lab.root / folder / "other.md", "# Other\n")
    page.evaluate(
        "path => window.jupyterapp.commands.execute('filebrowser:go-to-path', { path })"
        ".then(() => true)",
        folder,
    )
    item = page.locator(".jp-DirListing-item").filter(has_text="notes.md")
    expect(item).to_be_visible(timeout=TIMEOUT_MS)
    item.click(button="right")
    context_menu_item(page, "Ask Terax About This File").click()

    panel = page.locator(PANEL)
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)
    chip = chips(page)
    expect(chip).to_have_count(1, timeout=TIMEOUT_MS)
    expect(chip).to_have_attribute("data-kind", "file")
    expect(chip).to_contain_text(f"{folder}/notes.md")
    # A chip can be taken back before sending.
    chip.get_by_role("button", name=f"Remove {folder}/notes.md").click()
    expect(chip).to_have_count(0)
    item.click(button="right")
    context_menu_item(page, "Ask Terax About This File").click()
    expect(chips(page)).to_have_count(1, timeout=TIMEOUT_MS)

    send(page, "Summarize the notes.")
    prompt = asked(model_stub, "Summarize the notes.")
    assert f"{folder}/notes.md" in prompt
    assert "other.md" not in prompt


def test_a_terminal_block_and_a_terminal_selection_are_attached(
    root_lab: LabServer, page: Page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    marker = f"ctx-marker-{uuid.uuid4().hex[:8]}"
    pane = open_terminal(page)
    command = f"echo {marker}"
    run(page, pane, command)
    block = header(pane, command)
    expect(block).to_have_attribute("data-exit-code", "0", timeout=TIMEOUT_MS)
    block.locator(".jp-TeraxBlock-chip").hover()
    block.locator("[data-action='ask']").click()

    panel = page.locator(PANEL)
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)
    chip = chips(page)
    expect(chip).to_have_count(1, timeout=TIMEOUT_MS)
    expect(chip).to_have_attribute("data-kind", "block")
    expect(chip).to_contain_text(command)
    send(page, "Why did this print that?")
    prompt = asked(model_stub, "Why did this print that?")
    assert "Terminal block:" in prompt
    assert command in prompt
    # The output line, not only the command.
    assert prompt.count(marker) >= 2

    # A selection made with the mouse, attached from the terminal's context menu.
    screen = pane.locator(".xterm-screen")
    box = screen.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 2, box["y"] + 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] - 4, box["y"] + box["height"] / 3, steps=8)
    page.mouse.up()
    screen.click(button="right", position={"x": 20, "y": 10})
    context_menu_item(page, "Ask Terax About the Selection").click()
    chip = chips(page)
    expect(chip).to_have_count(1, timeout=TIMEOUT_MS)
    expect(chip).to_have_attribute("data-kind", "selection")
    expect(chip).to_contain_text("terminal selection")
    page.screenshot(path=artifact_name(request, "-selection"))
    send(page, "Explain the selection.")
    prompt = asked(model_stub, "Explain the selection.")
    assert "```console" in prompt
    assert marker in prompt.split("```console", 1)[1]


def notebook_with_an_error() -> str:
    """A saved notebook whose second cell raised, its traceback coloured as IPython writes."""
    red, reset = "\x1b[0;31m", "\x1b[0m"
    traceback = [
        f"{red}---------------------------------------------------------------------------{reset}",
        f"{red}ZeroDivisionError{reset}                         Traceback (most recent call last)",
        f"Cell {red}In[2], line 1{reset}\n{red}----> 1{reset} total = sum(values) / 0",
        f"{red}ZeroDivisionError{reset}: division by zero",
    ]
    cells = [
        {
            "cell_type": "code",
            "execution_count": 1,
            "id": "cell-setup",
            "metadata": {},
            "outputs": [],
            "source": "values = [1, 2, 3]",
        },
        {
            "cell_type": "code",
            "execution_count": 2,
            "id": "cell-broken",
            "metadata": {},
            "outputs": [
                {
                    "output_type": "error",
                    "ename": "ZeroDivisionError",
                    "evalue": "division by zero",
                    "traceback": traceback,
                }
            ],
            "source": "total = sum(values) / 0",
        },
    ]
    return json.dumps(
        {
            "cells": cells,
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_a_notebook_cell_and_its_error_are_attached(
    root_lab: LabServer, page: Page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    path = f"ctx-{uuid.uuid4().hex[:8]}/analysis.ipynb"
    write(root_lab.root / path, notebook_with_an_error())
    page.evaluate(
        "path => window.jupyterapp.commands.execute('docmanager:open', { path }).then(() => true)",
        path,
    )
    cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    expect(cells).to_have_count(2, timeout=TIMEOUT_MS)
    error = cells.nth(1).locator(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
    )
    expect(error).to_contain_text("ZeroDivisionError", timeout=TIMEOUT_MS)

    # "Ask Terax About This Cell" on the first cell attaches its source, by notebook and id.
    cells.nth(0).locator(".jp-InputPrompt").click()
    cells.nth(0).locator(".jp-InputPrompt").click(button="right")
    context_menu_item(page, "Ask Terax About This Cell").click()
    panel = page.locator(PANEL)
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)
    chip = chips(page)
    expect(chip).to_have_count(1, timeout=TIMEOUT_MS)
    expect(chip).to_have_attribute("data-kind", "cell")
    expect(chip).to_contain_text("analysis.ipynb cell")
    expect(chip).not_to_contain_text("(")
    send(page, "What does this cell hold?")
    prompt = asked(model_stub, "What does this cell hold?")
    assert prompt.startswith("What does this cell hold?")
    assert f"Notebook cell {path}#cell-setup" in prompt
    assert "```python\nvalues = [1, 2, 3]\n```" in prompt
    assert "Its error" not in prompt

    # "Fix This Error With Terax" on the error output sends the cell with its traceback,
    # uncoloured, at once.
    error.click()
    error.click(button="right")
    context_menu_item(page, "Fix This Error With Terax").click()
    expect(panel.locator(".jp-TeraxAi-prompt").last).to_contain_text(
        "Fix the error", timeout=TIMEOUT_MS
    )
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_contain_text("echo:", timeout=TIMEOUT_MS)
    prompt = asked(model_stub, "Fix the error the attached notebook cell raised.")
    assert prompt.startswith("Fix the error the attached notebook cell raised.")
    assert f"Notebook cell {path}#cell-broken" in prompt
    assert "total = sum(values) / 0" in prompt
    assert "ZeroDivisionError: division by zero" in prompt
    assert "\x1b[" not in prompt
    expect(chips(page)).to_have_count(0)
    page.screenshot(path=artifact_name(request, "-fixed"))
