"""The preview through a real JupyterHub, in Chromium (issue 17, item 1).

hub-bob logs in at the hub's login page, opens Lab on his server through the proxy (the hub's
OAuth redirects, its cookie, its ``frame-ancestors 'none'`` on Lab's page), starts a dev server
in a Terax terminal on his server (so the port is his account's), and opens it in the preview
tab: the page shows inside the tab's frame. Before issue 17 the frame stayed blank on every hub.
"""

from __future__ import annotations

import socket
import time
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from tests.browser_fixtures import (  # noqa: F401 (fixtures)
    chromium,
    jp_asyncio_loop,
    jp_server_cleanup,
)
from tests.hub.client import read_until
from tests.hub.hub import PASSWORD, free_port

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Browser

    from tests.hub.client import UserClient
    from tests.hub.hub import Hub

pytestmark = pytest.mark.ui

TAB = "#jp-main-dock-panel .jp-TeraxPreview-tab"
FRAME = f"{TAB} .jp-TeraxPreview-frame"
GREETING = "The app of hub-bob, through the hub"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """This module's Chromium, stopped when it ends (the tests after it run servers in
    this process, which a live sync Playwright would break)."""
    with chromium() as started:
        yield started


@pytest.fixture
def bob_terminal_server(hub: Hub, bob: UserClient) -> Iterator[int]:
    """A dev server bob starts in a Terax terminal on his own server: its port."""
    if not hub.real_users:
        pytest.skip("needs real Unix users (run as root)")
    port = free_port()
    created = bob.post("terax/api/pty/sessions", {"name": "dev server"})
    assert created.status == 201, created
    session = created.json()["id"]
    try:
        with bob.websocket(f"terax/api/pty/{session}/stream") as stream:
            read_until(stream, b"$")
            page = f"<!doctype html><h1 id=greeting>{GREETING}</h1>"
            command = (
                f"mkdir -p ~/preview-site && cd ~/preview-site && printf '{page}' > index.html"
                f" && python3 -m http.server {port} --bind 127.0.0.1\r"
            )
            stream.send(command.encode())
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)
            else:
                pytest.fail(f"bob's dev server did not listen on {port}")
        yield port
    finally:
        bob.request("DELETE", f"terax/api/pty/sessions/{session}")


def test_bob_previews_his_dev_server_in_lab_through_the_hub(
    hub: Hub, bob_terminal_server: int, browser: Browser, tmp_path: Path
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    try:
        # ?reset: a fresh workspace, not the tabs an earlier run left in bob's home.
        page.goto(f"{hub.url}/hub/login?next=%2Fuser%2Fhub-bob%2Flab%3Freset")
        page.fill("input[name=username]", "hub-bob")
        page.fill("input[name=password]", PASSWORD)
        with page.expect_navigation(url="**/user/hub-bob/lab**", timeout=60_000):
            page.click("[type=submit]")
        lab = page.request.get(f"{hub.url}/user/hub-bob/lab")
        # Lab's own page keeps the hub's policy: nothing may frame Lab.
        assert "frame-ancestors 'none'" in lab.headers["content-security-policy"]
        page.wait_for_function(
            "() => window.jupyterapp && "
            "window.jupyterapp.commands.hasCommand('terax:open-preview')",
            timeout=90_000,
        )
        page.evaluate("() => window.jupyterapp.restored")
        page.evaluate(
            "async url => { await window.jupyterapp.commands.execute("
            "'terax:open-preview', {url}); }",
            f"http://localhost:{bob_terminal_server}/",
        )
        expect(page.locator(TAB)).to_be_visible()
        shown = page.frame_locator(FRAME).locator("#greeting")
        expect(shown).to_have_text(GREETING, timeout=30_000)
        # The framed page answers with the preview's own policy, not the hub's 'none'.
        source = page.locator(FRAME).get_attribute("src") or ""
        framed = page.request.get(source if "://" in source else f"{hub.url}{source}")
        policy = framed.headers["content-security-policy"]
        assert "frame-ancestors 'none'" not in policy, policy
        assert "sandbox" in policy, policy
        page.screenshot(path=str(tmp_path / "hub-preview.png"))
    finally:
        context.close()
    assert not [m for m in messages if "frame-ancestors" in m], messages
