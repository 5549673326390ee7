"""Go to File (Ctrl+P): the quick-open overlay in a real JupyterLab."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from .helpers import artifact_name

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

OVERLAY = "#terax-go-to-file"
INPUT = f"{OVERLAY} input[role='combobox']"
OPTIONS = f"{OVERLAY} [role='option']"


def open_overlay(page: Page) -> None:
    page.locator("#jp-main-dock-panel").click()
    page.keyboard.press("Control+p")
    expect(page.locator(INPUT)).to_be_focused()


def search(page: Page, query: str) -> None:
    """Type a query and wait until the list shows its answer."""
    page.locator(INPUT).fill(query)
    dialog = page.locator(f"{OVERLAY} [role='dialog']")
    expect(dialog).to_have_attribute("data-results-query", query)
    expect(dialog).to_have_attribute("data-status", "ready")


def test_ctrl_p_finds_a_file_by_fuzzy_query_and_opens_it(
    page: Page, request: pytest.FixtureRequest
) -> None:
    open_overlay(page)
    page.keyboard.type("strhelp")
    expect(page.locator(f"{OVERLAY} [role='dialog']")).to_have_attribute(
        "data-results-query", "strhelp"
    )

    first = page.locator(OPTIONS).first
    expect(first).to_have_attribute("data-path", "src/utils/string_helpers.py")
    expect(first).to_have_attribute("aria-selected", "true")
    # The matched characters are highlighted in the file name.
    marks = first.locator(".jp-TeraxGoToFile-name mark")
    expect(marks.first).to_be_visible()
    assert "".join(marks.all_inner_texts()).lower() == "strhelp"
    active_id = page.locator(INPUT).get_attribute("aria-activedescendant")
    assert active_id == first.get_attribute("id")
    expect(page.locator(f"{OVERLAY} .jp-TeraxGoToFile-facts")).to_contain_text("files indexed")
    page.screenshot(path=artifact_name(request, "-overlay"))

    page.keyboard.press("Enter")

    expect(page.locator(OVERLAY)).to_have_count(0)
    tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")
    expect(tab).to_contain_text("string_helpers.py")
    editor = page.locator("#jp-main-dock-panel .jp-FileEditor .cm-content").first
    expect(editor).to_contain_text("def slugify(text: str) -> str:")

    # Ctrl+P works from inside the code editor too, and Escape gives the focus back.
    editor.click()
    page.keyboard.press("Control+p")
    expect(page.locator(INPUT)).to_be_focused()
    expect(page.locator(INPUT)).to_have_value("strhelp")
    page.keyboard.press("Escape")
    expect(page.locator(OVERLAY)).to_have_count(0)
    expect(editor).to_be_focused()


def test_keyboard_navigation_escape_and_other_shortcuts(page: Page) -> None:
    bindings = page.evaluate(
        """() => window.jupyterapp.commands.keyBindings
            .filter(b => b.keys.join(' ') === 'Ctrl P')
            .map(b => b.command)"""
    )
    assert bindings == ["terax:go-to-file"]

    open_overlay(page)
    search(page, "py")
    options = page.locator(OPTIONS)
    expect(options.nth(1)).to_be_visible()
    expect(options.nth(0)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Control+n")
    expect(options.nth(2)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Control+p")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    # Up from the first item wraps to the last.
    expect(options.last).to_have_attribute("aria-selected", "true")

    # Protected files are never offered.
    search(page, ".env")
    expect(page.locator(f"{OVERLAY} [role='status']")).to_contain_text("No files match")
    expect(options).to_have_count(0)

    page.keyboard.press("Escape")
    expect(page.locator(OVERLAY)).to_have_count(0)

    # Lab's own shortcuts still work: Ctrl+Shift+C opens the command palette.
    page.locator("#jp-main-dock-panel").click()
    page.keyboard.press("Control+Shift+c")
    palette_input = page.locator("#command-palette .lm-CommandPalette-input")
    expect(palette_input).to_be_focused()
    # The commands are in the palette, under the Terax category.
    palette_input.fill("terax")
    palette = page.locator("#command-palette")
    expect(palette.locator(".lm-CommandPalette-header").first).to_have_text("Terax")
    labels = palette.locator(".lm-CommandPalette-itemLabel")
    for label in ("Go to File…", "Search in Files…", "New Terax Terminal"):
        expect(labels.filter(has_text=label)).to_have_count(1)
