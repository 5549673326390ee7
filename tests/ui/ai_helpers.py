"""What the AI panel's UI tests share: opening the panel, asking, picking the stub provider."""

from __future__ import annotations

from typing import TYPE_CHECKING

from playwright.sync_api import expect

from terax_jupyter.testing.model_stub import last_user_text

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from terax_jupyter.testing.model_stub import ModelStub

PANEL = "#terax-ai"
TIMEOUT_MS = 15_000


def open_panel(page: Page) -> Locator:
    """Show the panel on a new session, with the prompt focused."""
    page.evaluate("() => window.jupyterapp.commands.execute('terax:ai-new-session')")
    panel = page.locator(PANEL)
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxAi-input")).to_be_focused(timeout=TIMEOUT_MS)
    return panel


def ask(panel: Locator, prompt: str) -> None:
    """Send a prompt from the composer and wait until the chat shows it."""
    composer = panel.locator(".jp-TeraxAi-input")
    composer.fill(prompt)
    composer.press("Enter")
    expect(panel.locator(".jp-TeraxAi-prompt").last).to_have_text(prompt, timeout=TIMEOUT_MS)


def use_stub_provider(panel: Locator) -> None:
    """Pick the stub provider for this session (an earlier test may have chosen another)."""
    bar = panel.locator(".jp-TeraxAi-modelBar")
    bar.get_by_label("Provider").select_option("stub")
    expect(bar.get_by_label("Model")).to_have_value("stub-model", timeout=TIMEOUT_MS)


def chat_prompts(model_stub: ModelStub) -> list[str]:
    """What the model was asked in each chat request so far (the last user message)."""
    return [
        last_user_text(r.body)
        for r in model_stub.requests
        if r.path.endswith("/chat/completions") and isinstance(r.body, dict)
    ]
