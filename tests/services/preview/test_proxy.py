"""The preview proxy through a real server, to a real dev server on the loopback."""

from __future__ import annotations

import asyncio
import gzip
import json
import random
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPClientError
from tornado.websocket import WebSocketClosedError

from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.preview.headers import SANDBOX
from terax_jupyter.services.preview.relay import ERROR_META

from .conftest import free_port

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .conftest import Upstream

    Fetch = Callable[..., Awaitable[Any]]

pytestmark = pytest.mark.every_base_url


def prefix(base_url: str, port: int) -> str:
    return f"{base_url}terax/proxy/{port}"


async def refusal(fetch: Fetch, port: int | str, **kwargs: Any) -> tuple[int, str, str]:
    with pytest.raises(HTTPClientError) as caught:
        await fetch(port, **kwargs)
    body = error_of(caught.value)
    assert set(body) == {"message", "reason"}
    return caught.value.code, body["reason"], body["message"]


# -- HTTP ------------------------------------------------------------------------------------------


async def test_get_passes_path_query_and_headers(
    proxy_fetch: Fetch, upstream: Upstream, jp_base_url: str
) -> None:
    response = await proxy_fetch(
        upstream.port,
        "some%20dir/page.html?x=1&y=%2F",
        headers={"X-Custom": "kept", "Accept-Language": "fr"},
    )
    assert response.code == 200
    seen = json.loads(response.body)
    assert seen["method"] == "GET"
    assert seen["uri"] == "/some%20dir/page.html?x=1&y=%2F"  # exactly as sent, still encoded
    headers = seen["headers"]
    assert headers["Host"] == f"localhost:{upstream.port}"
    assert headers["X-Custom"] == "kept"
    assert headers["Accept-Language"] == "fr"
    assert headers["X-Forwarded-Prefix"] == prefix(jp_base_url, upstream.port)
    # Jupyter's own credentials stay with Jupyter.
    assert "Authorization" not in headers


async def test_post_put_patch_delete_carry_their_bodies(
    proxy_fetch: Fetch, upstream: Upstream
) -> None:
    for method in ("POST", "PUT", "PATCH", "DELETE", "OPTIONS"):
        body = f"payload of {method}" if method != "DELETE" else None
        response = await proxy_fetch(upstream.port, "api/items", method=method, body=body)
        seen = json.loads(response.body)
        assert (seen["method"], seen["uri"]) == (method, "/api/items")
        assert seen["body"] == (body or "")
    response = await proxy_fetch(upstream.port, "api/items", method="HEAD")
    assert response.code == 200
    assert response.headers["Content-Length"] == "42"
    assert upstream.requests[-1]["method"] == "HEAD"


async def test_a_large_body_streams_both_ways(proxy_fetch: Fetch, upstream: Upstream) -> None:
    size = 6 * 1024 * 1024 + 7
    response = await proxy_fetch(upstream.port, f"big?size={size}")
    assert len(response.body) == size
    assert response.body[:512] == bytes(range(256)) * 2
    payload = b"\x00\xffdata" * 200_000
    response = await proxy_fetch(upstream.port, "upload", method="POST", body=payload)
    assert len(json.loads(response.body)["body"].encode("utf-8", "surrogateescape")) > 0
    assert upstream.requests[-1]["method"] == "POST"


@pytest.mark.parametrize("terax_config", [{"PreviewManager": {"max_body_bytes": 1000}}])
async def test_request_bodies_are_capped(proxy_fetch: Fetch, upstream: Upstream) -> None:
    await proxy_fetch(upstream.port, "small", method="POST", body=b"x" * 1000)
    code, reason, message = await refusal(
        proxy_fetch, upstream.port, method="POST", body=b"x" * 1001
    )
    assert (code, reason) == (413, "too_large")
    assert "1000 bytes" in message
    assert [r["uri"] for r in upstream.requests] == ["/small"]


