"""A previewed page never acts with the user's Jupyter credentials, and a normal app still works.

In a real Lab in Chromium: a hostile page served by a local dev server tries Jupyter's and
Terax's API from inside the preview; another site sends the browser to a preview; and a
normal dev app (a module script, a form, fetches to its own API, a hot-reload socket) runs.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect
from tornado import web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.websocket import WebSocketHandler

from .helpers import artifact_name, server_api, write
from .test_preview import ADDRESS, FRAME, TAB, frame, free_port, wait_listening

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Page

    from .conftest import LabServer

pytestmark = pytest.mark.ui

# Everything a page on Jupyter's origin could do with the user's session, tried from inside.
HOSTILE = """<!doctype html><title>Hostile</title><h1 id="state">trying</h1><script>
(async () => {
  const base = location.pathname.split('/terax/proxy/')[0] + '/';
  const origin = location.protocol + '//' + location.host;
  const results = {};
  const attempt = async (name, fn) => {
    try { results[name] = String(await fn()); } catch (e) { results[name] = 'blocked:' + e.name; }
  };
  const status = async (url, init) => (await fetch(url, {credentials: 'include', ...init})).status;
  await attempt('cookie', () => document.cookie);
  await attempt('storage', () => localStorage.length);
  await attempt('parent', () => parent.document.title);
  await attempt('contents', () => status(base + 'api/contents'));
  await attempt('contents_relative', () => status('../../api/contents'));
  await attempt('terax_files', () => status(base + 'terax/api/fs/list?path='));
  await attempt('terminal', () => status(base + 'terax/api/pty/sessions', {
    method: 'POST', headers: {'Content-Type': 'application/json'}, body: '{}'}));
  await attempt('write', () => status(base + 'terax/api/fs/file', {
    method: 'PUT', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({path: 'pwned.txt', content: 'x'})}));
  await attempt('socket', () => new Promise(done => {
    const socket = new WebSocket(origin.replace(/^http/, 'ws') + base + 'terax/api/fs/watch');
    socket.onopen = () => done('open');
    socket.onerror = () => done('blocked:error');
  }));
  await attempt('top', () => { top.location.href = base + 'lab'; return 'navigated'; });
  await fetch('report', {method: 'POST', body: JSON.stringify(results)});
  document.getElementById('state').textContent = 'done';
})();
</script>"""

# A normal dev app: a module script, its own API (JSON with a custom header: a preflight
# now), a hot-reload socket, a form. All with relative URLs, as a dev server with its base
# set to the preview's path would write them.
APP = """<!doctype html><title>App</title>
<body style="font:15px sans-serif;margin:20px">
<h1 id="title">Dev app</h1>
<p id="module">module: waiting</p><p id="api">api: waiting</p><p id="hmr">hmr: waiting</p>
<form method="post" action="submit"><input name="name" value="hello">
<button id="send">Send</button></form>
<script type="module" src="main.js"></script></body>"""
MAIN_JS = """
document.getElementById('module').textContent = 'module: ran';
const answer = await fetch('api/echo', {method: 'POST', body: JSON.stringify({n: 41}),
  headers: {'Content-Type': 'application/json', 'X-Requested-With': 'dev-app'}});
