"""Fixtures of the web preview tests: a real dev server (tornado) on the loopback."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from tornado import web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.websocket import WebSocketHandler

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator


def free_port(host: str = "127.0.0.1") -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@dataclass
class Upstream:
    """A dev server in the test's event loop: what it saw, and a gate its stream waits at."""

    port: int
    requests: list[dict[str, Any]] = field(default_factory=list)
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    websocket_closed: list[tuple[int | None, str | None]] = field(default_factory=list)


class _Base(web.RequestHandler):
    def initialize(self, upstream: Upstream) -> None:
        self.upstream = upstream

    def seen(self) -> dict[str, Any]:
        record = {
            "method": self.request.method,
            "uri": self.request.uri,
            "headers": dict(self.request.headers.get_all()),
            "cookies": self.request.headers.get_list("Cookie"),
            "body": self.request.body.decode("utf-8", "replace"),
        }
        self.upstream.requests.append(record)
        return record

    def check_xsrf_cookie(self) -> None:
        pass


class Echo(_Base):
    """Every method: what arrived, as JSON."""

    def _echo(self) -> None:
        record = self.seen()
        if self.request.method != "HEAD":
            self.set_header("Content-Type", "application/json")
            self.write(json.dumps(record))
        else:
            self.set_header("Content-Length", "42")

    get = post = put = patch = delete = options = head = _echo  # type: ignore[assignment]


class Redirect(_Base):
    def get(self) -> None:
        self.seen()
        self.redirect(self.get_argument("to"), status=int(self.get_argument("status", "302")))


class Cookies(_Base):
    def get(self) -> None:
        self.add_header("Set-Cookie", "scoped=1; Path=/app; Domain=localhost; HttpOnly")
        self.add_header("Set-Cookie", "plain=2")
        self.add_header("Set-Cookie", "root=3; Path=/")
        self.write("cookies")


class Framed(_Base):
    def get(self) -> None:
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
        self.set_header("Strict-Transport-Security", "max-age=31536000")
        self.set_header("Clear-Site-Data", '"cookies"')
        self.set_header("Service-Worker-Allowed", "/")
        self.write("<p>framed</p>")


class Stream(_Base):
    """The first part at once; the rest only once the test opens the gate."""

    async def get(self) -> None:
        self.write("first\n")
        await self.flush()
        await asyncio.wait_for(self.upstream.gate.wait(), 10)
        self.write("second\n")


class Big(_Base):
    def get(self) -> None:
        size = int(self.get_argument("size"))
        block = bytes(range(256)) * 4096
        sent = 0
        while sent < size:
            part = block[: size - sent]
            self.write(part)
            sent += len(part)


class Compressed(_Base):
    def get(self) -> None:
        self.set_header("Content-Encoding", "gzip")
        self.set_header("Content-Type", "text/plain")
        self.write(gzip.compress(b"squeezed " * 1000))


class Cached(_Base):
    def get(self) -> None:
        self.set_header("ETag", '"v1"')
        self.set_header("Cache-Control", "max-age=60")
        if self.request.headers.get("If-None-Match") == '"v1"':
            self.set_status(304)
            return
        self.write("fresh")

    def compute_etag(self) -> str | None:
        return None


class Failing(_Base):
    def get(self) -> None:
        self.set_status(503)
        self.write("down for maintenance")


class Echoes(WebSocketHandler):
    def initialize(self, upstream: Upstream) -> None:
        self.upstream = upstream

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        return "vite-hmr" if "vite-hmr" in subprotocols else None

    def open(self) -> None:
        self.write_message(json.dumps({"hello": self.request.uri, "origin":
                                       self.request.headers.get("Origin")}))  # fmt: skip

    def on_message(self, message: str | bytes) -> None:
        if message == "close":
            self.close(4001, "asked")
        else:
            self.write_message(message, binary=isinstance(message, bytes))

    def on_close(self) -> None:
        self.upstream.websocket_closed.append((self.close_code, self.close_reason))


