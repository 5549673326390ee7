"""What a previewed page may do through its capability address, and what nothing else may.

The page runs sandboxed (``Content-Security-Policy: sandbox`` without ``allow-same-origin``),
so it asks as ``Origin: null`` and sends no cookies: these tests ask as it does.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
from jupyter_server.auth.authorizer import Authorizer
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.preview.headers import SANDBOX

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .conftest import Upstream

    Fetch = Callable[..., Awaitable[Any]]

pytestmark = pytest.mark.every_base_url

SANDBOXED = {"Origin": "null", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}


def sandboxed(policies: list[str]) -> bool:
    """A sandbox without the origin's rights is among the response's policies."""
    return any(
        p.startswith("sandbox")
        and "allow-same-origin" not in p
        # Framable by Lab's page (the origin the test client asks at) only.
        and p.endswith("; frame-ancestors http://127.0.0.1:" + p.rsplit(":", 1)[-1])
        and p.rsplit(":", 1)[-1].isdigit()
        for p in policies
    )


async def test_the_page_loads_posts_and_reads_its_own_server(
    capability: Callable[[int], Awaitable[str]],
    capability_fetch: Fetch,
    upstream: Upstream,
) -> None:
    prefix = await capability(upstream.port)
    page = await capability_fetch(prefix, "index.html", headers={"Sec-Fetch-Mode": "navigate"})
    assert json.loads(page.body)["uri"] == "/index.html"
    assert sandboxed(page.headers.get_list("Content-Security-Policy"))
    # Its own API, as the sandboxed page asks: the answer is readable (CORS for null).
    answer = await capability_fetch(
        prefix, "api/items", method="POST", body='{"a": 1}',
        headers={**SANDBOXED, "Content-Type": "application/json"},
    )  # fmt: skip
    seen = json.loads(answer.body)
    assert seen["body"] == '{"a": 1}'
    # The dev server sees its own origin, so its CSRF origin check passes.
    assert seen["headers"]["Origin"] == f"http://localhost:{upstream.port}"
    assert answer.headers["Access-Control-Allow-Origin"] == "null"
    assert "Content-Type" in answer.headers["Access-Control-Expose-Headers"]
    assert sandboxed(answer.headers.get_list("Content-Security-Policy"))


async def test_the_sandboxed_pages_preflight_is_answered_by_the_proxy(
    capability: Callable[[int], Awaitable[str]], capability_fetch: Fetch, upstream: Upstream
) -> None:
    prefix = await capability(upstream.port)
    response = await capability_fetch(
        prefix, "api/items", method="OPTIONS",
        headers={**SANDBOXED, "Access-Control-Request-Method": "PUT",
                 "Access-Control-Request-Headers": "content-type, x-custom"},
    )  # fmt: skip
    assert response.code == 204
    assert response.headers["Access-Control-Allow-Methods"] == "PUT"
    assert response.headers["Access-Control-Allow-Headers"] == "content-type, x-custom"
    assert response.headers["Access-Control-Allow-Origin"] == "null"
    assert upstream.requests == []  # it never had to answer one before the sandbox
    # A preflight that is not the sandboxed page's goes to the dev server.
    await capability_fetch(prefix, "api/items", method="OPTIONS")
    assert [r["method"] for r in upstream.requests] == ["OPTIONS"]


async def test_a_capability_opens_its_own_target_only(
    capability: Callable[[int], Awaitable[str]],
    capability_fetch: Fetch,
    upstream: Upstream,
    jp_base_url: str,
) -> None:
    prefix = await capability(upstream.port)
    token = prefix.rstrip("/").rsplit("~", 1)[1]
    other = f"{jp_base_url}terax/proxy/{upstream.port + 1}~{token}/"
    forged = f"{jp_base_url}terax/proxy/{upstream.port}~{token[:-2]}xx/"
    empty = f"{jp_base_url}terax/proxy/{upstream.port}~/"
    for url, reason in (
        (other, "preview_capability_mismatch"),
        (forged, "preview_expired"),
        (empty, "preview_expired"),
    ):
        for method in ("GET", "POST"):
            with pytest.raises(HTTPClientError) as caught:
                await capability_fetch(
                    url, "x", method=method, body="b" if method == "POST" else None
                )
            assert caught.value.code == 403
            assert error_of(caught.value)["reason"] == reason
    assert upstream.requests == []


async def test_the_same_address_while_it_lives_and_none_after_revoking(
    capability: Callable[[int], Awaitable[str]],
    capability_fetch: Fetch,
    upstream: Upstream,
    jp_fetch: Fetch,
) -> None:
    first = await capability(upstream.port)
    assert await capability(upstream.port) == first  # a dev server's --base stays valid
    await capability_fetch(first, "before")
    revoked = await jp_fetch("terax", "api", "preview", "capabilities", method="DELETE")
    assert json.loads(revoked.body) == {"revoked": 1}
    with pytest.raises(HTTPClientError) as caught:
        await capability_fetch(first, "after")
    assert error_of(caught.value)["reason"] == "preview_expired"
    assert await capability(upstream.port) != first
    assert [r["uri"] for r in upstream.requests] == ["/before"]


async def test_jupyter_does_not_accept_a_capability(
    capability: Callable[[int], Awaitable[str]], http_server_client: Any, upstream: Upstream,
    jp_base_url: str,
) -> None:  # fmt: skip
    token = (await capability(upstream.port)).rstrip("/").rsplit("~", 1)[1]
    for url, headers in (
        (f"{jp_base_url}api/contents?token={token}", {}),
        (f"{jp_base_url}api/contents", {"Authorization": f"token {token}"}),
        (f"{jp_base_url}terax/api/fs/list?path=", {"Authorization": f"token {token}"}),
        (f"{jp_base_url}terax/api/pty/sessions", {"Authorization": f"Bearer {token}"}),
    ):
        with pytest.raises(HTTPClientError) as caught:
            await http_server_client.fetch(url, headers=headers)
        assert caught.value.code == 403, url


async def test_the_tab_learns_what_its_frame_loaded(
    capability: Callable[[int], Awaitable[str]],
    capability_fetch: Fetch,
    upstream: Upstream,
    terax_api: Callable[..., Awaitable[Any]],
) -> None:
    prefix = await capability(upstream.port)
    frame = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}
    await capability_fetch(prefix, "app/page?q=1", headers=frame)
    await capability_fetch(prefix, "style.css", headers={"Sec-Fetch-Dest": "style"})
    state = await terax_api("preview/capabilities", params={"target": str(upstream.port)})
    assert state["prefix"] == prefix
    assert state["navigation"] == {"path": "/app/page?q=1", "status": 200, "error": None,
                                   "count": 1}  # fmt: skip
    await capability_fetch(prefix, "failing", headers=frame, raise_error=False)
    state = await terax_api("preview/capabilities", params={"target": str(upstream.port)})
    assert state["navigation"]["status"] == 503
    assert state["navigation"]["count"] == 2


async def test_a_dead_port_is_told_to_the_tab(
    capability: Callable[[int], Awaitable[str]],
    capability_fetch: Fetch,
    terax_api: Callable[..., Awaitable[Any]],
) -> None:
    from .conftest import free_port

    port = free_port()
    prefix = await capability(port)
    response = await capability_fetch(
        prefix, "", raise_error=False,
        headers={"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe", "Accept": "text/html"},
    )  # fmt: skip
    assert response.code == 502
    assert sandboxed(response.headers.get_list("Content-Security-Policy"))
    assert "script-src" not in response.headers["Content-Security-Policy"]  # none needed
    navigation = (await terax_api("preview/capabilities", params={"target": str(port)}))[
        "navigation"
    ]
    assert navigation["error"]["reason"] == "nothing_listening"
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("preview/capabilities", params={"target": "9"})
    assert caught.value.code == 403  # the port policy first, as for the proxy


async def test_a_capability_for_a_refused_target_is_never_issued(
    terax_api: Callable[..., Awaitable[Any]], jp_http_port: int
) -> None:
    for target, reason in (
        ("80", "privileged_port"),
        (str(jp_http_port), "own_port"),
        ("example.com:8000", "not_loopback"),
        ("x", "invalid_port"),
    ):
        with pytest.raises(HTTPClientError) as caught:
            await terax_api("preview/capabilities", method="POST", body={"target": target})
        assert error_of(caught.value)["reason"] == reason
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("preview/capabilities", method="POST", body={"target": 5173})
    assert error_of(caught.value)["reason"] == "invalid_parameter"


async def test_the_hot_reload_socket_of_a_sandboxed_page(
    capability: Callable[[int], Awaitable[str]],
    upstream: Upstream,
    http_server_client: Any,
    jp_http_port: int,
) -> None:
    prefix = await capability(upstream.port)
    url = f"ws://127.0.0.1:{jp_http_port}{prefix}ws"
    ws = await websocket_connect(HTTPRequest(url, headers={"Origin": "null"}))
    hello = json.loads(await asyncio.wait_for(ws.read_message(), 10))
    assert hello["origin"] == f"http://localhost:{upstream.port}"  # the dev server's own
    await ws.write_message("ping")
    assert await asyncio.wait_for(ws.read_message(), 10) == "ping"
    ws.close()
    # Another site's page, even with the address, is refused by its origin.
    with pytest.raises(HTTPClientError) as caught:
        await websocket_connect(HTTPRequest(url, headers={"Origin": "http://evil.example"}))
    assert caught.value.code == 403
    with pytest.raises(HTTPClientError) as caught:
        await websocket_connect(
            HTTPRequest(url.replace(prefix, prefix[:-3] + "zz/"), headers={"Origin": "null"})
        )
    assert caught.value.code == 403


class ReadOnly(Authorizer):
    """What a read-only deployment gives: read, never write or execute."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return action == "read"


