"""BrowserPage in a real headless Chromium against pages served on 127.0.0.1: snapshots,
input, the network guard, waiting, and the RAW operations."""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import (
    AccessDenied,
    BrowserError,
    InvalidRequest,
    Timeout,
    TooLarge,
)
from terax_jupyter.services.browser.page import (
    ax_nodes,
    check_navigation,
    loopback_only,
    parse_key,
)
from terax_jupyter.services.browser.types import AXNode

from .driver_fixtures import (  # noqa: F401 (fixtures)
    EXTERNAL,
    browser_fixture,
    chromium_fixture,
    page_fixture,
    site_fixture,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from terax_jupyter.services.browser.page import BrowserPage
    from terax_jupyter.services.browser.session import BrowserSession
    from terax_jupyter.services.browser.types import Snapshot

    from .driver_fixtures import Site


def only(snapshot: Snapshot, role: str, name: str) -> AXNode:
    found = snapshot.find(role, name)
    assert len(found) == 1, snapshot.render()
    return found[0]


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        assert loop.time() < deadline, "the condition never held"
        await asyncio.sleep(0.05)


# --- snapshots -----------------------------------------------------------------------------


async def test_a_snapshot_has_roles_names_refs_and_states(page: BrowserPage, site: Site) -> None:
    await page.navigate(site.url("/login"))
    snapshot = await page.snapshot()

    assert snapshot.url == site.url("/login")
    assert snapshot.title == "Login"
    assert [n.ref for n in snapshot.nodes] == [f"e{i}" for i in range(1, len(snapshot.nodes) + 1)]
    document = snapshot.nodes[0]
    assert (document.role, document.name, document.depth) == ("document", "Login", 0)

    heading = only(snapshot, "heading", "Sign in")  # whitespace collapsed
    assert dict(heading.properties)["level"] == "1"
    user = only(snapshot, "textbox", "Username")
    password = only(snapshot, "textbox", "Password")
    remember = only(snapshot, "checkbox", "Remember me")
    assert dict(remember.properties)["checked"] == "false"
    assert dict(only(snapshot, "button", "Reset").properties)["disabled"] == "true"
    assert "disabled" not in dict(only(snapshot, "button", "Sign in").properties)
    only(snapshot, "link", "Other page")
    assert user.depth > document.depth
    assert all(isinstance(n.backend_node_id, int) for n in (user, password, remember))
    assert len({n.backend_node_id for n in snapshot.nodes}) == len(snapshot.nodes)

    # No unnamed wrappers, and no text that only repeats its button's name.
    assert not [n for n in snapshot.nodes if n.role in ("generic", "none") and not n.name]
    assert not snapshot.find("text", "Sign in")
    assert snapshot.find("text", "Not signed in")
    assert 'textbox "Username"' in snapshot.render()


async def test_typing_and_clicking_change_the_page(page: BrowserPage, site: Site) -> None:
    await page.navigate(site.url("/login"))
    snapshot = await page.snapshot()
    user = only(snapshot, "textbox", "Username")
    await page.type_text(user, "alice")
    await page.type_text(user, "bob")  # replaces what was there
    await page.type_text(only(snapshot, "textbox", "Password"), "hunter2")
    await page.click(only(snapshot, "button", "Sign in"))
    await page.click(only(snapshot, "checkbox", "Remember me"))

    assert await page.text_contains("Welcome, bob")
    assert not await page.text_contains("Welcome, alicebob")
    after = await page.snapshot()
    assert only(after, "textbox", "Username").value == "bob"
    assert "hunter2" not in after.render()  # a password field shows its value masked
    assert dict(only(after, "checkbox", "Remember me").properties)["checked"] == "true"
    only(after, "button", "Signed in")
    assert not page.raw_used


async def test_exact_find_returns_both_buttons_of_the_same_name(
    page: BrowserPage, site: Site
) -> None:
    await page.navigate(site.url("/dupes"))
    snapshot = await page.snapshot()
    first, second = snapshot.find("button", "Delete")
    assert first.ref != second.ref
    assert first.backend_node_id != second.backend_node_id
    assert snapshot.find("button", "delete") == []  # exact: no case folding
    await page.click(second)
    assert await page.text_contains("deleted second")


async def test_acting_on_a_node_that_left_the_page_asks_for_a_new_snapshot(
    page: BrowserPage, site: Site
) -> None:
    await page.navigate(site.url("/login"))
    button = only(await page.snapshot(), "button", "Sign in")
    await page.navigate(site.url("/dupes"))
    with pytest.raises(BrowserError, match="take a new snapshot"):
        await page.click(button)
    with pytest.raises(InvalidRequest):
        await page.click(AXNode(ref="e1", role="button", name="x"))


# --- the network guard ---------------------------------------------------------------------


async def test_navigating_to_an_external_host_is_refused_and_reported(
    page: BrowserPage, site: Site
) -> None:
    await page.navigate(site.url("/login"))
    with pytest.raises(AccessDenied, match="only reach local servers"):
        await page.navigate(f"{EXTERNAL}/landing")
    assert page.blocked == [f"{EXTERNAL}/landing"]
    assert await page.url() == site.url("/login")


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "chrome://version",
        "javascript:alert(1)",
        "data:text/html,<h1>hi</h1>",
        "view-source:http://127.0.0.1/",
        "ftp://127.0.0.1/",
    ],
)
async def test_local_files_browser_pages_and_scripts_are_access_denied(
    page: BrowserPage, url: str
) -> None:
    with pytest.raises(AccessDenied):
        await page.navigate(url)
    assert await page.url() == "about:blank"


