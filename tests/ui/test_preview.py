"""The web preview: a dev server started in a terminal is offered, previewed, followed, restored."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import time
from typing import TYPE_CHECKING, Any

import psutil
import pytest
from playwright.sync_api import expect

from .helpers import (
    DARK,
    LIGHT,
    artifact_name,
    change_theme,
    server_api,
    wait_for_reloaded,
    write,
)
from .terminal_helpers import START_TIMEOUT_MS, open_terminal, run

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import FrameLocator, Locator, Page

    from .conftest import LabServer

pytestmark = pytest.mark.ui

TAB = "#jp-main-dock-panel .jp-TeraxPreview-tab"
FRAME = f"{TAB} .jp-TeraxPreview-frame"
ADDRESS = f"{TAB} .jp-TeraxPreview-addressInput"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_listening(host: str, port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on {host}:{port}"
            time.sleep(0.1)


def outward_address() -> str | None:
    """An address of this machine other than the loopback (for an "external" page)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET: nothing is sent
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """What the dev server serves: two linked pages."""
    folder = tmp_path / "site"
    write(
        folder / "index.html",
        "<!doctype html><title>Home</title><body style='font:16px sans-serif;margin:24px'>"
        "<h1 id='greeting'>Hello from the dev server</h1>"
        "<p><a id='next' href='second.html?from=home'>The second page</a></p></body>",
    )
    write(
        folder / "second.html",
        "<!doctype html><title>Second</title><body style='font:16px sans-serif;margin:24px'>"
        "<h1 id='greeting'>The second page</h1></body>",
    )
    return folder


@pytest.fixture
def ports() -> Iterator[list[int]]:
    """Ports the test's servers listen on: whatever still listens there is ended."""
    used: list[int] = []
    yield used
    for connection in psutil.net_connections(kind="tcp"):
        if connection.status == psutil.CONN_LISTEN and connection.laddr.port in used:
            with contextlib.suppress(psutil.Error, TypeError):
                psutil.Process(connection.pid).kill()


def saved_in_layout(workspace: dict[str, Any], address: str) -> bool:
    """Lab saved a preview of ``address`` and its place in the main area."""
    data = workspace["data"]
    names = [key for key, value in data.items() if address in json.dumps(value)]
    main = json.dumps(data.get("layout-restorer:data", {}).get("main", {}))
    return any(name.startswith("terax-preview:") and name in main for name in names)


def frame(page: Page) -> FrameLocator:
    return page.frame_locator(FRAME)


def toolbar_button(page: Page, tooltip: str) -> Locator:
    return page.locator(f"{TAB} .jp-Toolbar [title='{tooltip}']")


def show_tab(page: Page, label: str) -> None:
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=label).first.click()


def link_point(page: Page, pane: Locator) -> tuple[float, float]:
    """Where the last line that starts with a link is on the terminal's screen: the
    web-links addon shows a pointer over a link (the renderer may be a canvas)."""
    box = pane.locator(".xterm-screen").bounding_box()
    assert box
    x = box["x"] + 30
    found = None
    y = box["y"] + 3
    while y < box["y"] + box["height"]:
        page.mouse.move(x, y)
        page.mouse.move(x + 1, y)
        page.wait_for_timeout(40)  # the addon finds links after the move
        if pane.locator(".xterm-cursor-pointer").count():
            found = (x + 1, y)
        y += 6
    assert found, "no link on the terminal's screen"
    return found


def offers(page: Page, port: int) -> Locator:
    return page.locator(".Toastify__toast", has_text=f"localhost:{port}")


