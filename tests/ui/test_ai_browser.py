"""The agent checks a local web app in its headless browser from the AI panel: its tool cards,
and the screenshot it takes shown in the chat."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from terax_jupyter.services.browser.evals.site import EvalSite
from terax_jupyter.testing.model_stub import text, tool_call

from .ai_helpers import TIMEOUT_MS, ask, open_panel, use_stub_provider
from .helpers import DARK, LIGHT, artifact_name, change_theme

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui


@pytest.fixture
def site() -> Iterator[EvalSite]:
    with EvalSite() as app:
        yield app


def test_the_agents_screenshot_shows_in_the_chat(
    root_lab: LabServer,
    page: Page,
    model_stub: ModelStub,
    site: EvalSite,
    request: pytest.FixtureRequest,
) -> None:
    model_stub.script(
        [
            tool_call("browser_open", {"url": site.url("/login")}),
            tool_call("browser_screenshot", {}),
            text("The sign-in page renders its form."),
        ]
    )
    panel = open_panel(page)
    use_stub_provider(panel)
    ask(panel, "Check the sign-in page")
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_have_text(
        "The sign-in page renders its form.", timeout=TIMEOUT_MS * 2
    )
    opened = panel.locator(".jp-TeraxAi-tool[data-tool='browser_open']")
    expect(opened).to_have_attribute("data-status", "done")
    card = panel.locator(".jp-TeraxAi-tool[data-tool='browser_screenshot']")
    expect(card).to_have_attribute("data-status", "done")
    image = card.locator("img.jp-TeraxAi-screenshot")
    expect(image).to_be_visible()
    expect(image).to_have_attribute("alt", f"Screenshot of {site.url('/login')}")
    # The image really loaded (not a broken-image box): the server kept it under its id.
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=image.element_handle()
    )
    assert image.evaluate("img => img.naturalWidth") == 1280
    page.screenshot(path=artifact_name(request, "-light"))
    change_theme(page, DARK)
    try:
        page.screenshot(path=artifact_name(request, "-dark"))
    finally:
        change_theme(page, LIGHT)
    # The snapshot the model read is in the card, with the page's form.
    opened.locator(".jp-TeraxAi-toolHeader").click()
    expect(opened.locator(".jp-TeraxAi-toolBody")).to_contain_text('textbox "Username"')


def test_a_destructive_replay_card_shows_scope_origin_version_and_steps(
    root_lab: LabServer,
    page: Page,
    model_stub: ModelStub,
    site: EvalSite,
    request: pytest.FixtureRequest,
) -> None:
    model_stub.script(
        [
            tool_call("browser_open", {"url": site.url("/items")}),
            tool_call("browser_click", {"role": "link", "name": "Delete alpha report"}),
            tool_call("browser_click", {"role": "button", "name": "Confirm delete"}),
            tool_call(
                "browser_save_workflow", {"name": "delete-alpha", "side_effect": "destructive"}
            ),
            tool_call("browser_run_destructive_workflow", {"name": "delete-alpha"}),
            text("Not deleted."),
        ]
    )
    panel = open_panel(page)
    use_stub_provider(panel)
    ask(panel, "Delete the alpha report, save it, and do it again")
    card = panel.locator(".jp-TeraxAi-approval[data-kind='replay']")
    expect(card).to_be_visible(timeout=TIMEOUT_MS * 3)
    site.reset()
    details = card.locator("[data-workflow-approval]")
    expect(details.locator("dd[data-field='Scope']")).to_have_text(site.origin)
    expect(details.locator("dd[data-field='Origin']")).to_have_text(site.origin)
    expect(details.locator("dd[data-field='Version']")).to_have_text("1")
    expect(details.locator("dd[data-field='Side effect']")).to_have_text("destructive")
    expect(details.locator("dd[data-field='Starts on']")).to_have_text(
        f"{site.url('/items')} (Items)"
    )
    expect(details.locator("ol > li")).to_have_text(
        [
            f"open {site.url('/items')}",
            "click link 'Delete alpha report'",
            "click button 'Confirm delete'",
        ]
    )
    page.screenshot(path=artifact_name(request, "-card"))
    card.get_by_role("button", name="Deny").click()
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_have_text(
        "Not deleted.", timeout=TIMEOUT_MS * 2
    )
    assert site.deleted == []


def test_replay_asks_on_the_same_card_and_runs_without_the_model(
    root_lab: LabServer,
    page: Page,
    model_stub: ModelStub,
    site: EvalSite,
    request: pytest.FixtureRequest,
) -> None:
    model_stub.script(
        [
            tool_call("browser_open", {"url": site.url("/items")}),
            tool_call("browser_click", {"role": "link", "name": "Delete alpha report"}),
            tool_call("browser_click", {"role": "button", "name": "Confirm delete"}),
            tool_call(
                "browser_save_workflow", {"name": "delete-beta", "side_effect": "destructive"}
            ),
            text("Saved."),
        ]
    )
    panel = open_panel(page)
    use_stub_provider(panel)
    ask(panel, "Delete the alpha report and save it")
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_have_text(
        "Saved.", timeout=TIMEOUT_MS * 3
    )
    site.reset()
    asked = len(model_stub.requests)

    ask(panel, "/replay delete-beta")
    card = panel.locator(".jp-TeraxAi-approval[data-kind='replay']")
    expect(card).to_be_visible(timeout=TIMEOUT_MS * 3)
    details = card.locator("[data-workflow-approval]")
    expect(details.locator("dd[data-field='Side effect']")).to_have_text("destructive")
    page.screenshot(path=artifact_name(request, "-card"))
    assert site.deleted == []
    card.get_by_role("button", name="Approve").click()
    replayed = panel.locator("[data-tool='browser_run_destructive_workflow']").last
    expect(replayed).to_have_attribute("data-status", "done", timeout=TIMEOUT_MS * 3)
    assert site.deleted == ["alpha report"]
    assert len(model_stub.requests) == asked  # no model call for the replay
