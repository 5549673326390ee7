"""The preview proxy: ``/terax/proxy/<port>/<path>`` to a server on this machine's loopback.

HTTP: any method; the request body is read up to ``PreviewManager.max_body_bytes`` (413
past it), the response streams back as it arrives (each chunk waits for the browser's
socket, so a slow tab slows the dev server, not our memory). A WebSocket upgrade on the
same URL (hot reload) is handed to ``websocket.ProxyWebSocket``, which checks
authentication and ``execute`` again before it relays anything.

Cookie-authenticated requests that change things are checked by origin (same host, no
``Sec-Fetch-Site: cross-site``) instead of Jupyter's ``_xsrf`` token, which the proxied
app cannot know; another site may link to a preview but not load it as a subresource.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import TYPE_CHECKING

from jupyter_server._tz import utcnow
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import JupyterHandler
from tornado import httputil, web
from tornado.httpclient import HTTPRequest
from tornado.simple_httpclient import HTTPTimeoutError, SimpleAsyncHTTPClient

from terax_jupyter.exceptions import TooLarge
from terax_jupyter.services.preview.headers import response_headers
from terax_jupyter.services.preview.relay import (
    AUTH_RESOURCE,
    ProxyMixin,
    bracketed,
    describe_failure,
    not_listening_here,
    nothing_listening,
)
from terax_jupyter.services.preview.websocket import ProxyWebSocket

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
        _clients[loop] = client
    return client


@web.stream_request_body
class ProxyHandler(ProxyMixin, JupyterHandler):  # type: ignore[misc]
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
        return super().get_login_url()  # type: ignore[no-any-return]

    def check_xsrf_cookie(self) -> None:
        """Refuse cross-site writes by origin: the proxied app cannot send Jupyter's token."""
        if getattr(self, "_jupyter_current_user", None) is None:
            return  # not authenticated (yet): authentication refuses, or this is called again
        if self.token_authenticated or self.settings.get("disable_check_xsrf", False):
            return
        site = self.request.headers.get("Sec-Fetch-Site", "")
        origin = self.request.headers.get("Origin")
        if site in ("cross-site", "same-site") or origin == "null":
            raise web.HTTPError(403, "Cross-site requests to the preview are refused.")
        if origin is not None:
            if not self.check_origin():
                raise web.HTTPError(403, "Cross-origin requests to the preview are refused.")
        elif not self.check_referer():
            raise web.HTTPError(403, "A write to the preview must come from this page.")

    def compute_etag(self) -> str | None:
        return None  # the dev server's caching headers stand as they are

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        fetch = self.request.headers
        if fetch.get("Sec-Fetch-Site") == "cross-site" and fetch.get("Sec-Fetch-Mode") not in (
            None,
            "navigate",
        ):
            # Another site may link to a preview, not load it into its own page (XSSI).
            raise web.HTTPError(403, "Another site may not load the preview into its pages.")
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
    @authorized
    async def get(self, port: str, path: str) -> None:
        if self.request.headers.get("Upgrade", "").lower() == "websocket":
            await self._upgrade()
        else:
            await self._forward(port)

    @web.authenticated
    @authorized
    async def head(self, port: str, path: str) -> None:
        await self._forward(port)

    @web.authenticated
    @authorized
    async def post(self, port: str, path: str) -> None:
        await self._forward(port)

    @web.authenticated
    @authorized
    async def put(self, port: str, path: str) -> None:
        await self._forward(port)

    @web.authenticated
    @authorized
    async def patch(self, port: str, path: str) -> None:
        await self._forward(port)

    @web.authenticated
    @authorized
    async def delete(self, port: str, path: str) -> None:
        await self._forward(port)

    @web.authenticated
    @authorized
    async def options(self, port: str, path: str) -> None:
        await self._forward(port)

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
        for address in target.addresses:
            request = HTTPRequest(
                f"http://{bracketed(address)}:{target.port}{self.upstream_path()}",
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
        if failure is None or not_listening_here(failure):
            raise web.HTTPError(502, "%s", nothing_listening(target), reason="Nothing Listening")
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
        for name, value in response_headers(
            upstream, port=self._target.port, prefix=self.proxy_prefix(), keep_length=not bodiless
        ):
            lower = name.lower()
            # Jupyter's frame-ancestors policy stays beside the dev server's own policy.
            if lower not in replaced and lower != "content-security-policy":
                self.clear_header(name)
                replaced.add(lower)
            self.add_header(name, value)
        self._committed = True

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

    async def _upgrade(self) -> None:
        """Hand this request to a WebSocket handler (which authenticates it again)."""
        socket = ProxyWebSocket(self.application, self.request)
        self._auto_finish = False  # the WebSocket handler answers this request now
        await socket._execute(self._transforms, *self.path_args, **self.path_kwargs)
