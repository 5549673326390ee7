"""Replay in a real headless Chromium against a local site: a click goes to the node replay
resolved or nowhere (an overlay over the target refuses ``target_covered``), refusals name the
frames replay does not look into, a settle ends when the page is idle, and raw page operations
make a recording non-cacheable whoever called them."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import BrowserError, ReplayRefused
from terax_jupyter.services.browser.policy import Condition, ReplayPolicy
from terax_jupyter.services.browser.replay import Replayer
from terax_jupyter.services.browser.tab import RecordingTab

from . import replay_fixtures
from .driver_fixtures import (  # noqa: F401 (fixtures)
    browser_fixture,
    chromium_fixture,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from terax_jupyter.services.browser.session import BrowserSession

    from .replay_fixtures import Engine

engine = replay_fixtures.engine  # the shared fixture

# The overlay is transparent and has no role or name: the accessibility tree is the same with
# and without it, only a click at the button's centre lands on it.
PROFILE = """<!doctype html>
<html><head><title>Profile</title></head>
<body>
  <h1>Your profile</h1>
  <p id="status">profile kept</p>
  <button id="save" style="position:absolute; left:40px; top:120px; width:160px; height:40px"
    onclick="document.getElementById('status').textContent = 'profile saved'">Save profile</button>
  {overlay}
</body></html>"""

OVERLAY = """<div id="trap" onclick="location.href = '/delete-profile'"
    style="position:absolute; left:0; top:0; width:100%; height:400px; opacity:0; {style}"></div>"""

# A page that lies to scripts of the main world: the button is on top, the profile is saved.
LIAR = """<script>
  const save = () => document.getElementById("save");
  Document.prototype.elementFromPoint = function () { return save(); };
  ShadowRoot.prototype.elementFromPoint = function () { return save(); };
  Object.defineProperty(HTMLElement.prototype, "innerText", {get() { return "profile saved"; }});
</script>"""

FRAMED = """<!doctype html>
<html><head><title>Framed</title></head>
<body>
  <h1>Settings</h1>
  <iframe src="{frame}" title="Embedded settings" width="400" height="200"></iframe>
</body></html>"""

INNER = """<!doctype html>
<html><head><title>Inner</title></head>
<body><button>Save profile</button></body></html>"""

# A styled checkbox: the input is invisible and its label's box is drawn over it.
STYLED = """<!doctype html>
<html><head><title>Options</title></head>
<body>
  <label style="position:relative; display:inline-block; padding-left:30px">
    <input type="checkbox" id="remember"
      style="position:absolute; left:0; top:0; width:20px; height:20px; opacity:0; margin:0">
    <span style="position:absolute; left:0; top:0; width:20px; height:20px;
      border:1px solid black"></span>
    Remember me
  </label>
</body></html>"""

# The button is gone; a request is still in flight (the server answers /slow after a while).
BUSY = """<!doctype html>
<html><head><title>Profile</title></head>
<body><h1>Your profile</h1><p id="status">loading</p>
<script>fetch("/slow").then(() => { document.getElementById("status").textContent = "x"; });
</script></body></html>"""

# The button is gone, and the page never stops changing.
TICKING = """<!doctype html>
<html><head><title>Profile</title></head>
<body><h1>Your profile</h1><p id="clock">0</p>
<script>let n = 0; setInterval(() => {
  document.getElementById("clock").textContent = String(++n); }, 40);</script>
