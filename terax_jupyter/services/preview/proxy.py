"""The preview proxy: ``/terax/proxy/<port>/<path>`` to a server on this machine's loopback.

HTTP: any method; the request body is read up to ``PreviewManager.max_body_bytes`` (413
past it), the response streams back as it arrives (each chunk waits for the browser's
socket, so a slow tab slows the dev server, not our memory). A WebSocket upgrade on the
same URL (hot reload) is handed to ``websocket.ProxyWebSocket``, which checks its
credential again before it relays anything. Every verb needs ``execute`` on
``terax.preview``: reading a page of a dev server can change things on it.

A browser reaches a dev server only through a capability route (``relay.py``):
``ProxyHandler`` serves a token's requests and sends a browser's own navigations on to
``CapabilityProxyHandler``; a navigation another site started, or anything else that only a
cookie vouches for, is refused. A connection that another account's process accepts is
closed before a byte is sent (``connect.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import TYPE_CHECKING

from jupyter_server._tz import utcnow
from jupyter_server.auth.decorator import allow_unauthenticated, authorized
from jupyter_server.base.handlers import JupyterHandler
from tornado import httputil, web
from tornado.httpclient import HTTPRequest
from tornado.simple_httpclient import HTTPTimeoutError, SimpleAsyncHTTPClient

from terax_jupyter.exceptions import AccessDenied, TeraxError, TooLarge
from terax_jupyter.services.preview.connect import OwnListenerTCPClient, is_foreign
from terax_jupyter.services.preview.headers import (
    cors_headers,
    preflight_headers,
    response_headers,
)
from terax_jupyter.services.preview.relay import (
    AUTH_RESOURCE,
    ProxyMixin,
    bracketed,
    capability_required,
    describe_failure,
    foreign_listener,
    not_listening_here,
    nothing_listening,
)
from terax_jupyter.services.preview.websocket import CapabilityProxyWebSocket, ProxyWebSocket

if TYPE_CHECKING:
    from terax_jupyter.services.preview.manager import ProxyTarget

MAX_CONNECTIONS = 256
# Server-sent events and long downloads may run for hours; connecting has its own limit.
RESPONSE_TIMEOUT = 24 * 3600.0
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SimpleAsyncHTTPClient] = (
    weakref.WeakKeyDictionary()
)


def _client() -> SimpleAsyncHTTPClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = SimpleAsyncHTTPClient(
            force_instance=True, max_clients=MAX_CONNECTIONS, max_body_size=1 << 62
        )
        client.tcp_client.close()
        client.tcp_client = OwnListenerTCPClient()  # read per request (fetch_impl)
        _clients[loop] = client
    return client


@web.stream_request_body
class ProxyHandler(ProxyMixin, JupyterHandler):
    """HTTP to a loopback port; a WebSocket upgrade is handed to ``ProxyWebSocket``."""

    auth_resource = AUTH_RESOURCE

    def initialize(self) -> None:
        self._body = bytearray()
        self._too_large = False
        self._committed = False
        self._status_line = ""
        self._header_lines: list[str] = []
        self._target: ProxyTarget | None = None

    # -- Jupyter's checks, as a proxy needs them -----------------------------------------

    def get_login_url(self) -> str:
        # As for Jupyter's API: refuse, instead of redirecting a fetch to the login page.
        if not self.current_user:
            raise web.HTTPError(403, "Log in to Jupyter first.")
        return super().get_login_url()

    def check_xsrf_cookie(self) -> None:
        """Nothing a cookie alone vouches for is proxied (``_entry``); a token cannot be sent
        by another site, so Jupyter's ``_xsrf`` (which a proxied app cannot know) is not
        asked for."""

    def compute_etag(self) -> str | None:
        return None  # the dev server's caching headers stand as they are

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        limit = self.terax.preview.max_body_bytes
        with contextlib.suppress(Exception):
            self.request.connection.set_max_body_size(limit + 1)  # type: ignore[union-attr]
        length = self.request.headers.get("Content-Length", "")
        if length.isascii() and length.isdigit() and int(length) > limit:
            raise TooLarge(f"The request body is over {limit} bytes, the preview proxy's limit.")

    def data_received(self, chunk: bytes) -> None:
        if self._too_large:
            return
        if len(self._body) + len(chunk) > self.terax.preview.max_body_bytes:
            self._too_large = True
            self._body = bytearray()
            return
        self._body += chunk

    # -- verbs -------------------------------------------------------------------------

    @web.authenticated
    @authorized("execute")
    async def get(self, port: str, path: str) -> None:
        await self._entry(port)

    @web.authenticated
    @authorized("execute")
    async def head(self, port: str, path: str) -> None:
        await self._entry(port)

    @web.authenticated
    @authorized("execute")
    async def post(self, port: str, path: str) -> None:
        await self._entry(port)

    @web.authenticated
    @authorized("execute")
    async def put(self, port: str, path: str) -> None:
        await self._entry(port)

    @web.authenticated
    @authorized("execute")
    async def patch(self, port: str, path: str) -> None:
        await self._entry(port)

    @web.authenticated
    @authorized("execute")
    async def delete(self, port: str, path: str) -> None:
        await self._entry(port)

    @web.authenticated
    @authorized("execute")
    async def options(self, port: str, path: str) -> None:
        await self._entry(port)

    # -- the Jupyter-authenticated route -----------------------------------------------

    async def _entry(self, port: str) -> None:
        """A token is proxied; a browser's own navigation goes on to its capability route."""
        if self.token_authenticated:
            if self.request.headers.get("Upgrade", "").lower() == "websocket":
                await self._upgrade(ProxyWebSocket)
            else:
                await self._forward(port)
            return
        target = self.proxy_target(port)
        self._refuse_foreign_navigation()
        user = self.current_user
        name = getattr(user, "username", None) or str(user)
        preview = self.terax.preview
        capability, token = preview.capabilities.issue(name, target.segment)
        location = preview.capability_prefix(capability.target, token) + self.upstream_path()
        self.set_header("Cache-Control", "no-store")
        self.set_header("Referrer-Policy", "no-referrer")
        self.redirect(location, status=303 if self.request.method == "POST" else 302)

    def _refuse_foreign_navigation(self) -> None:
        """Only a navigation of the user's own (Lab, a typed address) is sent on."""
        headers = self.request.headers
        if self.request.method not in ("GET", "HEAD"):
            raise AccessDenied(
                "Pages in the preview reach their dev server through their own preview "
                "address; open the page in the Terax preview tab.",
                reason="preview_capability_required",
            )
        site = headers.get("Sec-Fetch-Site")
        if site is None:
            # A browser that does not say where a request came from: only from this page.
            if not self.check_referer():
                raise AccessDenied(
                    "Open the preview from the Terax preview tab.",
                    reason="preview_capability_required",
                )
        elif site not in ("same-origin", "none"):
            raise AccessDenied(
                "Another site sent the browser to this preview; previews open only from "
                "Jupyter itself (the Terax preview tab, or the address typed in).",
                reason="cross_site_preview",
            )
        if headers.get("Sec-Fetch-Mode", "navigate") != "navigate":
            raise AccessDenied(
                "Only a page may be opened at this address; what it loads comes through "
                "its preview address.",
                reason="preview_capability_required",
            )
        if headers.get("Sec-Fetch-Dest") in ("iframe", "frame", "embed", "object"):
            # The preview tab frames a preview address itself; a frame led here was led by
            # something else (a dev server's redirect, another page).
            raise AccessDenied(
                "A frame opens a preview from its preview address, as the Terax preview tab does.",
                reason="preview_capability_required",
            )

    # -- HTTP --------------------------------------------------------------------------

    async def _forward(self, port: str) -> None:
        target = self.proxy_target(port)
        preview = self.terax.preview
        if self._too_large:
            raise TooLarge(
                f"The request body is over {preview.max_body_bytes} bytes, the preview "
                "proxy's limit."
            )
        self.settings["api_last_activity"] = utcnow()  # a preview in use keeps the server up
        self._target = target
        method = self.request.method or "GET"
        body = bytes(self._body) if self._body or method in ("POST", "PUT", "PATCH") else None
        headers = self.upstream_headers(target, websocket=False)
        failure: BaseException | None = None
        foreign = False
        for address in target.addresses:
            request = HTTPRequest(
                f"http://{bracketed(address)}:{target.port}{self.forwarded_path()}",
                method=method,
                headers=headers,
                body=body,
                follow_redirects=False,
                decompress_response=False,
                allow_nonstandard_methods=True,
                connect_timeout=preview.connect_timeout,
                request_timeout=RESPONSE_TIMEOUT,
                header_callback=self._on_header_line,
                streaming_callback=self._on_chunk,
            )
            try:
                response = await _client().fetch(request, raise_error=False)
            except Exception as error:  # the connection failed (raise_error covers statuses)
                if self._committed:
                    self._abort()
                    return
                if is_foreign(error):
                    foreign = True
                    continue  # perhaps our own server listens on the next address
                failure = error
                if not_listening_here(failure):
                    continue
                break
            if self._committed:
                if response.code == 599:
                    # Cut mid-body (the dev server died, or the browser left): end it here.
                    self._abort()
                elif not self._finished:
                    self.finish()
                return
            failure = response.error
            if not not_listening_here(failure):
                break
        if foreign and (failure is None or not_listening_here(failure)):
            raise AccessDenied(foreign_listener(target), reason="not_own_port")
        if failure is None or not_listening_here(failure):
            raise web.HTTPError(502, "%s", nothing_listening(target), reason="Nothing Listening")
        if isinstance(failure, TeraxError):
            raise failure
        if isinstance(failure, HTTPTimeoutError):
            raise web.HTTPError(
                504,
                "%s",
                f"The server on port {target.port} did not answer in time.",
                reason="Upstream Timeout",
            )
        raise web.HTTPError(
            502,
            "%s",
            f"The server on port {target.port} failed to answer: {describe_failure(failure)}.",
            reason="Upstream Failed",
        )

    def _on_header_line(self, line: str) -> None:
        if line.startswith("HTTP/"):
            self._status_line, self._header_lines = line, []
        elif line == "\r\n":
            self._commit()
        else:
            self._header_lines.append(line)

    def _commit(self) -> None:
        """The dev server's status line and headers become ours (not sent until a flush)."""
        assert self._target is not None
        start = httputil.parse_response_start_line(self._status_line.strip())
        upstream = httputil.HTTPHeaders.parse("".join(self._header_lines))
        reason = start.reason if start.reason.isascii() and start.reason.isprintable() else None
        self.set_status(start.code, reason or None)
        self.clear_header("Content-Type")
        bodiless = start.code in (204, 304) or start.code < 200
        replaced: set[str] = set()
        prefix = self.proxy_prefix()
        if self.capability is not None and _names_prefix(upstream.get("Location", ""), prefix):
            # The dev server redirects into this very prefix: it serves under it (vite --base),
            # so from now on it is asked for whole paths.
            self.terax.preview.capabilities.mount(self.capability)
        passed = response_headers(
            upstream,
            port=self._target.port,
            prefix=prefix,
            keep_length=not bodiless,
            own_host=self.request.host,
            request_path=self.request.path,
        )
        if self.capability is not None and self.request.headers.get("Origin") == "null":
            passed += cors_headers(upstream)
        if "Cache-Control" not in upstream and self._is_frame_navigation():
            # The tab cannot reload its sandboxed frame (another origin to it): it loads the
            # address again, which a browser may answer from its heuristic cache. A page the
            # dev server did not say how to cache is asked for again each time.
            passed.append(("Cache-Control", "no-cache"))
        for name, value in passed:
            lower = name.lower()
            # The sandbox policy stays beside the dev server's own policy (both apply).
            if lower not in replaced and lower != "content-security-policy":
                self.clear_header(name)
                replaced.add(lower)
            self.add_header(name, value)
        self._committed = True
        self.record_navigation(start.code)

    def _is_frame_navigation(self) -> bool:
        headers = self.request.headers
        return self.is_navigation() and headers.get("Sec-Fetch-Dest") in ("iframe", "frame")

    def _on_chunk(self, chunk: bytes) -> asyncio.Future[None] | None:
        if self._finished or not chunk:
            return None
        self.write(chunk)
        return self.flush()  # the dev server waits until the browser's socket took it

    def _abort(self) -> None:
        self._auto_finish = False
        with contextlib.suppress(Exception):
            self.request.connection.close()  # type: ignore[union-attr]

    # -- WebSocket ---------------------------------------------------------------------

    async def _upgrade(self, handler: type[ProxyWebSocket]) -> None:
        """Hand this request to a WebSocket handler (which checks its credential again)."""
        socket = handler(self.application, self.request)
        self._auto_finish = False  # the WebSocket handler answers this request now
        # tornado types these as the raw bytes it decodes; decoded already, they pass as is.
        await socket._execute(self._transforms, *self.path_args, **self.path_kwargs)  # type: ignore[arg-type]


