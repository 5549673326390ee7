"""Search in Files (Ctrl+Shift+F): the streamed content search panel in a real JupyterLab."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from .helpers import ENV_SECRET, artifact_name

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

pytestmark = pytest.mark.ui

PANEL = "#terax-search-in-files"
QUERY = f"{PANEL} .jp-TeraxSearch-query"
SUMMARY = f"{PANEL} .jp-TeraxSearch-summary"
FILE_ROWS = f"{PANEL} .jp-TeraxSearch-fileRow"
LINE_ROWS = f"{PANEL} .jp-TeraxSearch-lineRow"


def open_panel(page: Page) -> None:
    page.locator("#jp-main-dock-panel").click()
    page.keyboard.press("Control+Shift+f")
    expect(page.locator(QUERY)).to_be_focused()


def search(page: Page, text: str) -> None:
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def file_row(page: Page, path: str) -> Locator:
    return page.locator(f"{FILE_ROWS}[data-path='{path}']")


def status_bar_position(page: Page) -> Locator:
    return page.locator("#jp-main-statusbar").get_by_text("Ln ")


def test_finds_a_string_across_files_and_opens_the_match(
    page: Page, request: pytest.FixtureRequest
) -> None:
    bindings = page.evaluate(
        """() => window.jupyterapp.commands.keyBindings
            .filter(b => b.keys.join(' ') === 'Ctrl Shift F')
            .map(b => b.command)"""
    )
    assert bindings == ["terax:search-in-files"]
    open_panel(page)
    search(page, "needle_marker")

    expect(page.locator(SUMMARY)).to_contain_text("6 matches in 5 files")
    expect(page.locator(SUMMARY)).not_to_contain_text("Searching")
    paths = page.locator(FILE_ROWS).evaluate_all("rows => rows.map(r => r.dataset.path)")
    assert sorted(paths) == [
        "deeply/nested/folder/structure/with/a/very/long/path/for_truncation_checks/"
        "configuration_loader_utilities.py",
        "docs/guide.md",
        "src/app.py",
        "src/components/navigation_bar.tsx",
        "src/utils/string_helpers.py",
    ]
    helpers = file_row(page, "src/utils/string_helpers.py")
    expect(helpers.locator(".jp-TeraxSearch-badge")).to_have_text("2")
    marks = page.locator(f"{LINE_ROWS} mark")
    expect(marks.first).to_have_text("needle_marker")
    assert set(marks.all_inner_texts()) == {"needle_marker"}
    # The protected .env holds the word too, but neither its name nor its content may show.
    panel_text = page.locator(PANEL).inner_text()
    assert ENV_SECRET not in panel_text
    assert ".env" not in panel_text
    page.screenshot(path=artifact_name(request, "-panel"))

    # The greeting line has an emoji (two UTF-16 units) before the match.
    line = page.locator(f"{LINE_ROWS}[data-path='src/utils/string_helpers.py'][data-line='10']")
    line.click()

    tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")
    expect(tab).to_contain_text("string_helpers.py")
    text = '    return f"héllo 😀 {name}: needle_marker"'
    end_column = len(text.encode("utf-16-le")) // 2 - 1
    expect(status_bar_position(page)).to_have_text(f"Ln 10, Col {end_column + 1}")
    selected = page.evaluate(
        """() => {
            const editor = window.jupyterapp.shell.currentWidget.content.editor;
            const { start, end } = editor.getSelection();
            return editor.getLine(start.line).slice(start.column, end.column);
        }"""
    )
    assert selected == "needle_marker"

    # Ctrl+Shift+F from an editor searches for the word selected there.
    page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.editor.setSelection({
            start: { line: 3, column: 4 }, end: { line: 3, column: 11 }
        })"""
    )
    page.keyboard.press("Control+Shift+f")
    expect(page.locator(QUERY)).to_have_value("slugify")
    expect(page.locator(QUERY)).to_be_focused()
    expect(page.locator(SUMMARY)).to_contain_text("3 matches in 2 files")


def test_bad_regex_shows_the_server_message(page: Page, request: pytest.FixtureRequest) -> None:
    open_panel(page)
    regex = page.locator(f"{PANEL} .jp-TeraxSearch-toggle").nth(2)
    expect(regex).to_have_attribute("aria-pressed", "false")
    page.keyboard.press("Alt+r")
    expect(regex).to_have_attribute("aria-pressed", "true")

    search(page, "needle_(marker")

    error = page.locator(f"{PANEL} [role='alert']")
    expect(error).to_contain_text("not valid")
    expect(page.locator(QUERY)).to_have_attribute("aria-invalid", "true")
    expect(page.locator(FILE_ROWS)).to_have_count(0)
    page.screenshot(path=artifact_name(request, "-error"))

    # As plain text the same pattern is fine (and matches nothing).
    page.keyboard.press("Alt+r")
    expect(regex).to_have_attribute("aria-pressed", "false")
    expect(error).to_have_count(0)
    expect(page.locator(SUMMARY)).to_contain_text("No results found")

    # Whole word and match case toggle from the keyboard too.
    case, word = (page.locator(f"{PANEL} .jp-TeraxSearch-toggle").nth(i) for i in (0, 1))
    page.keyboard.press("Alt+c")
    expect(case).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Alt+w")
    expect(word).to_have_attribute("aria-pressed", "true")
    expect(page.locator(PANEL)).to_be_visible()