const data = await answer.json();
document.getElementById('api').textContent = 'api: ' + data.n + ' ' + answer.headers.get('X-App');
const url = location.href.replace(/^http/, 'ws').replace(/[^/]*$/, '') + 'hmr';
const socket = new WebSocket(url, 'vite-hmr');
socket.onmessage = event => {
  document.getElementById('hmr').textContent = 'hmr: ' + event.data;
};
"""


class DevApp:
    """A dev server (tornado, in a thread of this process: the server's own uid)."""

    def __init__(self) -> None:
        self.reports: list[dict[str, Any]] = []
        self.requests: list[str] = []
        self.sockets: list[WebSocketHandler] = []
        self.loop = asyncio.new_event_loop()
        self.port = 0
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        assert ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        app = self

        class Seen(web.RequestHandler):
            def prepare(self) -> None:
                app.requests.append(f"{self.request.method} {self.request.uri}")

            def check_xsrf_cookie(self) -> None:
                pass

        class Hostile(Seen):
            def get(self) -> None:
                self.write(HOSTILE)

        class Report(Seen):
            def post(self) -> None:
                app.reports.append(json.loads(self.request.body))

        class Page(Seen):
            def get(self) -> None:
                self.write(APP)

        class Main(Seen):
            def get(self) -> None:
                self.set_header("Content-Type", "text/javascript")
                self.write(MAIN_JS)

        class Echo(Seen):
            def post(self) -> None:
                body = json.loads(self.request.body)
                self.set_header("X-App", "yes")
                self.write({"n": body["n"] + 1})

        class Submit(Seen):
            def post(self) -> None:
                name = self.get_body_argument("name")
                self.write(f"<!doctype html><h1 id='title'>Got: {name}</h1>")

        class Hmr(WebSocketHandler):
            def select_subprotocol(self, subprotocols: list[str]) -> str | None:
                return "vite-hmr" if "vite-hmr" in subprotocols else None

            def open(self) -> None:
                app.sockets.append(self)
                self.write_message("connected")

        class Evil(web.RequestHandler):
            def get(self) -> None:
                self.write(
                    "<!doctype html><script>location.href = "
                    + json.dumps(self.get_argument("to"))
                    + ";</script>"
                )

        server = HTTPServer(
            web.Application(
                [
                    (r"/hostile.html", Hostile),
                    (r"/report", Report),
                    (r"/app/", Page),
                    (r"/app/main.js", Main),
                    (r"/app/api/echo", Echo),
                    (r"/app/submit", Submit),
                    (r"/app/hmr", Hmr),
                    (r"/evil", Evil),
                ]
            )
        )
        sockets = bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        server.add_sockets(sockets)
        ready.set()
        self.loop.run_forever()
        server.stop()

    def push(self, message: str) -> None:
        for socket in list(self.sockets):
            self.loop.call_soon_threadsafe(socket.write_message, message)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def dev_app() -> Iterator[DevApp]:
    app = DevApp()
    yield app
    app.stop()


def open_preview(page: Page, port: int, path: str = "/") -> None:
    page.evaluate(
        "async ([port, path]) => { await window.jupyterapp.commands.execute("
        "'terax:open-preview', {url: `http://localhost:${port}${path}`}); }",
        [port, path],
    )
    expect(page.locator(TAB)).to_be_visible()


def sessions(lab: LabServer) -> list[str]:
    return [s["id"] for s in server_api(lab, "terax/api/pty/sessions")["sessions"]]


def test_a_hostile_page_in_the_preview_cannot_use_jupyter(
    page: Page, lab: LabServer, dev_app: DevApp, request: pytest.FixtureRequest
) -> None:
    before = sessions(lab)
    open_preview(page, dev_app.port, "/hostile.html")
    expect(frame(page).locator("#state")).to_have_text("done", timeout=20_000)
    assert len(dev_app.reports) == 1, dev_app.requests
    results = dev_app.reports[0]
    # Each attempt is blocked by the browser (an opaque origin: no cookie is sent, and no
    # answer of Jupyter's can be read), or refused by the server.
    for name in ("cookie", "storage", "parent", "socket"):
        assert results[name].startswith("blocked:"), (name, results)
    for name in ("contents", "contents_relative", "terax_files", "terminal", "write"):
        assert results[name].startswith("blocked:") or results[name] in ("403", "404"), (
            name,
            results,
        )
    assert results["top"].startswith("blocked:") or page.url.startswith(lab.url + "lab")
    assert sessions(lab) == before  # no terminal was started
    assert not (lab.root / "pwned.txt").exists()
    sandbox = page.locator(FRAME).get_attribute("sandbox") or ""
    assert "allow-same-origin" not in sandbox.split()
    page.screenshot(path=artifact_name(request, "-hostile"))


def test_another_site_cannot_send_the_browser_to_a_preview(
    page: Page, lab: LabServer, dev_app: DevApp, request: pytest.FixtureRequest
) -> None:
    # Lab is on 127.0.0.1; "localhost" is another site to the browser (and to the server).
    target = f"{lab.url}terax/proxy/{dev_app.port}/hostile.html"
    evil = page.context.new_page()
    try:
        evil.goto(f"http://localhost:{dev_app.port}/evil?to={target}")
        evil.wait_for_url(target, timeout=15_000)
        expect(evil.locator("body")).to_contain_text("Another site sent the browser")
        evil.wait_for_timeout(1000)  # a page that ran would have reported by now
        evil.screenshot(path=artifact_name(request, "-refused"))
    finally:
        evil.close()
    assert dev_app.reports == []
    assert not [r for r in dev_app.requests if "hostile" in r]


def test_a_normal_dev_app_works_in_the_sandbox(
    page: Page, lab: LabServer, dev_app: DevApp, request: pytest.FixtureRequest
) -> None:
    open_preview(page, dev_app.port, "/app/")
    shown = frame(page)
    expect(shown.locator("#module")).to_have_text("module: ran")
    expect(shown.locator("#api")).to_have_text("api: 42 yes")
    expect(shown.locator("#hmr")).to_have_text("hmr: connected")
    dev_app.push("update")
    expect(shown.locator("#hmr")).to_have_text("hmr: update")
    src = page.locator(FRAME).get_attribute("src") or ""
    assert f"{lab.base_url}terax/proxy/{dev_app.port}~" in src, src
    page.screenshot(path=artifact_name(request, "-app"))
    # The base path a dev server with root-absolute URLs needs is one click away.
    page.locator(f"{TAB} .jp-TeraxPreview-copyBase").click()
    prefix = urlsplit(src).path.removesuffix("app/")
    expect(page.locator(".Toastify__toast", has_text=f"Copied {prefix}")).to_be_visible()
    shown.locator("#send").click()
    expect(shown.locator("#title")).to_have_text("Got: hello")
    # The tab learns from the server where the form led.
    expect(page.locator(ADDRESS)).to_have_value(f"http://localhost:{dev_app.port}/app/submit")
    assert "POST /app/submit" in dev_app.requests


VITE_APP = Path(__file__).parent / "vite_app"


def vite_binary() -> Path:
    """Vite from ``tests/ui/vite_app`` (installed there by ``npm ci`` on first use)."""
    binary = VITE_APP / "node_modules" / ".bin" / "vite"
    if not binary.exists():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=VITE_APP, check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    return binary


def test_a_real_vite_dev_server_with_hot_reload(
    page: Page, lab: LabServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Vite writes root-absolute URLs and checks where it is served: it runs with the
    preview's base path (the Copy base path button's), and hot reload works through it."""
    binary = vite_binary()
    project = tmp_path / "vite-project"
    write(
        project / "index.html",
        "<!doctype html><title>Vite</title><body style='font:15px sans-serif;margin:20px'>"
        "<h1 id='msg'>loading</h1><p id='loaded'></p>"
        "<script type='module' src='/src/main.js'></script></body>",
    )
    write(
        project / "src" / "main.js",
        "import { message } from './message.js';\n"
        "document.getElementById('msg').textContent = message;\n"
        "document.getElementById('loaded').textContent = 'loaded ' + Math.random();\n"
        "if (import.meta.hot) {\n"
        "  import.meta.hot.accept('./message.js', next => {\n"
        "    document.getElementById('msg').textContent = next.message;\n"
        "  });\n"
        "}\n",
    )
    message = project / "src" / "message.js"
    write(message, "export const message = 'hello from vite';\n")
    port = free_port()
    prefix = server_api(lab, "terax/api/preview/capabilities", {"target": str(port)})["prefix"]
    vite = subprocess.Popen(
        [str(binary), "--port", str(port), "--strictPort", "--host", "127.0.0.1",
         "--base", prefix, "--clearScreen", "false"],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        wait_listening("127.0.0.1", port)
        open_preview(page, port)
        shown = frame(page)
        expect(shown.locator("#msg")).to_have_text("hello from vite", timeout=20_000)
        loaded = shown.locator("#loaded").inner_text()
        message.write_text("export const message = 'changed by hot reload';\n")
        expect(shown.locator("#msg")).to_have_text("changed by hot reload", timeout=20_000)
        assert shown.locator("#loaded").inner_text() == loaded  # replaced in place, no reload
        page.screenshot(path=artifact_name(request, "-vite"))
    finally:
        vite.terminate()
        try:
            vite.wait(timeout=10)
        except subprocess.TimeoutExpired:
            vite.kill()
        output = vite.stdout.read().decode(errors="replace") if vite.stdout else ""
        print(output[-3000:])