@pytest.mark.parametrize("terax_config", [{"ServerApp": {"authorizer_class": ReadOnly}}])
async def test_reading_is_not_enough_to_reach_a_dev_server(
    proxy_fetch: Fetch, upstream: Upstream, terax_api: Callable[..., Awaitable[Any]]
) -> None:
    for method in ("GET", "HEAD", "OPTIONS"):
        with pytest.raises(HTTPClientError) as caught:
            await proxy_fetch(upstream.port, "admin/drop", method=method)
        assert caught.value.code == 403, method
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("preview/capabilities", method="POST", body={"target": str(upstream.port)})
    assert caught.value.code == 403
    assert upstream.requests == []
    # The servers list is a read.
    assert (await terax_api("preview/servers"))["servers"] == []


async def test_every_answer_of_the_proxy_is_sandboxed(
    proxy_fetch: Fetch, upstream: Upstream
) -> None:
    for path in ("page", "redirect?to=/x", "cached", "failing", "framed", "gzip"):
        response = await proxy_fetch(upstream.port, path, raise_error=False)
        assert sandboxed(response.headers.get_list("Content-Security-Policy")), path
    for port in ("80", "abc"):
        response = await proxy_fetch(port, "", raise_error=False)
        assert response.code in (400, 403)
        assert sandboxed(response.headers.get_list("Content-Security-Policy"))
    assert SANDBOX.startswith("sandbox ")