def test_a_dev_server_from_a_terminal_is_offered_and_previewed(
    page: Page,
    lab: LabServer,
    site: Path,
    ports: list[int],
    request: pytest.FixtureRequest,
) -> None:
    port = free_port()
    ports.append(port)
    pane = open_terminal(page)
    # Its tab's name ("Terminal 3" when other tests opened terminals on this server first).
    terminal = page.locator(
        ".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel"
    ).inner_text()
    run(page, pane, f"python3 -m http.server {port} --bind 127.0.0.1 --directory {site}")

    # The terminal reports the server; Lab offers to open it, once.
    offer = offers(page, port)
    expect(offer).to_have_count(1, timeout=START_TIMEOUT_MS)
    expect(offer).to_contain_text(f"A dev server in {terminal} serves")
    expect(offer.get_by_role("button", name="Open Preview")).to_be_in_viewport(ratio=1)
    page.wait_for_timeout(300)  # the toast's slide-in ends
    page.screenshot(path=artifact_name(request, "-offer"))
    offer.get_by_role("button", name="Open Preview").click()

    tab = page.locator(TAB)
    expect(tab).to_be_visible()
    expect(frame(page).locator("#greeting")).to_have_text("Hello from the dev server")
    expect(page.locator(ADDRESS)).to_have_value(f"http://localhost:{port}/")
    # Framed from its preview address (a capability path), in a sandbox without an origin.
    src = page.locator(FRAME).get_attribute("src") or ""
    assert re.search(rf"{re.escape(lab.base_url)}terax/proxy/{port}~[\w-]+/$", src), src
    sandbox = (page.locator(FRAME).get_attribute("sandbox") or "").split()
    assert "allow-top-navigation" not in sandbox
    assert "allow-same-origin" not in sandbox
    tab_title = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=f"localhost:{port}")
    expect(tab_title).to_have_count(1)
    assert offers(page, port).count() <= 1

    # A link followed inside the page joins the preview's own history.
    frame(page).locator("#next").click()
    expect(frame(page).locator("#greeting")).to_have_text("The second page")
    expect(page.locator(ADDRESS)).to_have_value(f"http://localhost:{port}/second.html?from=home")
    back, forward = toolbar_button(page, "Back"), toolbar_button(page, "Forward")
    expect(forward).to_have_attribute("aria-disabled", "true")
    back.click()
    expect(frame(page).locator("#greeting")).to_have_text("Hello from the dev server")
    expect(page.locator(ADDRESS)).to_have_value(f"http://localhost:{port}/")
    expect(back).to_have_attribute("aria-disabled", "true")
    forward.click()
    expect(frame(page).locator("#greeting")).to_have_text("The second page")
    back.click()
    expect(frame(page).locator("#greeting")).to_have_text("Hello from the dev server")

    # Reload shows what the dev server serves now.
    (site / "index.html").write_text(
        (site / "index.html").read_text().replace("Hello from", "Reloaded from")
    )
    toolbar_button(page, "Reload").click()
    expect(frame(page).locator("#greeting")).to_have_text("Reloaded from the dev server")

    page.screenshot(path=artifact_name(request, "-light"))
    change_theme(page, DARK)
    try:
        page.screenshot(path=artifact_name(request, "-dark"))
    finally:
        change_theme(page, LIGHT)

    # The server is listed with its process, and the list says where the proxy serves it.
    servers = server_api(lab, "terax/api/preview/servers")["servers"]
    assert [s["port"] for s in servers] == [port]
    assert servers[0]["proxy_path"] == f"{lab.base_url}terax/proxy/{port}/"

    # Stopped, the preview says so in Lab's own colours, and Reload brings it back.
    show_tab(page, terminal)
    pane.click()
    page.keyboard.press("Control+c")
    deadline = time.monotonic() + 15
    while server_api(lab, "terax/api/preview/servers")["servers"]:
        assert time.monotonic() < deadline, "the stopped server is still listed"
        time.sleep(0.3)
    show_tab(page, f"localhost:{port}")
    toolbar_button(page, "Reload").click()
    card = page.locator(f"{TAB} .jp-TeraxPreview-errorCard")
    expect(card).to_be_visible()
    expect(card).to_contain_text(f"Nothing is running on port {port}")
    page.screenshot(path=artifact_name(request, "-stopped"))
    change_theme(page, DARK)
    try:
        page.screenshot(path=artifact_name(request, "-stopped-dark"))
    finally:
        change_theme(page, LIGHT)
    show_tab(page, terminal)
    run(page, pane, f"python3 -m http.server {port} --bind 127.0.0.1 --directory {site}")
    time.sleep(1)
    show_tab(page, f"localhost:{port}")
    card.get_by_role("button", name="Reload").click()
    expect(frame(page).locator("#greeting")).to_have_text("Reloaded from the dev server")
    expect(card).to_be_hidden()
    # The same server again in the same terminal: no second offer.
    time.sleep(2)
    expect(offers(page, port)).to_have_count(0)


