"""Fixtures for the browser driver tests: a local site on 127.0.0.1 and a real Chromium.

Import the fixtures a test module needs (``from .driver_fixtures import page_fixture``); each is
registered under its short name (``page``, ``site``, ``chromium``, ``browser``). The
module-scoped ones are shared by the tests of one module. pytest-jupyter gives every test a new
event loop, so the shared browser is only the process (a launcher is bound to no loop); each
test connects to it afresh in its own loop, which costs a few milliseconds.
"""

from __future__ import annotations

import asyncio
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.services.browser.launcher import ChromiumLauncher
from terax_jupyter.services.browser.session import BrowserSession

if TYPE_CHECKING:
    from collections.abc import Coroutine, Iterator

    from terax_jupyter.services.browser.page import BrowserPage

EXTERNAL = "http://external.example"

LOGIN = """<!doctype html>
<html><head><title>Login</title></head>
<body>
  <h1>Sign   in</h1>
  <form onsubmit="event.preventDefault()">
    <div><label for="user">Username</label> <input id="user" name="user"></div>
    <div><label>Password <input id="password" type="password"></label></div>
    <div><label><input type="checkbox" id="remember"> Remember me</label></div>
    <button type="button" id="go">Sign in</button>
    <button type="button" disabled>Reset</button>
  </form>
  <p id="status">Not signed in</p>
  <a href="/dupes">Other    page</a>
  <script>
    document.getElementById("go").addEventListener("click", (event) => {
      const user = document.getElementById("user").value;
      document.getElementById("status").textContent = "Welcome, " + user;
      event.target.textContent = "Signed in";
    });
  </script>
</body></html>"""

DUPES = """<!doctype html>
<html><head><title>Two of a kind</title></head>
<body>
  <ul>
    <li>First <button onclick="done('first')">Delete</button></li>
    <li>Second <button onclick="done('second')">Delete</button></li>
  </ul>
  <p id="status">nothing deleted</p>
  <script>
    function done(which) {
      document.getElementById("status").textContent = "deleted " + which;
    }
  </script>
</body></html>"""

OUTSIDE = f"""<!doctype html>
<html><head><title>Outside</title></head>
<body>
  <a id="away" href="{EXTERNAL}/landing">Leave</a>
  <img src="{EXTERNAL}/pixel.png" alt="remote pixel">
  <p>local content</p>
</body></html>"""

DELAYED = """<!doctype html>
<html><head><title>Slow</title></head>
<body>
  <p id="status">loading</p>
  <script>
    setTimeout(() => {
      document.getElementById("status").textContent = "ready now";
      document.title = "Ready";
    }, 300);
  </script>
</body></html>"""

KEYS = """<!doctype html>
<html><head><title>Keys</title></head>
<body>
  <input id="field" aria-label="Field">
  <p id="last">no key</p>
  <button id="target" style="position:absolute; left:200px; top:300px; width:120px; height:40px"
    onclick="this.textContent = 'hit'">Target</button>
  <script>
    document.addEventListener("keydown", (e) => {
      document.getElementById("last").textContent = "key " + e.key;
    });
  </script>
</body></html>"""

PAGES = {
    "/login": LOGIN,
    "/dupes": DUPES,
    "/outside": OUTSIDE,
    "/delayed": DELAYED,
    "/keys": KEYS,
}


class Site:
    """A ThreadingHTTPServer on 127.0.0.1 serving ``PAGES``; ``/redirect`` sends the browser
    to the external host. ``paths`` lists what was asked for."""

    def __init__(self) -> None:
        site = self
        self.paths: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.paths.append(self.path)
                if self.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", f"{EXTERNAL}/landing")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                page = PAGES.get(self.path)
                body = (page or "not found").encode("utf-8")
                self.send_response(200 if page else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def __enter__(self) -> Site:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def run_private(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine on a loop of its own (for module-scoped set-up outside any test)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


def live_group_members(group: int) -> list[int]:
    """Processes of a process group that are still running (zombies waiting for init to reap
    them do not count)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, _parent, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == group and state not in ("Z", "X"):
            members.append(int(entry.name))
    return members


@pytest.fixture(scope="module", name="site")
def site_fixture() -> Iterator[Site]:
    with Site() as served:
        yield served


@pytest.fixture(scope="module", name="chromium")
def chromium_fixture() -> Iterator[ChromiumLauncher]:
    """One real headless Chromium for the tests of a module."""
    launcher = ChromiumLauncher()
    run_private(launcher.start())
    yield launcher
    run_private(launcher.close())


@pytest.fixture(name="browser")
def browser_fixture(
    chromium: ChromiumLauncher, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[BrowserSession]:
    """A session on the module's browser, connected in this test's loop."""
    session = BrowserSession(chromium)
    jp_asyncio_loop.run_until_complete(session.start())
    yield session
    jp_asyncio_loop.run_until_complete(session.close())


@pytest.fixture(name="page")
def page_fixture(
    browser: BrowserSession, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> BrowserPage:
    return jp_asyncio_loop.run_until_complete(browser.new_page())
