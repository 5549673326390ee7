"""What UI tests of the Terax terminal share: a new terminal tab, typing a command, a block."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from playwright.sync_api import expect

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

PANE = "#jp-main-dock-panel .jp-TeraxTerminal-pane"
INPUT = ".jp-TeraxInput"
EDITOR = f"{INPUT} .cm-content"
START_TIMEOUT_MS = 20_000


def open_terminal(page: Page) -> Locator:
    """A new Terax terminal tab, ready at its prompt (the input line shows)."""
    before = page.locator(PANE).count()
    page.evaluate("async () => { await window.jupyterapp.commands.execute('terax:new-terminal'); }")
    expect(page.locator(PANE)).to_have_count(before + 1, timeout=START_TIMEOUT_MS)
    pane = page.locator(PANE).nth(before)
    expect(pane.locator(EDITOR)).to_be_visible(timeout=START_TIMEOUT_MS)
    return pane


def run(page: Page, pane: Locator, command: str) -> None:
    """Type a command in the pane's input line and press Enter."""
    editor = pane.locator(EDITOR)
    editor.click()
    expect(editor).to_be_focused()
    page.keyboard.type(command)
    page.keyboard.press("Enter")


def header(pane: Locator, command: str) -> Locator:
    """The block header of a command (drawn over its prompt line)."""
    return pane.locator(f".jp-TeraxBlock-header[data-command={json.dumps(command)}]")