def test_command_link_click_and_restore(
    page: Page,
    lab: LabServer,
    site: Path,
    ports: list[int],
    request: pytest.FixtureRequest,
) -> None:
    port = free_port()
    ports.append(port)
    pane = open_terminal(page)
    run(page, pane, f"python3 -m http.server {port} --bind 127.0.0.1 --directory {site} &")
    expect(offers(page, port)).to_have_count(1, timeout=START_TIMEOUT_MS)

    # Ctrl+click on a localhost link in the terminal opens it in a preview.
    link = f"http://localhost:{port}/second.html"
    run(page, pane, f"echo {link}")
    expect(pane.locator(".xterm-screen")).to_be_visible()
    point = link_point(page, pane)
    page.keyboard.down("Control")
    page.mouse.click(*point)
    page.keyboard.up("Control")
    expect(page.locator(TAB)).to_be_visible()
    expect(frame(page).locator("#greeting")).to_have_text("The second page")
    expect(page.locator(ADDRESS)).to_have_value(link)
    assert len(page.context.pages) == 1  # no browser tab was opened

    # The command opens a port, and an address typed in the bar goes there.
    page.evaluate(
        "async port => { await window.jupyterapp.commands.execute('terax:open-preview', {port}); }",
        port,
    )
    expect(page.locator(TAB)).to_have_count(1)  # the same dev server: the same tab
    expect(page.locator(ADDRESS)).to_have_value(f"http://localhost:{port}/")
    address = page.locator(ADDRESS)
    address.fill(f"localhost:{port}/second.html#top")
    address.press("Enter")
    expect(frame(page).locator("#greeting")).to_have_text("The second page")
    address.fill("javascript:alert(1)")
    address.press("Enter")
    expect(address).to_have_class(re.compile(r"\bjp-mod-invalid\b"))
    address.press("Escape")
    expect(address).to_have_value(f"http://localhost:{port}/second.html#top")

    # After a reload of Lab the preview tab is back, on the same page.
    deadline = time.monotonic() + 10
    while not saved_in_layout(server_api(lab, "lab/api/workspaces/default"), "second.html#top"):
        assert time.monotonic() < deadline, "the preview never reached the workspace"
        time.sleep(0.2)
    page.goto(f"{lab.url}lab?token={lab.token}")
    wait_for_reloaded(page, "terax:open-preview")
    expect(page.locator(TAB)).to_have_count(1, timeout=START_TIMEOUT_MS)
    expect(page.locator(ADDRESS)).to_have_value(f"http://localhost:{port}/second.html#top")
    expect(frame(page).locator("#greeting")).to_have_text("The second page")
    page.screenshot(path=artifact_name(request, "-restored"))


def test_an_external_page_runs_in_a_sandbox(
    page: Page, site: Path, ports: list[int], request: pytest.FixtureRequest
) -> None:
    address = outward_address()
    if address is None:
        pytest.skip("this machine has no address besides the loopback")
    port = free_port()
    ports.append(port)
    pane = open_terminal(page)
    run(page, pane, f"python3 -m http.server {port} --bind {address} --directory {site}")
    wait_listening(address, port)
    url = f"http://{address}:{port}/"
    page.evaluate(
        "async url => { await window.jupyterapp.commands.execute('terax:open-preview', {url}); }",
        url,
    )
    expect(page.locator(ADDRESS)).to_have_value(url)
    sandbox = page.locator(FRAME).get_attribute("sandbox") or ""
    assert set(sandbox.split()) == {"allow-scripts", "allow-forms", "allow-popups"}
    assert page.locator(FRAME).get_attribute("src") == url  # not through the proxy
    expect(frame(page).locator("#greeting")).to_have_text("Hello from the dev server")
    notice = page.locator(f"{TAB} .jp-TeraxPreview-notice")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("sandbox")
    page.screenshot(path=artifact_name(request, "-external"))
    change_theme(page, DARK)
    try:
        page.screenshot(path=artifact_name(request, "-external-dark"))
    finally:
        change_theme(page, LIGHT)
    notice.locator(".jp-TeraxPreview-dismiss").click()
    expect(notice).to_be_hidden()