async def test_a_subresource_on_another_host_is_blocked(page: BrowserPage, site: Site) -> None:
    await page.navigate(site.url("/outside"))
    assert f"{EXTERNAL}/pixel.png" in page.blocked
    assert await page.text_contains("local content")
    assert await page.evaluate("document.querySelector('img').naturalWidth") == 0


async def test_a_link_to_an_external_host_does_not_load_it(page: BrowserPage, site: Site) -> None:
    await page.navigate(site.url("/outside"))
    page.clear_blocked()
    await page.click(only(await page.snapshot(), "link", "Leave"))

    async def refused() -> bool:
        return f"{EXTERNAL}/landing" in page.blocked

    await eventually(refused)
    assert page.blocked_count == 1


async def test_a_redirect_to_an_external_host_is_blocked(page: BrowserPage, site: Site) -> None:
    with pytest.raises(BrowserError, match="ERR_BLOCKED_BY_CLIENT") as raised:
        await page.navigate(site.url("/redirect"))
    assert f"network guard refused {EXTERNAL}/landing" in raised.value.message
    assert page.blocked == [f"{EXTERNAL}/landing"]


async def test_a_local_port_with_no_server_is_a_browser_error_with_the_net_error(
    page: BrowserPage,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"
    with pytest.raises(BrowserError, match="ERR_CONNECTION_REFUSED"):
        await page.navigate(url)
    assert await page.url() == url


async def test_a_page_policy_decides_what_may_load(browser: BrowserSession, site: Site) -> None:
    def no_dupes(url: str) -> bool:
        return loopback_only(url) and "/dupes" not in url

    guarded = await browser.new_page(policy=no_dupes)
    with pytest.raises(AccessDenied):
        await guarded.navigate(site.url("/dupes"))
    await guarded.navigate(site.url("/login"))
    assert guarded.blocked == [site.url("/dupes")]


def test_the_default_policy_allows_loopback_and_in_browser_urls_only() -> None:
    for url in (
        "http://localhost:8888/lab",
        "https://app.localhost/",
        "http://127.0.0.1:5173/",
        "http://127.9.8.7/",
        "http://[::1]:3000/",
        "http://[::ffff:127.0.0.1]/",
        "ws://127.0.0.1:8888/socket",
        "data:image/png;base64,AAAA",
        "blob:http://127.0.0.1:8000/0f1e",
        "about:blank",
    ):
        assert loopback_only(url), url
    for url in (
        "http://example.com/",
        "https://10.0.0.5/",
        "http://192.168.1.2:8080/",
        "http://169.254.169.254/latest/meta-data",
        "http://[::2]/",
        "http://localhost.example.com/",
        "file:///etc/passwd",
        "chrome://settings",
        "ftp://127.0.0.1/",
        "http://[::1/",
        "",
    ):
        assert not loopback_only(url), url
    assert check_navigation(" about:blank ") == "about:blank"
    with pytest.raises(InvalidRequest):
        check_navigation("http://127.0.0.1/\nx")


# --- reading and waiting -------------------------------------------------------------------


async def test_text_and_selector_checks(page: BrowserPage, site: Site) -> None:
    await page.navigate(site.url("/login"))
    assert await page.text_contains("Not   signed\nin")  # whitespace does not matter
    assert not await page.text_contains("Welcome")
    assert await page.selector_exists("form #user")
    assert not await page.selector_exists("#missing")
    with pytest.raises(InvalidRequest, match="not a valid CSS selector"):
        await page.selector_exists("a[")
    assert await page.title() == "Login"


async def test_wait_for_waits_for_every_condition(page: BrowserPage, site: Site) -> None:
    await page.navigate(site.url("/delayed"))
    assert not await page.text_contains("ready now")
    await page.wait_for(text_contains="ready now", title_contains="Ready", timeout=5)
    await page.wait_for(url_contains="/delayed", selector="#status", timeout=1)


async def test_wait_for_times_out_naming_what_it_waited_for(page: BrowserPage, site: Site) -> None:
    await page.navigate(site.url("/login"))
    with pytest.raises(Timeout, match=r"waited 0\.3 s for text 'never shown'") as raised:
        await page.wait_for(text_contains="never shown", url_contains="/login", timeout=0.3)
    assert site.url("/login") in raised.value.message
    with pytest.raises(InvalidRequest):
        await page.wait_for(timeout=1)


async def test_a_screenshot_is_a_png_under_its_cap(page: BrowserPage, site: Site) -> None:
    await page.navigate(site.url("/login"))
    image = await page.screenshot()
    assert image.startswith(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(TooLarge):
        await page.screenshot(max_bytes=100)


# --- RAW operations ------------------------------------------------------------------------


async def test_evaluate_returns_json_values_and_marks_the_page_raw(
    page: BrowserPage, site: Site
) -> None:
    await page.navigate(site.url("/login"))
    assert not page.raw_used
    assert await page.evaluate("document.querySelectorAll('button').length") == 2
    assert page.raw_used
    assert await page.evaluate("({a: [1, 'x', null], b: true})") == {"a": [1, "x", None], "b": True}
    assert await page.evaluate("Promise.resolve(41 + 1)") == 42
    assert await page.evaluate("undefined") is None
    assert await page.evaluate("0 / 0") == "NaN"
    assert await page.evaluate("document.getElementById('go')") == "button#go"
    with pytest.raises(BrowserError, match="boom"):
        await page.evaluate("throw new Error('boom')")
    with pytest.raises(TooLarge, match="the cap is 1000"):
        await page.evaluate("Array(5000).fill(1)", max_chars=1000)
    with pytest.raises(TooLarge):
        await page.evaluate("'x'.repeat(5000)", max_chars=1000)


async def test_click_at_and_press_key_act_on_the_page(page: BrowserPage, site: Site) -> None:
    await page.navigate(site.url("/keys"))
    await page.click_at(260, 320)
    assert await page.text_contains("hit")
    field = only(await page.snapshot(), "textbox", "Field")
    await page.type_text(field, "ab")
    await page.press_key("c")
    await page.press_key("Shift+d")
    assert only(await page.snapshot(), "textbox", "Field").value == "abcD"
    await page.press_key("Enter")
    assert await page.text_contains("key Enter")
    await page.press_key("Escape")
    assert await page.text_contains("key Escape")
    with pytest.raises(InvalidRequest):
        await page.press_key("Hyper+x")
    with pytest.raises(InvalidRequest):
        await page.click_at(-1, 5)


async def test_dialogs_are_answered_at_once_and_kept(page: BrowserPage, site: Site) -> None:
    await page.navigate(site.url("/login"))
    assert await page.evaluate("alert('hello there'); 1") == 1
    assert await page.evaluate("confirm('really?')") is False
    assert page.dialogs == ["alert: hello there", "confirm: really?"]


# --- failures ------------------------------------------------------------------------------


async def test_a_cdp_error_is_a_browser_error_naming_the_method(page: BrowserPage) -> None:
    with pytest.raises(BrowserError, match=r"DOM\.getBoxModel failed: No node"):
        await page._call("DOM.getBoxModel", {"backendNodeId": 987654321})
    with pytest.raises(BrowserError, match=r"Nope\.nothing failed"):
        await page.connection.send("Nope.nothing")
    assert await page.url() == "about:blank"  # the connection is still good


async def test_a_crashed_tab_fails_its_next_call_and_others_go_on(
    page: BrowserPage,
    browser: BrowserSession,
    site: Site,
) -> None:
    await page.navigate(site.url("/login"))
    with pytest.raises(BrowserError):
        await page._call("Page.crash", timeout=5)
    with pytest.raises(BrowserError, match="crashed"):
        await asyncio.wait_for(page.snapshot(), 5)
    other = await browser.new_page()
    await other.navigate(site.url("/dupes"))
    assert await other.text_contains("nothing deleted")


# --- pure parts ----------------------------------------------------------------------------


def test_ax_nodes_skip_ignored_and_unnamed_wrappers_and_keep_document_order() -> None:
    def node(
        node_id: str, role: str, name: str = "", children: tuple[str, ...] = (), **more: Any
    ) -> dict[str, Any]:
        return {
            "nodeId": node_id,
            "role": {"type": "role", "value": role},
            "name": {"type": "computedString", "value": name},
            "childIds": list(children),
            **more,
        }

    raw = [
        node("1", "RootWebArea", "Page", ["2", "5"], backendDOMNodeId=1),
        node("2", "generic", "", ["3", "4"], parentId="1"),
        node("3", "button", "  Save \n now ", ["9"], parentId="2", backendDOMNodeId=3),
        node("9", "StaticText", "Save now", parentId="3"),
        node("4", "none", "", ["6"], parentId="2", ignored=True),
        node(
            "6",
            "textbox",
            "Name",
            ["10"],
            parentId="4",
            value={"type": "string", "value": "Ada"},
            properties=[
                {"name": "focusable", "value": {"type": "booleanOrUndefined", "value": True}},
                {"name": "required", "value": {"type": "boolean", "value": True}},
                {"name": "readonly", "value": {"type": "boolean", "value": False}},
            ],
        ),
        node("10", "StaticText", "Ada", parentId="6"),
        node("5", "paragraph", "", ["7", "8"], parentId="1"),
        node("7", "StaticText", "Hello", ["11"], parentId="5"),
        node("11", "InlineTextBox", "Hello", parentId="7"),
        node("8", "LineBreak", "\n", parentId="5"),
    ]
    nodes = ax_nodes(raw)
    assert [(n.ref, n.role, n.name, n.depth) for n in nodes] == [
        ("e1", "document", "Page", 0),
        ("e2", "button", "Save now", 1),
        ("e3", "textbox", "Name", 1),
        ("e4", "paragraph", "", 1),
        ("e5", "text", "Hello", 2),
    ]
    assert nodes[2].value == "Ada"
    assert nodes[2].properties == (("required", "true"),)
    assert nodes[1].backend_node_id == 3
    assert len(ax_nodes(raw, limit=2)) == 2


def test_keys_parse_to_dom_key_events() -> None:
    assert parse_key("Enter") == (0, "Enter", "Enter", 13, "\r")
    assert parse_key("a") == (0, "a", "KeyA", 65, "a")
    assert parse_key("Shift+a") == (8, "A", "KeyA", 65, "A")
    assert parse_key("Control+a") == (2, "a", "KeyA", 65, "")
    assert parse_key("Shift+Tab") == (8, "Tab", "Tab", 9, "")
    assert parse_key("7") == (0, "7", "Digit7", 55, "7")
    assert parse_key("+")[1] == "+"
    assert parse_key("Control++")[:2] == (2, "+")
    with pytest.raises(InvalidRequest):
        parse_key("NotAKey")
