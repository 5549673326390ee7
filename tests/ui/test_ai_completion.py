"""Inline completion in Chromium: the stub's fill-in-the-middle answer shows as ghost text."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from terax_jupyter.testing.model_stub import text

from .helpers import wait_for_lab, write

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui

TIMEOUT_MS = 15_000
INLINE_COMPLETER = "@jupyterlab/completer-extension:inline-completer"
SUGGESTION = "(a, b):\n    return a + b"


def save_settings(page: Page, raw: dict) -> None:
    page.evaluate(
        "([id, raw]) => window.jupyterapp.serviceManager.settings.save(id, raw).then(() => true)",
        [INLINE_COMPLETER, json.dumps(raw)],
    )


@pytest.fixture
def completing_page(page: Page, lab: LabServer) -> Iterator[Page]:
    """The page with the Terax inline provider enabled (Lab reads it at start: reload)."""
    if lab.base_url != "/":
        pytest.skip("covered at the root; the API's prefix handling is the panel's tests'")
    save_settings(page, {"providers": {"terax": {"enabled": True, "debouncerDelay": 100}}})
    page.reload()
    wait_for_lab(page)
    try:
        yield page
    finally:
        save_settings(page, {})


def test_typing_shows_the_models_suggestion_as_ghost_text(
    completing_page: Page, lab: LabServer, model_stub: ModelStub
) -> None:
    page = completing_page
    model_stub.script([text(SUGGESTION) for _ in range(20)])
    write(lab.root / "complete_me.py", "\n\nprint(add(1, 2))\n")
    page.evaluate(
        "path => window.jupyterapp.commands.execute('docmanager:open', { path }).then(() => true)",
        "complete_me.py",
    )
    editor = page.locator("#jp-main-dock-panel .jp-FileEditor .cm-content").first
    expect(editor).to_contain_text("print(add(1, 2))", timeout=TIMEOUT_MS)
    editor.locator(".cm-line").first.click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("def add", delay=30)

    ghost = page.locator(".jp-GhostText")
    expect(ghost.first).to_contain_text("return a + b", timeout=TIMEOUT_MS)
    fim = [r for r in model_stub.requests if r.path == "/v1/completions"]
    assert fim, [r.path for r in model_stub.requests]
    assert fim[-1].body["prompt"].endswith("def add")
    assert fim[-1].body["suffix"].startswith("\n\nprint(add(1, 2))")

    page.keyboard.press("Tab")  # accepts the ghost text
    expect(editor).to_contain_text("def add(a, b):", timeout=TIMEOUT_MS)
    expect(editor).to_contain_text("return a + b", timeout=TIMEOUT_MS)
