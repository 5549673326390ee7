"""Inline completion in Chromium: the stub's fill-in-the-middle answer shows as ghost text."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from terax_jupyter.testing.model_stub import error, text

from .ai_helpers import PANEL
from .helpers import artifact_name, wait_for_lab, write

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


def open_file(page: Page, path: str) -> None:
    page.evaluate(
        "path => window.jupyterapp.commands.execute('docmanager:open', { path }).then(() => true)",
        path,
    )


def test_completion_says_why_it_fails_and_follows_the_model_picked_for_chat(
    completing_page: Page,
    lab: LabServer,
    model_stub: ModelStub,
    request: pytest.FixtureRequest,
) -> None:
    page = completing_page
    # The provider turns every request away: no ghost text, but the reason is told.
    model_stub.script([error(401) for _ in range(40)])
    write(lab.root / "why_not.py", "\n\nprint(mul(2, 3))\n")
    open_file(page, "why_not.py")
    editor = page.locator("#jp-main-dock-panel .jp-FileEditor .cm-content").first
    expect(editor).to_contain_text("print(mul(2, 3))", timeout=TIMEOUT_MS)
    editor.locator(".cm-line").first.click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("def mul", delay=30)
    toast = page.locator(".Toastify__toast", has_text="Completion: provider refused (401)")
    expect(toast.first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator(".jp-GhostText")).to_have_count(0)

    # Its action opens the AI settings, which keep showing the reason and the provider's words.
    toast.first.get_by_role("button", name="AI settings").click()
    panel = page.locator(PANEL)
    section = panel.get_by_role("region", name="Inline completion")
    state = section.locator(".jp-TeraxAi-completionStatus")
    expect(state).to_have_attribute("data-state", "error", timeout=TIMEOUT_MS)
    expect(state).to_contain_text("Completion: provider refused (401)")
    expect(state).to_contain_text("Stub refused the request (401)")
    page.screenshot(path=artifact_name(request, "-refused"))

    # A model picked for chat is the one completions use (no model is set for completion).
    model_stub.reset()
    model_stub.script([text(SUGGESTION) for _ in range(20)])
    settings = panel.locator(".jp-TeraxAi-settings")
    settings.get_by_label("Provider", exact=True).select_option("stub")
    model_field = settings.get_by_label("Model", exact=True)
    model_field.fill("picked-for-chat")
    settings.get_by_role("button", name="Use for chats").click()
    bar = panel.locator(".jp-TeraxAi-modelBar")
    expect(bar.get_by_label("Model")).to_have_value("picked-for-chat", timeout=TIMEOUT_MS)
    try:
        editor.locator(".cm-line").first.click()
        page.keyboard.press("End")
        page.keyboard.type("x", delay=30)
        expect(page.locator(".jp-GhostText").first).to_contain_text(
            "return a + b", timeout=TIMEOUT_MS
        )
        fim = [r for r in model_stub.requests if r.path == "/v1/completions"]
        assert fim, [r.path for r in model_stub.requests]
        assert fim[-1].body["model"] == "picked-for-chat"
        expect(state).to_have_attribute("data-state", "ok", timeout=TIMEOUT_MS)
        expect(state).to_contain_text("stub · picked-for-chat")
    finally:
        # The lab is shared by later tests: the chat goes back to the stub's listed model.
        bar.get_by_label("Model").select_option("stub-model")
        expect(bar.get_by_label("Model")).to_have_value("stub-model", timeout=TIMEOUT_MS)