async def test_the_response_streams_as_it_comes(proxy_fetch: Fetch, upstream: Upstream) -> None:
    chunks: list[bytes] = []

    def on_chunk(chunk: bytes) -> None:
        chunks.append(chunk)
        if b"first" in b"".join(chunks):
            upstream.gate.set()  # the dev server finishes only after the first part arrived

    await proxy_fetch(upstream.port, "stream", streaming_callback=on_chunk)
    assert b"".join(chunks) == b"first\nsecond\n"
    assert upstream.gate.is_set()


async def test_compressed_bodies_pass_untouched(proxy_fetch: Fetch, upstream: Upstream) -> None:
    response = await proxy_fetch(
        upstream.port,
        "gzip",
        headers={"Accept-Encoding": "gzip"},
        decompress_response=False,
    )
    assert response.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(response.body) == b"squeezed " * 1000
    assert response.headers["Content-Length"] == str(len(response.body))


async def test_status_codes_pass_through(proxy_fetch: Fetch, upstream: Upstream) -> None:
    response = await proxy_fetch(upstream.port, "cached")
    assert response.body == b"fresh"
    with pytest.raises(HTTPClientError) as caught:
        await proxy_fetch(upstream.port, "cached", headers={"If-None-Match": '"v1"'})
    assert caught.value.code == 304
    with pytest.raises(HTTPClientError) as caught:
        await proxy_fetch(upstream.port, "failing")
    assert caught.value.code == 503  # the dev server's own answer, not ours
    assert caught.value.response.body == b"down for maintenance"


async def test_redirects_to_the_dev_server_stay_under_the_prefix(
    proxy_fetch: Fetch, upstream: Upstream, jp_base_url: str
) -> None:
    mine = prefix(jp_base_url, upstream.port)
    other = upstream.port + 1
    cases = {
        f"http://localhost:{upstream.port}/login?next=%2F": f"{mine}/login?next=%2F",
        f"http://127.0.0.1:{upstream.port}/": f"{mine}/",
        f"http://[::1]:{upstream.port}/a#b": f"{mine}/a#b",
        "/absolute/path": f"{mine}/absolute/path",
        "relative/path": "relative/path",
        "https://example.com/elsewhere": "https://example.com/elsewhere",
        f"http://localhost:{other}/x": f"http://localhost:{other}/x",
    }
    for location, expected in cases.items():
        with pytest.raises(HTTPClientError) as caught:
            await proxy_fetch(upstream.port, f"redirect?to={quote(location, safe='')}")
        assert caught.value.code == 302
        assert caught.value.response.headers["Location"] == expected, location


async def test_a_redirect_can_be_followed_through_the_proxy(
    upstream: Upstream,
    jp_http_port: int,
    jp_base_url: str,
    jp_auth_header: dict[str, str],
    http_server_client: Any,  # the server must be listening
) -> None:
    landing = quote(f"http://localhost:{upstream.port}/landed", safe="")
    url = (
        f"http://127.0.0.1:{jp_http_port}{prefix(jp_base_url, upstream.port)}/redirect?to={landing}"
    )
    response = await AsyncHTTPClient().fetch(url, headers=jp_auth_header)
    assert json.loads(response.body)["uri"] == "/landed"
    assert response.effective_url.endswith(f"{prefix(jp_base_url, upstream.port)}/landed")


async def test_cookies_stay_under_the_prefix(
    proxy_fetch: Fetch, upstream: Upstream, jp_base_url: str
) -> None:
    response = await proxy_fetch(upstream.port, "cookies")
    cookies = response.headers.get_list("Set-Cookie")
    mine = prefix(jp_base_url, upstream.port)
    assert f"scoped=1; HttpOnly; Path={mine}/app" in cookies
    assert f"plain=2; Path={mine}/" in cookies
    assert f"root=3; Path={mine}/" in cookies