async def test_a_dev_server_that_serves_under_the_prefix_is_asked_for_whole_paths(
    capability: Callable[[int], Awaitable[str]], capability_fetch: Fetch, upstream: Upstream
) -> None:
    """``vite --base <prefix>`` redirects "/" into the prefix: from then on the proxy passes
    the whole path, as such a server expects, and its redirects stay as they are."""
    prefix = await capability(upstream.port)
    first = await capability_fetch(prefix, "plain")
    assert json.loads(first.body)["uri"] == "/plain"  # a server that knows nothing of it
    answer = await capability_fetch(prefix, f"redirect?to={quote(prefix)}", raise_error=False)
    assert (answer.code, answer.headers["Location"]) == (302, prefix)
    after = await capability_fetch(prefix, "src/main.js?v=1")
    assert json.loads(after.body)["uri"] == f"{prefix}src/main.js?v=1"


@pytest.mark.parametrize("terax_config", [{"TeraxApp": {"max_websockets_per_user": 2}}])
async def test_hot_reload_sockets_count_against_the_users_connections(
    capability: Callable[[int], Awaitable[str]], upstream: Upstream, jp_http_port: int
) -> None:
    prefix = await capability(upstream.port)
    url = f"ws://127.0.0.1:{jp_http_port}{prefix}ws"
    opened = [
        await websocket_connect(HTTPRequest(url, headers={"Origin": "null"})) for _ in range(2)
    ]
    with pytest.raises(HTTPClientError) as caught:
        await websocket_connect(HTTPRequest(url, headers={"Origin": "null"}))
    assert caught.value.code == 503
    assert error_of(caught.value)["reason"] == "too_many_connections"
    for socket in opened:
        socket.close()