</body></html>"""


class ProfileSite:
    """A local site: ``/profile`` (with an overlay over its button when ``overlay`` is set),
    ``/framed`` (an iframe), ``/delete-profile`` (what the overlay's click opens)."""

    def __init__(self) -> None:
        site = self
        self.paths: list[str] = []
        self.overlay: str | None = None  # None: no overlay; else the overlay's extra style
        self.script = ""  # more of /profile's body (a script)
        self.mode = "profile"  # what /profile serves: profile, framed, busy, ticking
        self.release = threading.Event()  # ends the wait of /slow

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.paths.append(self.path)
                path = self.path.split("?", 1)[0]
                if path == "/profile" and site.mode != "profile":
                    body = {
                        "framed": FRAMED.format(frame=site.url("/inner")),
                        "busy": BUSY,
                        "ticking": TICKING,
                    }[site.mode]
                elif path == "/profile":
                    extra = "" if site.overlay is None else OVERLAY.format(style=site.overlay)
                    body = PROFILE.format(overlay=extra + site.script)
                elif path == "/styled":
                    body = STYLED
                elif path == "/slow":
                    site.release.wait(30)
                    body = "late"
                elif path == "/framed":
                    body = FRAMED.format(frame=site.url("/inner"))
                elif path == "/inner":
                    body = INNER
                else:
                    body = "<!doctype html><title>Deleted</title><p>profile deleted</p>"
                data = body.encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def url(self, path: str) -> str:
        return self.origin + path


@pytest.fixture
def site() -> Iterator[ProfileSite]:
    served = ProfileSite()
    served.thread.start()
    yield served
    served.release.set()
    served.server.shutdown()
    served.server.server_close()


def profile_policy(site: ProfileSite) -> ReplayPolicy:
    return ReplayPolicy(
        scope_id=site.origin,
        workflow_version=1,
        side_effect="mutating",
        ttl_seconds=3600,
        postconditions=(Condition("text_contains", "profile saved"),),
    )


async def record_save(browser: BrowserSession, site: ProfileSite, engine: Engine) -> Any:
    """Record 'open /profile, click Save profile' with no overlay, and cache it."""
    tab = RecordingTab(await browser.new_page())
    try:
        await tab.open(site.url("/profile"))
        snapshot = await tab.click(role="button", name="Save profile")
        assert snapshot.find("button", "Save profile")
        assert tab.recording.cacheable, tab.recording.non_cacheable
        return engine.store.put_entry("save-profile", tab.recording, profile_policy(site))
    finally:
        await tab.page.close()


async def replay(browser: BrowserSession, engine: Engine, entry: Any, site: ProfileSite) -> Any:
    page = await browser.new_page()
    try:
        await page.navigate(site.url("/profile"))
        return await engine.replayer.replay(
            entry, page, {}, task="t", policy=profile_policy(site)
        ), await page.text_contains("profile kept")
    finally:
        await page.close()


async def test_a_replay_clicks_the_recorded_button_when_nothing_covers_it(
    browser: BrowserSession, site: ProfileSite, engine: Engine
) -> None:
    entry = await record_save(browser, site, engine)
    result, kept = await replay(browser, engine, entry, site)
    assert result.steps_replayed == 2
    assert not kept  # the real button was clicked: the status says "profile saved"
    assert "/delete-profile" not in site.paths


async def test_an_overlay_over_the_target_refuses_and_clicks_nothing(
    browser: BrowserSession, site: ProfileSite, engine: Engine
) -> None:
    entry = await record_save(browser, site, engine)
    site.overlay = ""  # a transparent element over the button, the tree unchanged
    page = await browser.new_page()
    try:
        await page.navigate(site.url("/profile"))
        with pytest.raises(ReplayRefused) as caught:
            await engine.replayer.replay(entry, page, {}, task="t", policy=profile_policy(site))
        assert caught.value.reason == "target_covered"
        assert "div#trap" in caught.value.message
        # Nothing was clicked: not the overlay (its handler would open /delete-profile)...
        assert "/delete-profile" not in site.paths
        assert await page.url() == site.url("/profile")
        # ...and not the button either.
        assert await page.text_contains("profile kept")
    finally:
        await page.close()
    [record] = [r for r in engine.audit_records() if r["event"] == "replay_refused"]
    assert record["reason"] == "target_covered"
    assert record["step"] == 1


async def test_an_overlay_that_lets_clicks_through_does_not_refuse(
    browser: BrowserSession, site: ProfileSite, engine: Engine
) -> None:
    entry = await record_save(browser, site, engine)
    site.overlay = "pointer-events: none"  # decoration: the click reaches the button
    result, kept = await replay(browser, engine, entry, site)
    assert result.steps_replayed == 2
    assert not kept
    assert "/delete-profile" not in site.paths


async def test_the_agent_cannot_click_a_covered_element_either(
    browser: BrowserSession, site: ProfileSite
) -> None:
    site.overlay = ""
    tab = RecordingTab(await browser.new_page())
    try:
        await tab.open(site.url("/profile"))
        with pytest.raises(BrowserError) as caught:
            await tab.click(role="button", name="Save profile")
        assert caught.value.reason == "target_covered"
        assert "/delete-profile" not in site.paths
        # The failed click is not recorded.
        assert [s.action.kind for s in tab.recording.steps] == ["navigate"]
    finally:
        await tab.page.close()


async def test_a_page_that_fakes_the_dom_functions_cannot_fool_the_checks(
    browser: BrowserSession, site: ProfileSite, engine: Engine
) -> None:
    entry = await record_save(browser, site, engine)
    site.overlay, site.script = "", LIAR
    page = await browser.new_page()
    try:
        await page.navigate(site.url("/profile"))
        # To the page's own scripts the button is on top and the profile saved...
        assert await page.evaluate("document.elementFromPoint(5, 5).id") == "save"
        assert await page.evaluate("document.body.innerText") == "profile saved"
        # ...but our checks run in a world of their own, with the browser's functions.
        assert not await page.text_contains("profile saved")
        with pytest.raises(ReplayRefused) as caught:
            await engine.replayer.replay(entry, page, {}, task="t", policy=profile_policy(site))
        assert caught.value.reason == "target_covered"
        assert "/delete-profile" not in site.paths
    finally:
        await page.close()


# -- refusals name the frames; a settle ends when the page is idle ---------------------------


def patient(engine: Engine, settle_timeout: float) -> Replayer:
    return Replayer(
        verifier=engine.verifier,
        audit=engine.audit,
        sanitizer=engine.sanitizer,
        settle_timeout=settle_timeout,
        quiet_window=0.3,
    )


async def refused(
    browser: BrowserSession, replayer: Replayer, entry: Any, site: ProfileSite
) -> ReplayRefused:
    page = await browser.new_page()
    try:
        with pytest.raises(ReplayRefused) as caught:
            await replayer.replay(entry, page, {}, task="t", policy=profile_policy(site))
        return caught.value
    finally:
        await page.close()


def last_refusal(engine: Engine) -> dict[str, Any]:
    return [r for r in engine.audit_records() if r["event"] == "replay_refused"][-1]


async def test_a_target_inside_a_frame_refuses_naming_the_frame_once_the_page_is_idle(
    browser: BrowserSession, site: ProfileSite, engine: Engine
) -> None:
    entry = await record_save(browser, site, engine)
    site.mode = "framed"  # the button moved into an iframe: replay reads the main frame only
    # A settle time far longer than the test: it ends because the page is idle.
    error = await refused(browser, patient(engine, 60.0), entry, site)
    assert error.reason == "target_missing"
    assert "the page was idle" in error.message
    assert "1 frame(s) whose content replay does not see" in error.message
    assert f"'Embedded settings' ({site.origin})" in error.message
    record = last_refusal(engine)
    assert record["settle"] == "idle"
    assert site.origin in record["message"]


async def test_a_page_with_a_request_in_flight_gets_the_whole_settle_time(
    browser: BrowserSession, site: ProfileSite, engine: Engine
) -> None:
    entry = await record_save(browser, site, engine)
    site.mode = "busy"
    error = await refused(browser, patient(engine, 1.5), entry, site)
    assert error.reason == "target_missing"
    assert "looked for 1.5 s" in error.message
    assert last_refusal(engine)["settle"] == "timeout"
    assert "/slow" in site.paths  # the request was made, and was still open


async def test_a_page_that_keeps_changing_gets_the_whole_settle_time(
    browser: BrowserSession, site: ProfileSite, engine: Engine
) -> None:
    entry = await record_save(browser, site, engine)
    site.mode = "ticking"
    error = await refused(browser, patient(engine, 1.5), entry, site)
    assert error.reason == "target_missing"
    assert last_refusal(engine)["settle"] == "timeout"


async def test_a_raw_operation_on_the_page_makes_the_recording_non_cacheable(
    browser: BrowserSession, site: ProfileSite, engine: Engine
) -> None:
    """Whoever calls it: here the page's evaluate, not the tab's (which records it itself)."""
    tab = RecordingTab(await browser.new_page())
    try:
        await tab.open(site.url("/profile"))
        assert await tab.page.evaluate("document.title") == "Profile"
        await tab.click(role="button", name="Save profile")
        recording = tab.recording
        assert not recording.cacheable
        assert any("raw operation" in why for why in recording.non_cacheable)
        with pytest.raises(ReplayRefused) as caught:
            engine.store.put_entry("raw", recording, profile_policy(site))
        assert caught.value.reason == "non_cacheable"
        # A new recording starts clean.
        tab.restart_recording()
        await tab.open(site.url("/profile"))
        assert tab.recording.cacheable
    finally:
        await tab.page.close()


async def test_a_control_under_its_own_label_is_clicked_through_the_label(
    browser: BrowserSession, site: ProfileSite
) -> None:
    """A styled checkbox (its label's decoration over the invisible input) is no overlay."""
    tab = RecordingTab(await browser.new_page())
    try:
        await tab.open(site.url("/styled"))
        snapshot = await tab.click(role="checkbox", name="Remember me")
        [box] = snapshot.find("checkbox", "Remember me")
        assert ("checked", "true") in box.properties, snapshot.render()
        assert [s.action.kind for s in tab.recording.steps] == ["navigate", "click"]
    finally:
        await tab.page.close()
