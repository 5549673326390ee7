"""The Terax block terminal: blocks, full-screen programs, restore after reload, split panes."""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from .helpers import artifact_name, change_theme, server_api, wait_for_reloaded
from .terminal_helpers import EDITOR, INPUT, PANE, START_TIMEOUT_MS, header, open_terminal, run

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from .conftest import LabServer

pytestmark = pytest.mark.ui

ACTIVE_PANE = re.compile(r"(^|\s)jp-mod-activePane(\s|$)")


def block_output(lab: LabServer, session: str, command: str) -> str:
    """The plain output of the last block of ``command``, as the server recorded it."""
    blocks = server_api(lab, f"terax/api/pty/sessions/{session}/blocks")["blocks"]
    block = [b for b in blocks if b["command"] == command][-1]
    return str(server_api(lab, f"terax/api/pty/sessions/{session}/blocks/{block['id']}")["text"])


def find_in_terminal(page: Page, pane: Locator, text: str) -> str:
    """Search the terminal with its find bar (Ctrl+F); the "index/total" it shows."""
    pane.locator(EDITOR).click()
    page.keyboard.press("Control+f")
    find = pane.locator(".jp-TeraxFind-input")
    expect(find).to_be_focused()
    find.fill(text)
    count = pane.locator(".jp-TeraxFind-count")
    expect(count).not_to_have_text("")
    value = count.inner_text()
    page.keyboard.press("Escape")
    expect(find).to_be_hidden()
    return value


def test_commands_become_blocks_with_exit_codes(
    page: Page, lab: LabServer, request: pytest.FixtureRequest
) -> None:
    pane = open_terminal(page)
    session = pane.get_attribute("data-session-id")
    assert session

    run(page, pane, "echo hi")
    first = header(pane, "echo hi")
    expect(first).to_have_attribute("data-status", "success")
    expect(first.locator(".jp-TeraxBlock-badge")).to_have_text("0")

    run(page, pane, "false")
    second = header(pane, "false")
    expect(second).to_have_attribute("data-status", "failure")
    expect(second.locator(".jp-TeraxBlock-badge")).to_have_text("1")
    expect(pane.locator(".jp-TeraxBlock-header")).to_have_count(2)
    # One status bar per block beside its lines, green then red.
    bars = pane.locator(".jp-TeraxTerminal-gutterBar:not([hidden])")
    expect(bars).to_have_count(2)
    expect(bars.nth(0)).to_have_attribute("data-status", "success")
    expect(bars.nth(1)).to_have_attribute("data-status", "failure")

    assert block_output(lab, session, "echo hi").strip() == "hi"
    # The command line and its output: both on the terminal's screen.
    total = int(find_in_terminal(page, pane, "hi").split("/")[1])
    assert total >= 2

    # The input line is back at the prompt, focused.
    expect(pane.locator(EDITOR)).to_be_focused()
    pane.locator(".jp-TeraxBlock-badge").first.hover()
    page.screenshot(path=artifact_name(request, "-light"))
    change_theme(page, "JupyterLab Dark")
    try:
        # The terminal follows the theme on the next frame.
        expect(pane.locator(".xterm-viewport")).not_to_have_css(
            "background-color", "rgb(255, 255, 255)"
        )
        page.screenshot(path=artifact_name(request, "-dark"))
    finally:
        change_theme(page, "JupyterLab Light")


def test_full_screen_program_hides_the_input_line_until_it_quits(
    page: Page, request: pytest.FixtureRequest
) -> None:
    pane = open_terminal(page)
    run(page, pane, "less README.md")
    expect(pane).to_have_attribute("data-alt-screen", "true")
    expect(pane.locator(INPUT)).to_be_hidden()
    # Block decorations are not drawn over a full-screen program.
    expect(header(pane, "less README.md")).to_be_hidden()
    page.screenshot(path=artifact_name(request, "-less"))

    # Keys go straight to the program now.
    page.keyboard.press("q")
    expect(pane).to_have_attribute("data-alt-screen", "false")
    expect(pane.locator(EDITOR)).to_be_visible()
    expect(pane.locator(EDITOR)).to_be_focused()
    expect(header(pane, "less README.md")).to_have_attribute("data-status", "success")