async def test_a_framed_page_the_dev_server_did_not_say_how_to_cache_is_revalidated(
    capability: Callable[[int], Awaitable[str]], capability_fetch: Fetch, upstream: Upstream
) -> None:
    """The tab's Reload loads the address again (it cannot script its sandboxed frame): a
    heuristic cache must not answer it with the page from before the edit."""
    prefix = await capability(upstream.port)
    frame = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}
    page = await capability_fetch(prefix, "index.html", headers=frame)
    assert page.headers["Cache-Control"] == "no-cache"
    # The dev server's own caching stands, and subresources are left alone.
    cached = await capability_fetch(prefix, "cached", headers=frame)
    assert cached.headers.get_list("Cache-Control") == ["max-age=60"]
    script = await capability_fetch(prefix, "main.js", headers={"Sec-Fetch-Dest": "script"})
    assert "Cache-Control" not in script.headers


async def test_only_the_page_itself_loads_from_its_address(
    capability: Callable[[int], Awaitable[str]], capability_fetch: Fetch, upstream: Upstream
) -> None:
    """Jupyter's own pages may open a preview address (a navigation), nothing else: an image
    in agent output led there through ``login?next=`` arrives same-origin, not as the page."""
    prefix = await capability(upstream.port)
    for mode, dest in (("no-cors", "image"), ("cors", "empty"), ("websocket", "websocket")):
        for site in ("same-origin", "same-site"):
            with pytest.raises(HTTPClientError) as caught:
                await capability_fetch(
                    prefix, "exfil?d=SECRET",
                    headers={"Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode,
                             "Sec-Fetch-Dest": dest},
                )  # fmt: skip
            assert error_of(caught.value)["reason"] == "preview_not_from_page"
    assert upstream.requests == []
    frame = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate",
             "Sec-Fetch-Dest": "iframe"}  # fmt: skip
    await capability_fetch(prefix, "page", headers=frame)
    await capability_fetch(prefix, "own.js", headers={**SANDBOXED, "Sec-Fetch-Dest": "script"})
    assert [r["uri"] for r in upstream.requests] == ["/page", "/own.js"]


async def test_a_redirect_cannot_lead_the_frame_to_jupyter_or_another_port(
    capability: Callable[[int], Awaitable[str]],
    capability_fetch: Fetch,
    upstream: Upstream,
    proxy_fetch: Fetch,
    browser_cookie: dict[str, str],
    jp_http_port: int,
) -> None:
    prefix = await capability(upstream.port)
    own = f"127.0.0.1:{jp_http_port}"
    for location in (
        f"http://{own}{prefix.split('/terax/')[0]}/terax/proxy/{upstream.port + 1}/x",
        "../../../../lab",
        "/../../../lab",
        f"//{own}/api/contents",
    ):
        answer = await capability_fetch(
            prefix, f"redirect?to={quote(location)}", raise_error=False,
            headers={"Host": own},
        )  # fmt: skip
        assert answer.code == 302
        assert answer.headers["Location"].startswith(prefix.rstrip("/") + "/"), location
    # And a frame the browser was led to the cookie route by is not sent on.
    with pytest.raises(HTTPClientError) as caught:
        await proxy_fetch(
            upstream.port + 1, "x",
            headers={**browser_cookie, "Sec-Fetch-Site": "same-origin",
                     "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"},
        )  # fmt: skip
    assert error_of(caught.value)["reason"] == "preview_capability_required"


async def test_a_jupyter_token_in_the_query_stays_with_jupyter(
    proxy_fetch: Fetch, upstream: Upstream, jp_serverapp: Any,
    capability: Callable[[int], Awaitable[str]], capability_fetch: Fetch,
) -> None:  # fmt: skip
    token = jp_serverapp.identity_provider.token
    await proxy_fetch(upstream.port, f"page?a=1&token={token}&b=2", headers={"Authorization": ""})
    assert upstream.requests[-1]["uri"] == "/page?a=1&b=2"
    # On a capability route a "token" is the app's own (Vite's hot reload sends one).
    prefix = await capability(upstream.port)
    await capability_fetch(prefix, "hmr?token=vite-own")
    assert upstream.requests[-1]["uri"] == "/hmr?token=vite-own"
