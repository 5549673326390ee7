"""What the proxy passes, drops and rewrites in headers (pure functions)."""

from __future__ import annotations

import pytest
from tornado.httputil import HTTPHeaders

from terax_jupyter.services.preview.headers import (
    SANDBOX,
    cors_headers,
    frame_ancestors,
    preflight_headers,
    preview_policy,
    request_headers,
    response_headers,
    rewrite_cookie,
    rewrite_location,
)

PREFIX = "/user/alice/terax/proxy/5173"


def headers(*pairs: tuple[str, str]) -> HTTPHeaders:
    result = HTTPHeaders()
    for name, value in pairs:
        result.add(name, value)
    return result


def upstream_request(*pairs: tuple[str, str], token: bool = False) -> dict[str, list[str]]:
    sent: dict[str, list[str]] = {}
    for name, value in request_headers(
        headers(*pairs),
        host="localhost:5173",
        own_host="hub.example:8443",
        prefix=PREFIX,
        drop_cookies={"_xsrf", "username-hub"},
        drop_authorization=token,
    ):
        sent.setdefault(name.lower(), []).append(value)
    return sent


def test_request_hop_by_hop_and_jupyter_credentials_go() -> None:
    sent = upstream_request(
        ("Host", "hub.example:8443"),
        ("Connection", "keep-alive, X-Secret-Hop"),
        ("X-Secret-Hop", "1"),
        ("Keep-Alive", "timeout=5"),
        ("TE", "trailers"),
        ("Upgrade", "h2c"),
        ("Proxy-Authorization", "Basic abc"),
        ("Content-Length", "3"),
        ("Expect", "100-continue"),
        ("Cookie", "_xsrf=2|abc; username-hub=secret; app=1"),
        ("Authorization", "token jupyter-token"),
        ("Accept", "text/html"),
        ("X-Requested-With", "fetch"),
    )
    assert sent["host"] == ["localhost:5173"]
    assert sent["cookie"] == ["app=1"]
    assert sent["accept"] == ["text/html"]
    assert sent["x-requested-with"] == ["fetch"]
    assert sent["x-forwarded-prefix"] == [PREFIX]
    for gone in ("connection", "x-secret-hop", "keep-alive", "te", "upgrade",
                 "proxy-authorization", "content-length", "expect"):  # fmt: skip
        assert gone not in sent
    assert sent["authorization"] == ["token jupyter-token"]
    assert "authorization" not in upstream_request(("Authorization", "Bearer x"), token=True)


def test_only_jupyter_cookies_leave_the_header() -> None:
    assert "cookie" not in upstream_request(("Cookie", "_xsrf=1; username-hub=2"))
    assert upstream_request(("Cookie", "a=1;b=2; _xsrf=3"))["cookie"] == ["a=1; b=2"]
    # Any Jupyter's or JupyterHub's cookie on the host, whichever server set it.
    jar = (
        "username-127-0-0-1-18889=other-server; jupyterhub-user-alice=hub; "
        "jupyterhub-session-id=s; _xsrf_other=x; Jupyterhub-Hub-Login=l; app_sid=keep"
    )
    assert upstream_request(("Cookie", jar))["cookie"] == ["app_sid=keep"]


@pytest.mark.parametrize(
    ("origin", "sent"),
    [
        ("https://hub.example:8443", "http://localhost:5173"),
        ("http://HUB.example:8443", "http://localhost:5173"),
        ("https://evil.example", "https://evil.example"),
        ("null", "null"),
    ],
)
def test_our_origin_becomes_the_dev_servers(origin: str, sent: str) -> None:
    assert upstream_request(("Origin", origin))["origin"] == [sent]


@pytest.mark.parametrize(
    ("referer", "sent"),
    [
        (f"https://hub.example:8443{PREFIX}/page?q=1", "http://localhost:5173/page?q=1"),
        (f"https://hub.example:8443{PREFIX}", "http://localhost:5173/"),
        ("https://hub.example:8443/user/alice/lab", "https://hub.example:8443/user/alice/lab"),
        (f"https://hub.example:8443{PREFIX}0/x", f"https://hub.example:8443{PREFIX}0/x"),
        ("https://elsewhere.example/x", "https://elsewhere.example/x"),
    ],
)
def test_referers_inside_the_preview_look_local(referer: str, sent: str) -> None:
    assert upstream_request(("Referer", referer))["referer"] == [sent]


