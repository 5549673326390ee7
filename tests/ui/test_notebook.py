"""The notebook views in Chromium: the agent widget streams the answer and the tool cards and
its Approve button decides while the kernel is busy; the terminal view shows and takes keys."""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from terax_jupyter.testing.model_stub import slow, text, tool_call

from .ai_helpers import TIMEOUT_MS
from .helpers import DARK, LIGHT, artifact_name, change_theme, server_api, write
from .terminal_helpers import PANE, run

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui

BLOCK_HEADER = ".jp-TeraxBlock-header"

CELL = """\
import terax_jupyter.notebook as terax
agent = terax.agent()
result = agent.ask("Make the entry point say hello")
print("DONE", result.files_changed, [(a.tool, a.status, a.by) for a in result.approvals])
"""


def command(page: Page, name: str, args: dict[str, str] | None = None, wait: bool = True) -> None:
    """Run a Lab command, and wait for it unless ``wait`` is false (running cells ends only
    when they do); its result stays in the page."""
    script = "([name, args]) => { window.jupyterapp.commands.execute(name, args); }"
    if wait:
        script = "async ([name, args]) => { await window.jupyterapp.commands.execute(name, args); }"
    page.evaluate(script, [name, args or {}])


KERNEL_READY = """() => {
    const widget = window.jupyterapp.shell.currentWidget;
    const kernel = widget && widget.sessionContext && widget.sessionContext.session
        && widget.sessionContext.session.kernel;
    return Boolean(kernel) && kernel.status === 'idle';
}"""


def open_notebook(page: Page, path: str) -> Locator:
    """Open ``path`` and wait until its kernel is idle (choosing the kernel if Lab asks)."""
    command(page, "docmanager:open", {"path": path})
    panel = page.locator(".jp-NotebookPanel").last
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)
    choose = page.locator(".jp-Dialog").get_by_role("button", name="Select", exact=True)
    deadline = time.monotonic() + 60
    while not page.evaluate(KERNEL_READY):
        if choose.count():
            choose.click()
        assert time.monotonic() < deadline, "the notebook's kernel did not start"
        page.wait_for_timeout(200)
    return panel