async def test_the_dev_server_cannot_act_on_the_whole_origin(
    proxy_fetch: Fetch, upstream: Upstream, jp_http_port: int
) -> None:
    response = await proxy_fetch(upstream.port, "framed")
    headers = response.headers
    assert "X-Frame-Options" not in headers  # the proxy's frame-ancestors decides: Lab only
    policies = headers.get_list("Content-Security-Policy")
    # The dev server's policy stands, without its frame-ancestors (written for its own
    # origin); the sandbox policy beside it says who frames the page.
    assert "default-src 'self'" in policies
    assert f"{SANDBOX}; frame-ancestors http://127.0.0.1:{jp_http_port}" in policies
    assert all("frame-ancestors 'none'" not in p for p in policies)
    for dropped in ("Strict-Transport-Security", "Clear-Site-Data", "Service-Worker-Allowed"):
        assert dropped not in headers


async def test_jupyter_cookies_and_token_do_not_reach_the_dev_server(
    proxy_fetch: Fetch, upstream: Upstream, jp_serverapp: Any
) -> None:
    await proxy_fetch(
        upstream.port,
        "who",
        headers={"Cookie": "_xsrf=abc; app_session=keep-me; other=1"},
    )
    seen = upstream.requests[-1]
    assert seen["cookies"] == ["app_session=keep-me; other=1"]
    assert jp_serverapp.identity_provider.token not in json.dumps(seen)


async def test_a_server_on_ipv6_loopback_only_is_found(
    proxy_fetch: Fetch, upstream_v6: Upstream
) -> None:
    response = await proxy_fetch(upstream_v6.port, "v6")
    assert json.loads(response.body)["uri"] == "/v6"
    response = await proxy_fetch(f"[::1]:{upstream_v6.port}", "v6")
    assert json.loads(response.body)["headers"]["Host"] == f"[::1]:{upstream_v6.port}"


# -- refusals --------------------------------------------------------------------------------------


async def test_nothing_listening_is_a_clear_502(proxy_fetch: Fetch) -> None:
    port = free_port()
    code, reason, message = await refusal(proxy_fetch, port)
    assert (code, reason) == (502, "nothing_listening")
    assert f"Nothing is listening on port {port}" in message
    # A browser navigation gets a page the preview tab can read.
    with pytest.raises(HTTPClientError) as caught:
        await proxy_fetch(port, headers={"Accept": "text/html,*/*"})
    page = caught.value.response.body.decode()
    assert caught.value.code == 502
    assert caught.value.response.headers["Content-Type"].startswith("text/html")
    assert f"name='{ERROR_META}'" in page
    assert f"Nothing is listening on port {port}" in page


@pytest.mark.parametrize(
    ("spec", "status", "reason"),
    [
        ("80", 403, "privileged_port"),
        ("1023", 403, "privileged_port"),
        ("0", 400, "invalid_port"),
        ("70000", 400, "invalid_port"),
        ("99999999", 400, "invalid_port"),
        ("abc", 400, "invalid_port"),
        ("-1", 400, "invalid_port"),
        ("8080.5", 400, "invalid_port"),
        ("example.com:8080", 403, "not_loopback"),
        ("10.0.0.1:8080", 403, "not_loopback"),
        ("169.254.169.254:8080", 403, "not_loopback"),
        ("0.0.0.0:8080", 403, "not_loopback"),
        ("localhost.example.com:8080", 403, "not_loopback"),
        ("127.0.0.1.nip.io:8080", 403, "not_loopback"),
        ("2130706433:8080", 403, "not_loopback"),
        ("[::ffff:127.0.0.1]:8080", 403, "not_loopback"),
        ("[fe80::1]:8080", 403, "not_loopback"),
    ],
)
async def test_refused_targets(proxy_fetch: Fetch, spec: str, status: int, reason: str) -> None:
    assert (await refusal(proxy_fetch, spec))[:2] == (status, reason)


async def test_the_servers_own_port_is_refused(
    proxy_fetch: Fetch, jp_http_port: int, jp_serverapp: Any
) -> None:
    for spec in (str(jp_http_port), f"localhost:{jp_http_port}", f"127.0.0.1:{jp_http_port}"):
        code, reason, _ = await refusal(proxy_fetch, spec)
        assert (code, reason) == (403, "own_port")