def test_websocket_handshake_headers_are_the_clients_own() -> None:
    sent = request_headers(
        headers(
            ("Sec-WebSocket-Key", "abc"),
            ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Extensions", "permessage-deflate"),
            ("Sec-WebSocket-Protocol", "vite-hmr"),
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Origin", "https://hub.example:8443"),
        ),
        host="localhost:5173",
        own_host="hub.example:8443",
        prefix=PREFIX,
        drop_cookies=(),
        drop_authorization=False,
        websocket=True,
    )
    assert [name for name, _ in sent] == ["Host", "Origin", "X-Forwarded-Prefix"]


def response(*pairs: tuple[str, str], keep_length: bool = True) -> list[tuple[str, str]]:
    return response_headers(headers(*pairs), port=5173, prefix=PREFIX, keep_length=keep_length)


def test_response_headers_pass_except_what_acts_on_the_origin() -> None:
    sent = response(
        ("Content-Type", "text/html"),
        ("Content-Length", "12"),
        ("Transfer-Encoding", "chunked"),
        ("Connection", "close"),
        ("Cache-Control", "no-cache"),
        ("ETag", '"1"'),
        ("Strict-Transport-Security", "max-age=9"),
        ("Clear-Site-Data", '"*"'),
        ("Alt-Svc", 'h3=":443"'),
        ("Service-Worker-Allowed", "/"),
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", "frame-ancestors 'none'; script-src 'self'"),
        ("Content-Security-Policy-Report-Only", "default-src 'self'"),
    )
    assert sent == [
        ("Content-Type", "text/html"),
        ("Cache-Control", "no-cache"),
        ("Etag", '"1"'),
        # X-Frame-Options and frame-ancestors go: the proxy's own policy decides (Lab only).
        ("Content-Security-Policy", "script-src 'self'"),
        ("Content-Security-Policy-Report-Only", "default-src 'self'"),
        ("Content-Length", "12"),
    ]
    assert ("Content-Length", "12") not in response(("Content-Length", "12"), keep_length=False)


@pytest.mark.parametrize(
    ("location", "rewritten"),
    [
        ("http://localhost:5173/login", f"{PREFIX}/login"),
        ("https://localhost:5173/login?a=1#top", f"{PREFIX}/login?a=1#top"),
        ("http://127.0.0.1:5173", f"{PREFIX}/"),
        ("http://127.8.9.10:5173/x", f"{PREFIX}/x"),
        ("http://0.0.0.0:5173/x", f"{PREFIX}/x"),
        ("http://[::1]:5173/x", f"{PREFIX}/x"),
        ("//localhost:5173/x", f"{PREFIX}/x"),
        ("/x/y", f"{PREFIX}/x/y"),
        ("x/y", "x/y"),
        ("?page=2", "?page=2"),
        ("http://localhost:5174/x", "http://localhost:5174/x"),
        ("http://localhost/x", "http://localhost/x"),
        ("https://example.com/x", "https://example.com/x"),
        ("//example.com/x", "//example.com/x"),
        ("http://localhost.example.com:5173/x", "http://localhost.example.com:5173/x"),
        ("javascript:alert(1)", "javascript:alert(1)"),
        ("http://[bad", "http://[bad"),
        ("http://localhost:99999999/", "http://localhost:99999999/"),
        # A dev server that serves under the prefix itself (vite --base) names it already.
        (f"{PREFIX}/", f"{PREFIX}/"),
        (f"{PREFIX}/a?b=1", f"{PREFIX}/a?b=1"),
        (f"http://localhost:5173{PREFIX}/a#x", f"{PREFIX}/a#x"),
        (f"{PREFIX}x/", f"{PREFIX}{PREFIX}x/"),  # another segment is not under it
    ],
)
def test_locations(location: str, rewritten: str) -> None:
    assert rewrite_location(location, port=5173, prefix=PREFIX) == rewritten


