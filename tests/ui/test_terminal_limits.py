"""A terminal view the server turns away (its connection cap): it says why, does not loop
reconnecting, and attaches once asked again after a view has gone."""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect
from websockets.sync.client import connect

from .helpers import artifact_name, server_api
from .terminal_helpers import EDITOR, PANE, START_TIMEOUT_MS

if TYPE_CHECKING:
    from playwright.sync_api import Page, WebSocket
    from websockets.sync.client import ClientConnection

    from .conftest import LabServer

pytestmark = pytest.mark.ui

CAP = 16  # PtyManager.max_clients_per_session's default
STATUS = ".jp-TeraxTerminal-status"


def _views(
    stack: contextlib.ExitStack, lab: LabServer, session: str, count: int
) -> list[ClientConnection]:
    """``count`` views of the session that hold their place (they never read)."""
    address = urlsplit(lab.url)
    url = f"ws://{address.netloc}{address.path}terax/api/pty/{session}/stream"
    headers = {"Authorization": f"token {lab.token}"}
    return [stack.enter_context(connect(url, additional_headers=headers)) for _ in range(count)]


def test_a_view_past_the_cap_says_why_and_waits_to_be_asked(
    page: Page, root_lab: LabServer, request: pytest.FixtureRequest
) -> None:
    lab = root_lab
    session = server_api(lab, "terax/api/pty/sessions", {"shell": "bash"})["id"]
    stack = contextlib.ExitStack()
    holders = _views(stack, lab, session, CAP)
    attempts: list[WebSocket] = []
    page.on(
        "websocket",
        lambda socket: attempts.append(socket) if f"/pty/{session}/" in socket.url else None,
    )
    try:
        page.evaluate(
            "async (id) => { await window.jupyterapp.commands.execute("
            "'terax:attach-terminal', { sessionId: id }); }",
            session,
        )
        pane = page.locator(f"{PANE}[data-session-id='{session}']")
        status = pane.locator(STATUS)
        expect(status).to_have_attribute("data-state", "refused", timeout=START_TIMEOUT_MS)
        expect(status).to_contain_text(f"already shown in {CAP} views")
        expect(status).to_contain_text("PtyManager.max_clients_per_session")
        expect(status).to_contain_text("Click here to try again.")
        page.screenshot(path=artifact_name(request, "-refused"))
        # Refused once, it stays put: no reconnecting in a loop (it used to retry forever).
        tried = len(attempts)
        time.sleep(5)
        assert len(attempts) == tried, f"{len(attempts) - tried} more attempts while refused"
        assert server_api(lab, f"terax/api/pty/sessions/{session}")["clients"] == CAP
        # A view leaves; asked again, this one attaches and works.
        holders.pop().close()
        deadline = time.monotonic() + 10
        while server_api(lab, f"terax/api/pty/sessions/{session}")["clients"] != CAP - 1:
            assert time.monotonic() < deadline, "the closed view did not leave"
            time.sleep(0.1)
        status.click()
        expect(pane.locator(EDITOR)).to_be_visible(timeout=START_TIMEOUT_MS)
        expect(status).not_to_have_attribute("data-state", "refused")
    finally:
        stack.close()
