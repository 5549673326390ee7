"""The AI composer and what an answer offers, in Chromium against the model stub: the @file,
#snippet and /command pickers, line breaks and prompt history; reasoning folded, a code block
inserted into an editor and run in a terminal; Stop ends a streaming answer."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from terax_jupyter.testing.model_stub import reasoning, slow, text

from .ai_helpers import TIMEOUT_MS, ask, chat_prompts, open_panel, use_stub_provider
from .helpers import artifact_name, write
from .terminal_helpers import PANE, header

if TYPE_CHECKING:
    from playwright.sync_api import Locator

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui


def pick(panel: Locator, typed: str, expected: str) -> None:
    """Type a picker's trigger and query; choose the first item, which must be ``expected``."""
    composer = panel.locator(".jp-TeraxAi-input")
    composer.press_sequentially(typed)
    items = panel.locator(".jp-TeraxAi-picker [role='option']")
    expect(items.first).to_contain_text(expected, timeout=TIMEOUT_MS)
    composer.press("Enter")
    expect(panel.locator(".jp-TeraxAi-picker")).to_have_count(0)


def test_the_composer_picks_files_snippets_and_commands(
    root_lab: LabServer, page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    panel = open_panel(page)
    use_stub_provider(panel)
    composer = panel.locator(".jp-TeraxAi-input")
    composer.click()

    pick(panel, "Look at @READ", "README.md")
    chip = panel.locator(".jp-TeraxAi-chips li")
    expect(chip).to_have_count(1)
    expect(chip).to_have_attribute("data-kind", "file")
    expect(chip).to_contain_text("README.md")
    expect(composer).to_have_value("Look at @README.md ")
    # Shift+Enter breaks the line; Enter would send.
    composer.press("Shift+Enter")
    pick(panel, "#rev", "review")
    expect(composer).to_have_value(
        "Look at @README.md \nReview the attached code for bugs, unclear names and missing "
        "tests; list concrete findings with file:line."
    )
    page.screenshot(path=artifact_name(request, "-composer"))
    composer.press("Enter")
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_contain_text("echo:", timeout=TIMEOUT_MS)
    asked = chat_prompts(model_stub)[-1]
    assert asked.startswith("Look at @README.md \nReview the attached code")
    assert "Attached files (read them as needed):\n- README.md" in asked

    # Up recalls the prompt as typed (without its attachments).
    expect(composer).to_have_value("")
    composer.press("ArrowUp")
    expect(composer).to_have_value(asked.split("\n\n", 1)[0])
    composer.fill("")

    # /plan from the picker turns plan mode on, and off again.
    plan = panel.get_by_role("checkbox", name="Plan")
    expect(plan).not_to_be_checked()
    pick(panel, "/pl", "/plan")
    expect(composer).to_have_value("/plan")
    composer.press("Enter")
    expect(plan).to_be_checked(timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxAi-planBadge")).to_have_text("Plan mode")
    composer.fill("/plan")
    composer.press("Enter")
    expect(plan).not_to_be_checked(timeout=TIMEOUT_MS)
    # Commands are not prompts: the model was asked once.
    assert len(chat_prompts(model_stub)) == 1


def test_an_answer_is_inserted_run_and_stopped(
    root_lab: LabServer, page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    marker = f"from-ai-{uuid.uuid4().hex[:6]}"
    path = f"insert-{uuid.uuid4().hex[:6]}.py"
    write(root_lab.root / path, "x = 1\n")
    page.evaluate(
        "path => window.jupyterapp.commands.execute('docmanager:open', { path }).then(() => true)",
        path,
    )
    editor = page.locator(".jp-FileEditor .cm-content")
    expect(editor).to_contain_text("x = 1", timeout=TIMEOUT_MS)

    panel = open_panel(page)
    use_stub_provider(panel)
    model_stub.script(
        [reasoning("The user wants a command.", f"Run this:\n\n```bash\necho {marker}\n```\n")]
    )
    ask(panel, "Give me a command")
    answer = panel.locator(".jp-TeraxAi-answer").last
    expect(answer.locator(".jp-TeraxAi-codeTools pre")).to_contain_text(
        f"echo {marker}", timeout=TIMEOUT_MS
    )
    # Reasoning is there, folded.
    thought = answer.locator(".jp-TeraxAi-reasoning")
    expect(thought).not_to_have_attribute("open", "")
    expect(thought.locator("summary")).to_have_text("Reasoning")
    thought.locator("summary").click()
    expect(thought).to_contain_text("The user wants a command.")

    answer.get_by_role("button", name="Insert into the current editor").click()
    expect(editor).to_contain_text(f"echo {marker}", timeout=TIMEOUT_MS)
    expect(editor).to_contain_text("x = 1")

    answer.get_by_role("button", name="Run in a Terax terminal").click()
    block = header(page.locator(PANE).last, f"echo {marker}")
    expect(block).to_have_attribute("data-exit-code", "0", timeout=TIMEOUT_MS)
    page.screenshot(path=artifact_name(request, "-ran"))

    # Stop ends a long answer while it streams.
    long = " ".join(f"word{n}" for n in range(400))
    model_stub.script([slow(text(long, chunk=8), 0.05)])
    ask(panel, "Tell me a long story")
    stop = panel.locator(".jp-TeraxAi-stop")
    last = panel.locator(".jp-TeraxAi-answer").last
    expect(last).to_contain_text("word1", timeout=TIMEOUT_MS)
    stop.click()
    expect(panel.locator(".jp-TeraxAi-send")).to_be_visible(timeout=TIMEOUT_MS)
    expect(stop).to_have_count(0)
    shown = last.inner_text()
    assert "word399" not in shown
    # Nothing more arrives after the stop.
    page.wait_for_timeout(600)
    assert last.inner_text() == shown