def start_upstream(host: str = "127.0.0.1") -> tuple[Upstream, HTTPServer]:
    port = free_port(host)
    upstream = Upstream(port)
    routes: list[Any] = [
        (r"/redirect", Redirect),
        (r"/cookies", Cookies),
        (r"/framed", Framed),
        (r"/stream", Stream),
        (r"/big", Big),
        (r"/gzip", Compressed),
        (r"/cached", Cached),
        (r"/failing", Failing),
        (r"/ws", Echoes),
        (r"/.*", Echo),
    ]
    app = web.Application(
        [(pattern, handler, {"upstream": upstream}) for pattern, handler in routes]
    )
    server = HTTPServer(app)
    server.add_sockets(bind_sockets(port, host))
    return upstream, server


@pytest.fixture
def proxy_fetch(
    http_server_client: Any, jp_auth_header: dict[str, str], jp_base_url: str
) -> Callable[..., Awaitable[Any]]:
    """``await proxy_fetch(port, "path?query", **fetch_options)``: the URL goes as written
    (``jp_fetch`` would escape it), with the test token unless the headers say otherwise."""

    def fetch(port: int | str, path: str = "", **kwargs: Any) -> Awaitable[Any]:
        headers = {**jp_auth_header, **kwargs.pop("headers", {})}
        kwargs.setdefault("follow_redirects", False)
        kwargs.setdefault("allow_nonstandard_methods", True)
        kwargs.setdefault("request_timeout", 30)
        url = f"{jp_base_url}terax/proxy/{port}/{path}"
        return http_server_client.fetch(url, headers=headers, **kwargs)  # type: ignore[no-any-return]

    return fetch


@pytest.fixture
def browser_cookie(
    jp_fetch: Callable[..., Awaitable[Any]],
    jp_serverapp: Any,
    jp_http_port: int,
    jp_asyncio_loop: asyncio.AbstractEventLoop,
) -> dict[str, str]:
    """The headers of a logged-in browser: Jupyter's login cookie, no token."""
    token = jp_serverapp.identity_provider.token
    login = jp_asyncio_loop.run_until_complete(
        jp_fetch("api", "status", params={"token": token}, headers={"Authorization": ""})
    )
    cookie = "; ".join(c.split(";", 1)[0] for c in login.headers.get_list("Set-Cookie"))
    assert cookie
    # The cookie is named after the host it was set for; requests must present that host.
    return {"Authorization": "", "Cookie": cookie, "Host": f"127.0.0.1:{jp_http_port}"}


@pytest.fixture
def capability(
    jp_fetch: Callable[..., Awaitable[Any]],
) -> Callable[[int | str], Awaitable[str]]:
    """``await capability(port)``: the capability prefix (trailing slash) the tab would load."""

    async def issue(target: int | str) -> str:
        response = await jp_fetch(
            "terax", "api", "preview", "capabilities", method="POST",
            body=json.dumps({"target": str(target)}),
        )  # fmt: skip
        return str(json.loads(response.body)["prefix"])

    return issue


@pytest.fixture
def capability_fetch(http_server_client: Any) -> Callable[..., Awaitable[Any]]:
    """``await capability_fetch(prefix, "path", **options)``: as a sandboxed page asks, with
    no Jupyter credential at all."""

    def fetch(prefix: str, path: str = "", **kwargs: Any) -> Awaitable[Any]:
        kwargs.setdefault("follow_redirects", False)
        kwargs.setdefault("allow_nonstandard_methods", True)
        kwargs.setdefault("request_timeout", 30)
        headers = {"Authorization": "", **kwargs.pop("headers", {})}
        return http_server_client.fetch(prefix + path, headers=headers, **kwargs)  # type: ignore[no-any-return]

    return fetch


@pytest.fixture
def upstream(jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[Upstream]:
    """A dev server on 127.0.0.1 only."""
    found, server = start_upstream()
    yield found
    server.stop()
    jp_asyncio_loop.run_until_complete(server.close_all_connections())


@pytest.fixture
def upstream_v6(jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[Upstream]:
    """A dev server on ::1 only (as Node binds "localhost" on many systems)."""
    try:
        found, server = start_upstream("::1")
    except OSError:
        pytest.skip("no IPv6 loopback here")
    yield found
    server.stop()
    jp_asyncio_loop.run_until_complete(server.close_all_connections())