def test_reload_restores_the_tab_on_its_live_session(
    page: Page, lab: LabServer, request: pytest.FixtureRequest
) -> None:
    pane = open_terminal(page)
    session = pane.get_attribute("data-session-id")
    run(page, pane, "echo restored-$((40 + 2))")
    expect(header(pane, "echo restored-$((40 + 2))")).to_have_attribute("data-status", "success")

    # Lab saves the layout a moment after it changes.
    deadline = time.monotonic() + 10
    while session not in json.dumps(server_api(lab, "lab/api/workspaces/default")):
        assert time.monotonic() < deadline, "the terminal never reached the workspace"
        time.sleep(0.2)

    page.goto(f"{lab.url}lab?token={lab.token}")
    wait_for_reloaded(page, "terax:new-terminal")
    restored = page.locator(PANE)
    expect(restored).to_have_count(1, timeout=START_TIMEOUT_MS)
    expect(restored).to_have_attribute("data-session-id", session or "")
    assert session in [s["id"] for s in server_api(lab, "terax/api/pty/sessions")["sessions"]]
    expect(restored.locator(EDITOR)).to_be_visible(timeout=START_TIMEOUT_MS)
    # The replayed scrollback rebuilds the block, and the output is on screen.
    expect(header(restored, "echo restored-$((40 + 2))")).to_have_attribute("data-exit-code", "0")
    assert find_in_terminal(page, restored, "restored-42") == "1/1"


# Asks the way no filter of known forms sees (a BEL inside a CSI, a C0 control inside an OSC:
# xterm.js executes or skips them and answers), and reads its answers as vim does.
EVASIVE_ASKER = """
import os, select, sys, termios, tty
old = termios.tcgetattr(0)
tty.setraw(0)
try:
    os.write(1, b"\\x1b[6\\x07n\\x1b]11;\\x01?\\x07")
    while select.select([0], [], [], 1.0)[0]:
        os.read(0, 1024)
finally:
    termios.tcsetattr(0, termios.TCSADRAIN, old)
print("asked")
"""


def _reload_twice_types_nothing(
    page: Page, lab: LabServer, session: str, first: str, request: pytest.FixtureRequest
) -> None:
    deadline = time.monotonic() + 10
    while session not in json.dumps(server_api(lab, "lab/api/workspaces/default")):
        assert time.monotonic() < deadline, "the terminal never reached the workspace"
        time.sleep(0.2)
    for _ in range(2):
        page.goto(f"{lab.url}lab?token={lab.token}")
        wait_for_reloaded(page, "terax:new-terminal")
        pane = page.locator(PANE)
        expect(pane).to_have_attribute("data-session-id", session, timeout=START_TIMEOUT_MS)
        expect(pane.locator(EDITOR)).to_be_visible(timeout=START_TIMEOUT_MS)
        time.sleep(1)  # answers to a replay would arrive by now
    page.screenshot(path=artifact_name(request))
    run(page, pane, "echo after-$((2 + 3))")
    expect(header(pane, "echo after-$((2 + 3))")).to_have_attribute("data-exit-code", "0")
    assert block_output(lab, session, "echo after-$((2 + 3))").strip() == "after-5"
    commands = [
        b["command"] for b in server_api(lab, f"terax/api/pty/sessions/{session}/blocks")["blocks"]
    ]
    assert commands == [first, "echo after-$((2 + 3))"]


def test_reload_after_vim_types_nothing_at_the_prompt(
    page: Page, lab: LabServer, request: pytest.FixtureRequest
) -> None:
    # vim asks the terminal for its colours and modes (OSC 10/11, DECRQM) as it starts. A
    # replay of its output asks again; what xterm answers must not reach the shell.
    pane = open_terminal(page)
    session = pane.get_attribute("data-session-id") or ""
    run(page, pane, "vim -N -i NONE")
    expect(pane).to_have_attribute("data-alt-screen", "true")
    time.sleep(1)  # vim reads its answers before it quits
    page.keyboard.type(":q")
    page.keyboard.press("Enter")
    expect(pane).to_have_attribute("data-alt-screen", "false")
    expect(header(pane, "vim -N -i NONE")).to_have_attribute("data-status", "success")
    _reload_twice_types_nothing(page, lab, session, "vim -N -i NONE", request)