def notebook(source: str) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "id": "agent-cell",
                    "metadata": {},
                    "outputs": [],
                    "source": source,
                }
            ],
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_the_agent_widget_streams_and_its_approve_button_works(
    page: Page, lab: LabServer, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    target = lab.root / "src" / "app.py"
    before = target.read_text()
    edit = {"path": "src/app.py", "old_string": "def main()", "new_string": "def main_hello()"}
    model_stub.script(
        [
            slow(
                tool_call(
                    "read_file",
                    {"path": "src/app.py"},
                    text="Let me read the entry point first.",
                    chunk=4,
                ),
                0.05,
            ),
            tool_call("edit", edit, text="Renaming main."),
            text("Renamed main to main_hello."),
        ]
    )
    write(lab.root / "agent.ipynb", notebook(CELL))
    panel = open_notebook(page, "agent.ipynb")
    command(page, "notebook:run-all-cells", wait=False)

    view = panel.locator(".terax-nb-agent")
    expect(view).to_be_visible(timeout=60_000)
    # Streams: the first step's text shows while the run goes on.
    expect(view.locator(".terax-nb-items")).to_contain_text(
        "Let me read the entry point", timeout=TIMEOUT_MS
    )
    expect(view.locator(".terax-nb-call").first).to_contain_text("read_file")
    approval = view.locator(".terax-nb-approval")
    expect(approval).to_contain_text("src/app.py", timeout=TIMEOUT_MS)
    expect(approval.locator(".terax-nb-added")).to_contain_text("def main_hello()")
    approve = approval.get_by_role("button", name="Approve")
    expect(approve).to_be_enabled(timeout=TIMEOUT_MS)
    assert target.read_text() == before  # nothing before the click
    # Styled as Lab's buttons are: the primary one filled, both with room for their label.
    deny = approval.get_by_role("button", name="Deny")
    assert approve.evaluate("e => getComputedStyle(e).backgroundColor") != deny.evaluate(
        "e => getComputedStyle(e).backgroundColor"
    )
    for button in (approve, deny):
        box = button.bounding_box()
        assert box
        assert box["height"] >= 22
        assert box["width"] >= 50
    approval.scroll_into_view_if_needed()
    page.screenshot(path=artifact_name(request, "-buttons"))
    approve.click()

    expect(approval.locator(".terax-nb-approval-status")).to_contain_text(
        "approved", timeout=TIMEOUT_MS
    )
    expect(view.locator(".terax-nb-items")).to_contain_text(
        "Renamed main to main_hello.", timeout=TIMEOUT_MS
    )
    expect(view).to_have_attribute("data-status", "finished", timeout=TIMEOUT_MS)
    expect(view.locator(".terax-nb-status")).to_have_text("done")  # not the model's "stop"
    expect(view.locator(".terax-nb-footer")).to_contain_text("changed src/app.py")
    page.screenshot(path=artifact_name(request, "-light"))
    change_theme(page, DARK)
    page.screenshot(path=artifact_name(request, "-dark"))
    change_theme(page, LIGHT)
    expect(panel.locator(".jp-OutputArea-output").last).to_contain_text(
        re.compile(r"DONE \['src/app.py'\] \[\('edit', 'approved', 'person'\)\]"),
        timeout=TIMEOUT_MS,
    )
    assert "def main_hello()" in target.read_text()
    target.write_text(before)


TERMINAL_CELLS = [
    "import terax_jupyter.notebook as terax\n"
    "term = terax.terminal()\n"
    "print('SESSION', term.id)\n"
    "term.view()",
    "res = term.run('echo from-the-$((40+2))-notebook')\n"
    "print('RUN', res.exit_code, res.output.strip())",
]


def test_the_terminal_view_shows_commands_and_takes_keys(
    page: Page, lab: LabServer, request: pytest.FixtureRequest
) -> None:
    book = json.loads(notebook(""))
    book["cells"] = [
        {**book["cells"][0], "id": f"cell-{n}", "source": source}
        for n, source in enumerate(TERMINAL_CELLS)
    ]
    write(lab.root / "terminal.ipynb", json.dumps(book))
    panel = open_notebook(page, "terminal.ipynb")
    command(page, "notebook:run-all-cells", wait=False)
    view = panel.locator(".terax-nb-terminal")
    expect(view).to_have_attribute("data-connected", "true", timeout=60_000)
    expect(panel.locator(".jp-OutputArea-output").last).to_contain_text(
        "RUN 0 from-the-42-notebook", timeout=TIMEOUT_MS
    )
    rows = view.locator(".xterm-rows")
    expect(rows).to_contain_text("from-the-42-notebook", timeout=TIMEOUT_MS)
    # A few lines of output take a few rows of the page, not the terminal's whole height.
    screen = view.locator(".terax-nb-terminal-screen")
    expect(screen).not_to_have_attribute("data-rows", "24")
    drawn = view.locator(".xterm-screen").bounding_box()
    shown = screen.bounding_box()
    assert drawn
    assert shown
    assert shown["height"] < drawn["height"] / 2
    # Keys typed in the view reach the shell, as in a terminal tab.
    view.locator(".terax-nb-terminal-screen").click()
    page.keyboard.type("echo typed-$((1+1))")
    page.keyboard.press("Enter")
    expect(rows).to_contain_text("typed-2", timeout=TIMEOUT_MS)
    grown = screen.bounding_box()
    assert grown
    assert grown["height"] > shown["height"]  # it grows with the output
    page.screenshot(path=artifact_name(request, "-view"))
    # The view follows Lab's theme, as a terminal tab does.
    light_text = rows.evaluate("e => getComputedStyle(e).color")
    change_theme(page, DARK)
    expect(rows).not_to_have_css("color", light_text)
    page.screenshot(path=artifact_name(request, "-view-dark"))
    change_theme(page, LIGHT)
    expect(rows).to_have_css("color", light_text)

    # The same session opens in a Lab terminal tab, with what the view showed.
    view.get_by_role("button", name="Open in a terminal tab").click()
    typed = page.locator(f"{BLOCK_HEADER}[data-command={json.dumps('echo typed-$((1+1))')}]")
    pane = page.locator(PANE).filter(has=typed)
    expect(pane).to_have_count(1, timeout=TIMEOUT_MS)
    # The tab sized the terminal to itself; the view follows the session's size.
    session_id = re.search(r"SESSION (\w+)", panel.inner_text()).group(1)  # type: ignore[union-attr]
    tabs = page.locator("#jp-main-dock-panel .lm-TabBar-tab")
    tabs.filter(has_text="terminal.ipynb").click()
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while True:
        size = server_api(lab, f"terax/api/pty/sessions/{session_id}")
        if view.locator(".xterm-rows > div").count() == size["rows"] != 24:
            break
        assert time.monotonic() < deadline, f"the view did not follow the tab's size {size}"
        time.sleep(0.2)
    page.screenshot(path=artifact_name(request, "-view-resized"))
    tabs.filter(has_text=re.compile(r"^Terminal \d+$")).click()
    expect(pane).to_be_visible()
    run(page, pane, "echo from-the-tab")
    expect(page.locator(f"{BLOCK_HEADER}[data-command='echo from-the-tab']")).to_be_visible()
    # ...and the view, drawn again once its notebook shows, has it too.
    tabs.filter(has_text="terminal.ipynb").click()
    expect(rows).to_contain_text("from-the-tab", timeout=TIMEOUT_MS)