@pytest.mark.parametrize(
    ("cookie", "rewritten"),
    [
        ("sid=1; Path=/; HttpOnly", f"sid=1; HttpOnly; Path={PREFIX}/"),
        ("sid=1; path=/api", f"sid=1; Path={PREFIX}/api"),
        ("sid=1; Domain=localhost; Path=/", f"sid=1; Path={PREFIX}/"),
        ("sid=1; Max-Age=60", f"sid=1; Max-Age=60; Path={PREFIX}/"),
        ("sid=1; Path=", f"sid=1; Path={PREFIX}/"),
        ("sid=1; Path=relative", f"sid=1; Path={PREFIX}/relative"),
        (f"sid=1; Path={PREFIX}/app", f"sid=1; Path={PREFIX}/app"),
        # A browser takes the last Path: a second one must not reach Jupyter's whole host.
        (f"_xsrf=evil; Path={PREFIX}/x; Path=/", f"_xsrf=evil; Path={PREFIX}/"),
        ("x=1; PATH = /a ; Path=/b;path=/c", f"x=1; Path={PREFIX}/c"),
        ("x=1; Domain=.example; domain=localhost ; Secure", f"x=1; Secure; Path={PREFIX}/"),
    ],
)
def test_cookies(cookie: str, rewritten: str) -> None:
    assert rewrite_cookie(cookie, prefix=PREFIX) == rewritten


def test_the_sandboxed_page_may_read_its_own_server() -> None:
    answer = headers(("Content-Type", "text/plain"), ("X-Total", "3"), ("Set-Cookie", "a=1"))
    sent = dict(cors_headers(answer))
    assert sent["Access-Control-Allow-Origin"] == "null"
    assert sent["Access-Control-Expose-Headers"] == "Content-Type, X-Total"
    asked = headers(
        ("Access-Control-Request-Method", "PATCH"),
        ("Access-Control-Request-Headers", "content-type, x-csrf"),
    )
    answer_to_preflight = dict(preflight_headers(asked))
    assert answer_to_preflight["Access-Control-Allow-Methods"] == "PATCH"
    assert answer_to_preflight["Access-Control-Allow-Headers"] == "content-type, x-csrf"
    # Nothing that is not a header token is echoed back.
    odd = headers(("Access-Control-Request-Method", "GET;X"),
                  ("Access-Control-Request-Headers", "a b"))  # fmt: skip
    assert set(dict(preflight_headers(odd))) == {
        "Access-Control-Allow-Origin", "Access-Control-Allow-Credentials",
        "Access-Control-Max-Age", "Vary",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("policy", "sent"),
    [
        ("unsafe-url", "strict-origin-when-cross-origin"),
        ("no-referrer, unsafe-url", "strict-origin-when-cross-origin"),
        ("no-referrer-when-downgrade", "strict-origin-when-cross-origin"),
        ("same-origin", "same-origin"),
        ("no-referrer", "no-referrer"),
    ],
)
def test_a_referrer_policy_never_sends_the_capability_away(policy: str, sent: str) -> None:
    assert response(("Referrer-Policy", policy)) == [("Referrer-Policy", sent)]


OWN = "hub.example:8443"
PAGE = f"{PREFIX}~cap/app/page"
CAP = f"{PREFIX}~cap"