def test_reload_after_a_query_no_filter_knows_types_nothing(
    page: Page, lab: LabServer, request: pytest.FixtureRequest
) -> None:
    # The replay keeps these queries (the server strips the forms it knows); the pane drops
    # what xterm answers while it parses a replay.
    (lab.root / "asker.py").write_text(EVASIVE_ASKER)
    pane = open_terminal(page)
    session = pane.get_attribute("data-session-id") or ""
    run(page, pane, "python3 asker.py")
    expect(header(pane, "python3 asker.py")).to_have_attribute("data-exit-code", "0")
    assert block_output(lab, session, "python3 asker.py").strip().endswith("asked")
    _reload_twice_types_nothing(page, lab, session, "python3 asker.py", request)


def test_a_long_command_keeps_its_header_chip_on_its_last_row(
    page: Page, request: pytest.FixtureRequest
) -> None:
    pane = open_terminal(page)
    command = "echo " + " ".join(f"word{n:03d}" for n in range(40))  # wraps over 3+ rows
    run(page, pane, command)
    block = header(pane, command)
    expect(block).to_have_attribute("data-exit-code", "0")
    # The first row is full: the chip moves to the last row of the command, beside its end.
    rows = int(block.get_attribute("data-rows") or "0")
    assert rows >= 2
    expect(block).not_to_have_attribute("data-fit", "none")
    badge = block.locator(".jp-TeraxBlock-badge")
    expect(badge).to_be_visible()
    line_box = block.bounding_box()
    badge_box = badge.bounding_box()
    assert line_box
    assert badge_box
    assert badge_box["y"] > line_box["y"] + line_box["height"] * (rows - 0.5)
    page.screenshot(path=artifact_name(request))


def test_the_tab_title_follows_the_focused_pane(page: Page, lab: LabServer) -> None:
    first = open_terminal(page)
    first.locator(EDITOR).click()
    page.keyboard.press("Control+Shift+5")
    panes = page.locator(PANE)
    expect(panes).to_have_count(2, timeout=START_TIMEOUT_MS)
    expect(panes.nth(1).locator(EDITOR)).to_be_focused(timeout=START_TIMEOUT_MS)
    tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel")
    by_id = {s["id"]: s["name"] for s in server_api(lab, "terax/api/pty/sessions")["sessions"]}
    names = [by_id[panes.nth(index).get_attribute("data-session-id") or ""] for index in (0, 1)]
    expect(tab).to_have_text(f"{names[1]} (+1)")
    for command, index in (("terax:focus-previous-pane", 0), ("terax:focus-next-pane", 1)):
        page.evaluate(f"() => window.jupyterapp.commands.execute('{command}')")
        expect(panes.nth(index)).to_have_class(ACTIVE_PANE)
        expect(tab).to_have_text(f"{names[index]} (+1)")


def test_split_pane_runs_its_own_session(page: Page, lab: LabServer) -> None:
    first = open_terminal(page)
    first.locator(EDITOR).click()
    page.keyboard.press("Control+Shift+5")

    panes = page.locator(PANE)
    expect(panes).to_have_count(2, timeout=START_TIMEOUT_MS)
    expect(page.locator("#jp-main-dock-panel .jp-TeraxTerminal")).to_have_count(1)
    second = panes.nth(1)
    expect(second.locator(EDITOR)).to_be_focused(timeout=START_TIMEOUT_MS)
    expect(second).to_have_class(ACTIVE_PANE)

    run(page, second, "echo second-$((1 + 1))")
    expect(header(second, "echo second-$((1 + 1))")).to_have_attribute("data-status", "success")
    # The prompt and command fill the half-width pane's line: the chip never covers the
    # command's text. A line that wrapped gets it on its last row, beside the text's end; a
    # full line that did not wrap leaves it out (the gutter bar keeps the status).
    block = header(second, "echo second-$((1 + 1))")
    expect(block).to_have_attribute("data-rows", re.compile(r"^\d+$"))
    if block.get_attribute("data-rows") == "0":
        expect(block).to_have_attribute("data-fit", "none")
        expect(block.locator(".jp-TeraxBlock-badge")).to_be_hidden()
    else:
        expect(block).not_to_have_attribute("data-fit", "none")
        expect(block.locator(".jp-TeraxBlock-badge")).to_be_visible()
    expect(header(first, "echo second-$((1 + 1))")).to_have_count(0)
    sessions = {first.get_attribute("data-session-id"), second.get_attribute("data-session-id")}
    assert len(sessions) == 2
    session = second.get_attribute("data-session-id") or ""
    assert block_output(lab, session, "echo second-$((1 + 1))").strip() == "second-2"
