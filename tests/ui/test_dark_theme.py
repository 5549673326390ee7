"""Go to File and Search in Files under JupyterLab's dark theme (screenshots for review)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from .helpers import DARK, LIGHT, artifact_name, change_theme

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Page

pytestmark = pytest.mark.ui


@pytest.fixture
def dark_page(page: Page) -> Iterator[Page]:
    """The page in the dark theme; the (persisted) theme is set back to light afterwards."""
    change_theme(page, DARK)
    try:
        yield page
    finally:
        page.keyboard.press("Escape")
        change_theme(page, LIGHT)


def test_dark_theme_overlay_and_panel(dark_page: Page, request: pytest.FixtureRequest) -> None:
    page = dark_page
    background = page.evaluate(
        "() => getComputedStyle(document.body).getPropertyValue('--jp-layout-color1').trim()"
    )
    assert background not in ("white", "#fff", "#ffffff")

    page.keyboard.press("Control+p")
    dialog = page.locator("#terax-go-to-file [role='dialog']")
    page.keyboard.type("py")
    expect(dialog).to_have_attribute("data-results-query", "py")
    expect(dialog).to_have_attribute("data-status", "ready")
    page.keyboard.press("ArrowDown")
    page.screenshot(path=artifact_name(request, "-go-to-file"))
    page.keyboard.press("Escape")
    expect(page.locator("#terax-go-to-file")).to_have_count(0)

    page.keyboard.press("Control+Shift+f")
    query = page.locator("#terax-search-in-files .jp-TeraxSearch-query")
    expect(query).to_be_focused()
    page.keyboard.type("needle_marker")
    page.keyboard.press("Enter")
    expect(page.locator("#terax-search-in-files .jp-TeraxSearch-summary")).to_contain_text(
        "6 matches in 5 files"
    )
    page.locator("#terax-search-in-files .jp-TeraxSearch-lineRow").nth(1).hover()
    page.screenshot(path=artifact_name(request, "-search-panel"))