@pytest.mark.parametrize(
    ("location", "rewritten"),
    [
        # Onto Jupyter's own host, however spelt: kept under the preview's prefix.
        (
            f"http://{OWN}/user/alice/terax/proxy/5174/landed",
            f"{CAP}/user/alice/terax/proxy/5174/landed",
        ),
        (f"https://{OWN}/user/alice/lab?x=1", f"{CAP}/user/alice/lab?x=1"),
        (f"//{OWN}/user/alice/api/contents", f"{CAP}/user/alice/api/contents"),
        ("../../../../../lab", f"{CAP}/user/lab"),  # the place it names, under the prefix
        ("/../../../lab", f"{CAP}/lab"),
        ("/terax/proxy/15173/../../..", f"{CAP}/"),
        ("%2e%2e/%2E%2e/%2e./.%2e/x", f"{CAP}/user/alice/x"),
        ("\\\\hub.example:8443/user/alice/lab", f"{CAP}/user/alice/lab"),
        ("/\\hub.example:8443/x", f"{CAP}/x"),
        ("ht\ttp://hub.example:8443/x", f"{CAP}/x"),
        ("HTTP://HUB.EXAMPLE:8443/x", f"{CAP}/x"),
        # Within the page's own folder: as written.
        ("next", "next"),
        ("./next?q=1", "./next?q=1"),
        ("?page=2", "?page=2"),
        ("#top", "#top"),
        # Elsewhere: another site is the page's business.
        ("https://example.com/x", "https://example.com/x"),
        ("\\\\example.com/x", "\\\\example.com/x"),
        ("mailto:a@example.com", "mailto:a@example.com"),
    ],
)
def test_a_redirect_never_leaves_the_prefix_for_jupyters_host(
    location: str, rewritten: str
) -> None:
    assert (
        rewrite_location(location, port=5173, prefix=CAP, own_host=OWN, request_path=PAGE)
        == rewritten
    )


@pytest.mark.parametrize(
    ("protocol", "host", "policy", "ancestors"),
    [
        # A hub's default adds nothing: Lab's origin, as the request came.
        ("http", "hub.example", "frame-ancestors 'none';report-uri /x", "http://hub.example"),
        ("https", "Hub.Example:8443", "", "https://hub.example:8443"),
        ("http", "[::1]:8888", "", "http://[::1]:8888"),
        # Jupyter's default policy ('self') and a policy without frame-ancestors add nothing.
        ("http", "h:1", "frame-ancestors 'self'; report-uri /r", "http://h:1"),
        ("http", "h:1", "default-src 'self'", "http://h:1"),
        # An operator's portal that frames Lab frames the preview too; wildcards never pass.
        (
            "https",
            "hub.example",
            "frame-ancestors 'self' https://portal.example/ * https: https://*.x.org "
            "data: HTTPS://Portal.Example https://hub.example; frame-ancestors https://b.example",
            "https://hub.example https://portal.example",
        ),
    ],
)
def test_the_preview_is_framable_by_labs_origin_only(
    protocol: str, host: str, policy: str, ancestors: str
) -> None:
    assert frame_ancestors(protocol, host, policy) == f"frame-ancestors {ancestors}"


@pytest.mark.parametrize("host", ["", "a b", "a;script-src *", "h:1 *", "-x", "[zz]", "h:123456"])
def test_a_host_that_is_no_host_goes_into_no_policy(host: str) -> None:
    assert frame_ancestors("http", host, "frame-ancestors https://p.example") == (
        "frame-ancestors 'self'"
    )


def test_the_preview_policy_is_the_sandbox_and_its_ancestors() -> None:
    policy = preview_policy(frame_ancestors("http", "hub.example", "frame-ancestors 'none'"))
    assert policy == f"{SANDBOX}; frame-ancestors http://hub.example"
    assert "allow-same-origin" not in policy
    assert "allow-top-navigation" not in policy
    assert "*" not in policy


@pytest.mark.parametrize(
    ("policy", "kept"),
    [
        ("frame-ancestors 'none'", None),
        ("frame-ancestors 'self';", None),
        ("default-src 'self'; frame-ancestors 'none'", "default-src 'self'"),
        ("FRAME-ANCESTORS *;script-src 'self' ;report-uri /r", "script-src 'self'; report-uri /r"),
        ("script-src 'self'", "script-src 'self'"),
    ],
)
def test_the_dev_servers_frame_ancestors_go_the_rest_stays(policy: str, kept: str | None) -> None:
    for name in ("Content-Security-Policy", "Content-Security-Policy-Report-Only"):
        sent = response((name, policy))
        assert sent == ([(name, kept)] if kept is not None else [])