@pytest.mark.parametrize("terax_config", [{"PreviewManager": {"denied_ports": [5999]}}])
async def test_an_administrator_denies_ports(proxy_fetch: Fetch) -> None:
    assert (await refusal(proxy_fetch, 5999))[:2] == (403, "port_denied")


async def test_no_token_no_proxy(proxy_fetch: Fetch, jp_ws_fetch: Any, upstream: Upstream) -> None:
    for method in ("GET", "POST", "DELETE"):
        with pytest.raises(HTTPClientError) as caught:
            await proxy_fetch(
                upstream.port,
                "secret",
                method=method,
                headers={"Authorization": ""},
                body="x" if method == "POST" else None,
            )
        assert caught.value.code == 403
    with pytest.raises(HTTPClientError) as caught:
        await jp_ws_fetch("terax", "proxy", str(upstream.port), "ws", headers={"Authorization": ""})
    assert caught.value.code == 403
    assert upstream.requests == []


async def test_a_browser_cookie_alone_reaches_no_dev_server(
    proxy_fetch: Fetch, upstream: Upstream, browser_cookie: dict[str, str], jp_base_url: str
) -> None:
    """Whatever a cookie carries is refused, except the user's own navigation, which goes on
    to the page's capability address (where no cookie counts)."""
    refused = [
        ("POST", {"Origin": "http://evil.example"}, "preview_capability_required"),
        ("POST", {"Origin": "null"}, "preview_capability_required"),
        ("POST", {"Sec-Fetch-Site": "same-origin"}, "preview_capability_required"),
        ("PUT", {"Sec-Fetch-Site": "same-origin"}, "preview_capability_required"),
        ("GET", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"},
         "cross_site_preview"),
        ("GET", {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "navigate"},
         "cross_site_preview"),
        ("GET", {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "no-cors"},
         "preview_capability_required"),
        ("GET", {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"},
         "preview_capability_required"),
        ("GET", {}, "preview_capability_required"),  # neither Sec-Fetch-Site nor Referer
        ("GET", {"Referer": "http://evil.example/page"}, "preview_capability_required"),
    ]  # fmt: skip
    for method, extra, reason in refused:
        with pytest.raises(HTTPClientError) as caught:
            await proxy_fetch(
                upstream.port,
                "form",
                method=method,
                body="a=1" if method in ("POST", "PUT") else None,
                headers={**browser_cookie, **extra},
            )
        assert caught.value.code == 403, (method, extra)
        assert error_of(caught.value)["reason"] == reason, (method, extra)
    assert upstream.requests == []
    # The user's own navigation (Lab, a typed address) goes on to the capability address.
    for extra in (
        {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate"},
        {"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"},
    ):
        response = await proxy_fetch(
            upstream.port, "page?q=1", headers={**browser_cookie, **extra}, raise_error=False
        )
        assert response.code == 302
        assert response.headers["Cache-Control"] == "no-store"
        location = response.headers["Location"]
        assert location.startswith(f"{prefix(jp_base_url, upstream.port)}~")
        assert location.endswith("/page?q=1")
    assert upstream.requests == []


# -- WebSocket -------------------------------------------------------------------------------------


async def test_websocket_relays_both_ways(
    jp_ws_fetch: Any, upstream: Upstream, jp_http_port: int
) -> None:
    ws = await jp_ws_fetch(
        "terax",
        "proxy",
        str(upstream.port),
        "ws",
        params={"q": "x"},
        subprotocols=["other", "vite-hmr"],
    )
    assert ws.selected_subprotocol == "vite-hmr"
    hello = json.loads(await asyncio.wait_for(ws.read_message(), 10))
    assert hello["hello"] == "/ws?q=x"
    await ws.write_message("ping")
    assert await asyncio.wait_for(ws.read_message(), 10) == "ping"
    await ws.write_message(b"\x00\x01", binary=True)
    assert await asyncio.wait_for(ws.read_message(), 10) == b"\x00\x01"
    # The dev server closing ends ours, with its code.
    await ws.write_message("close")
    assert await asyncio.wait_for(ws.read_message(), 10) is None
    assert (ws.close_code, ws.close_reason) == (4001, "asked")


async def test_closing_the_browser_side_closes_upstream(
    jp_ws_fetch: Any, upstream: Upstream
) -> None:
    ws = await jp_ws_fetch("terax", "proxy", str(upstream.port), "ws")
    await asyncio.wait_for(ws.read_message(), 10)
    ws.close(1000, "bye")
    for _ in range(200):
        if upstream.websocket_closed:
            break
        await asyncio.sleep(0.02)
    assert upstream.websocket_closed == [(1000, "bye")]


async def test_websocket_to_nothing_is_refused_before_the_handshake(jp_ws_fetch: Any) -> None:
    with pytest.raises(HTTPClientError) as caught:
        await jp_ws_fetch("terax", "proxy", str(free_port()), "ws")
    assert caught.value.code == 502
    with pytest.raises(HTTPClientError) as caught:
        await jp_ws_fetch("terax", "proxy", "80", "ws")
    assert caught.value.code == 403


async def test_websocket_refused_by_the_dev_server(jp_ws_fetch: Any, upstream: Upstream) -> None:
    # /echo is no WebSocket: the dev server answers the upgrade with an error.
    with pytest.raises((HTTPClientError, WebSocketClosedError)) as caught:
        await jp_ws_fetch("terax", "proxy", str(upstream.port), "not-a-socket")
    assert getattr(caught.value, "code", 502) == 502


# -- fuzz ------------------------------------------------------------------------------------------

_ALPHABET = "0123456789:[].-_abcxyzLOCALHOST%@/\\ \t~!$&'()*+,;=é٣\u200b\x7f"


def _weird_targets(count: int) -> list[str]:
    """Route segments near the grammar of ``<port>`` and ``<host>:<port>``, and far from it."""
    rng = random.Random(20260101)
    seeds = ["5173", "localhost:5173", "127.0.0.1:5173", "[::1]:5173", "0", "65536", ":", "[]"]
    found = []
    for _ in range(count):
        seed = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            position = rng.randint(0, len(seed))
            action = rng.random()
            if action < 0.4:
                seed.insert(position, rng.choice(_ALPHABET))
            elif seed and action < 0.8:
                seed.pop(min(position, len(seed) - 1))
            else:
                seed[position:position] = list(str(rng.randint(0, 10 ** rng.randint(1, 12))))
        found.append("".join(seed))
    return found


async def test_no_target_makes_the_proxy_fail(proxy_fetch: Fetch) -> None:
    """Every segment is refused with a reason, or forwarded: never a 500."""
    statuses: dict[int, int] = {}
    for target in _weird_targets(300):
        segment = quote(target, safe=":[]@!$&'()*+,;=")
        if not segment or segment in (".", ".."):
            continue
        for method in ("GET", "POST"):
            try:
                response = await proxy_fetch(
                    segment, "x?y=1", method=method, body="b" if method == "POST" else None
                )
                code = response.code
            except HTTPClientError as error:
                code = error.code
                if code != 404 or error.response.headers.get("Content-Type", "").startswith(
                    "application/json"
                ):
                    body = error_of(error)
                    assert set(body) == {"message", "reason"}, target
                    if code >= 500:
                        assert (code, body["reason"]) == (502, "nothing_listening"), target
            statuses[code] = statuses.get(code, 0) + 1
    assert 500 not in statuses
    assert {400, 403} <= set(statuses), statuses


async def test_a_cookie_websocket_is_refused_before_the_dev_server_is_asked(
    jp_ws_fetch: Any, upstream: Upstream, browser_cookie: dict[str, str], jp_http_port: int
) -> None:
    for origin in (f"http://127.0.0.1:{jp_http_port}", "http://evil.example", "null"):
        with pytest.raises(HTTPClientError) as caught:
            await jp_ws_fetch(
                "terax", "proxy", str(upstream.port), "ws",
                headers={**browser_cookie, "Origin": origin},
            )  # fmt: skip
        assert caught.value.code == 403
    assert upstream.requests == []
