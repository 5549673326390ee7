"""Terax's commands in Lab's command palette: all under one "Terax" category."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.ui

# What a user looks for in the palette, from each plugin.
EXPECTED = {
    "terax:new-terminal",
    "terax:attach-terminal",
    "terax:split-right",
    "terax:git-panel",
    "terax:git-history",
    "terax:git-commit",
    "terax:go-to-file",
    "terax:search-in-files",
    "terax:ai-open",
    "terax:ai-settings",
    "terax:open-preview",
}


def test_every_terax_command_in_the_palette_is_under_terax(page: Page) -> None:
    page.keyboard.press("Control+Shift+c")
    page.wait_for_selector(".lm-CommandPalette-item", state="attached")
    placed: dict[str, str] = page.evaluate(
        """() => {
          const placed = {};
          let category = '';
          for (const node of document.querySelectorAll('.lm-CommandPalette-content > li')) {
            if (node.classList.contains('lm-CommandPalette-header')) {
              category = node.textContent;
            } else if (node.dataset.command) {
              placed[node.dataset.command] = category;
            }
          }
          return placed;
        }"""
    )
    ours = {command: category for command, category in placed.items() if "terax" in command}
    assert set(ours) >= EXPECTED, EXPECTED - set(ours)
    assert set(ours.values()) == {"Terax"}, ours
    # And nobody else's command sits under Terax.
    assert all("terax" in c for c, category in placed.items() if category == "Terax")