def _names_prefix(location: str, prefix: str) -> bool:
    path = location.split("?", 1)[0].split("#", 1)[0]
    return path == prefix or path.startswith(prefix + "/")


@web.stream_request_body
class CapabilityProxyHandler(ProxyHandler):
    """``/terax/proxy/<target>~<capability>/``: what a previewed page loads, and its requests.

    No Jupyter credential arrives here (a sandboxed page sends no cookies) and none is
    needed: the capability is one, for this target only. Jupyter's ``_xsrf`` check does not
    apply either; the capability, which another site cannot know, takes its place.
    """

    @allow_unauthenticated
    @capability_required
    async def get(self, port: str, capability: str, path: str) -> None:
        if self.request.headers.get("Upgrade", "").lower() == "websocket":
            await self._upgrade(CapabilityProxyWebSocket)
        else:
            await self._forward(port)

    @allow_unauthenticated
    @capability_required
    async def head(self, port: str, capability: str, path: str) -> None:
        await self._forward(port)

    @allow_unauthenticated
    @capability_required
    async def post(self, port: str, capability: str, path: str) -> None:
        await self._forward(port)

    @allow_unauthenticated
    @capability_required
    async def put(self, port: str, capability: str, path: str) -> None:
        await self._forward(port)

    @allow_unauthenticated
    @capability_required
    async def patch(self, port: str, capability: str, path: str) -> None:
        await self._forward(port)

    @allow_unauthenticated
    @capability_required
    async def delete(self, port: str, capability: str, path: str) -> None:
        await self._forward(port)

    @allow_unauthenticated
    @capability_required
    async def options(self, port: str, capability: str, path: str) -> None:
        headers = self.request.headers
        if headers.get("Origin") == "null" and "Access-Control-Request-Method" in headers:
            # The sandboxed page's preflight, for a request that was same-origin before the
            # sandbox: its dev server never had to answer one.
            self.proxy_target(port)
            self.set_status(204)
            for name, value in preflight_headers(headers):
                self.set_header(name, value)
            self.finish()
            return
        await self._forward(port)

    def get_login_url(self) -> str:
        raise web.HTTPError(403, "This preview address needs its capability.")
