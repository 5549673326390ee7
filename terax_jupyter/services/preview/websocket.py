"""The preview proxy's WebSocket half: a dev server's hot-reload socket, relayed both ways."""

from __future__ import annotations

import asyncio
from http.client import responses
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from jupyter_server.auth.decorator import allow_unauthenticated, ws_authenticated
from tornado import web
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import WebSocketClosedError, WebSocketError

from terax_jupyter.base import TeraxWebSocketHandler
from terax_jupyter.exceptions import AccessDenied
from terax_jupyter.services.preview.connect import is_foreign, websocket_connect
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

if TYPE_CHECKING:
    from tornado.websocket import WebSocketClientConnection

    from terax_jupyter.services.preview.manager import ProxyTarget

HANDSHAKE_TIMEOUT = 30.0


class ProxyWebSocket(ProxyMixin, TeraxWebSocketHandler):
    """A WebSocket relayed to the same path of a loopback port (dev servers' hot reload)."""

    auth_resource = AUTH_RESOURCE

    def initialize(self) -> None:
        self.upstream: WebSocketClientConnection | None = None
        self._relay: asyncio.Task[None] | None = None

    @ws_authenticated
    async def get(self, port: str, path: str) -> None:
        await self.authorize_execute()
        target = self.proxy_target(port)
        # Jupyter's origin check comes with the handshake, after this: refuse before the dev
        # server is even asked.
        origin = self.get_origin()
        if origin is not None and not self.check_origin(origin):
            raise web.HTTPError(403, "Cross-origin WebSocket to the preview refused.")
        self.upstream = await self._connect(target)
        try:
            await super().get(port, path)  # returns when the socket closes, or was refused
        finally:
            if self._relay is None and self.upstream is not None:
                self.upstream.close()  # the browser's handshake failed (its origin, ...)
                self.upstream = None

    async def _connect(self, target: ProxyTarget) -> WebSocketClientConnection:
        offered = [
            p.strip()
            for p in self.request.headers.get("Sec-WebSocket-Protocol", "").split(",")
            if p.strip()
        ]
        headers = self.upstream_headers(target, websocket=True)
        failure: BaseException | None = None
        foreign = False
        for address in target.addresses:
            request = HTTPRequest(
                f"ws://{bracketed(address)}:{target.port}{self.forwarded_path()}",
                headers=headers,
                connect_timeout=self.terax.preview.connect_timeout,
                request_timeout=HANDSHAKE_TIMEOUT,
            )
            try:
                return await websocket_connect(request, subprotocols=offered or None)
            except WebSocketError:
                raise web.HTTPError(
                    502,
                    "%s",
                    f"The server on port {target.port} does not take WebSockets at this path.",
                    reason="Upstream Refused",
                ) from None
            except HTTPClientError as error:
                if is_foreign(error):
                    foreign = True
                    continue
                if error.code != 599:
                    status = f"{error.code} {responses.get(error.code, '')}".strip()
                    raise web.HTTPError(
                        502,
                        "%s",
                        f"The server on port {target.port} refused the WebSocket ({status}).",
                        reason="Upstream Refused",
                    ) from None
                failure = error
            except OSError as error:
                if is_foreign(error):
                    foreign = True
                    continue
                failure = error
            if not not_listening_here(failure):
                break
        if foreign and (failure is None or not_listening_here(failure)):
            raise AccessDenied(foreign_listener(target), reason="not_own_port")
        if failure is None or not_listening_here(failure):
            raise web.HTTPError(502, "%s", nothing_listening(target), reason="Nothing Listening")
        raise web.HTTPError(
            502,
            "%s",
            f"The server on port {target.port} failed the WebSocket: {describe_failure(failure)}.",
            reason="Upstream Failed",
        )

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        chosen = self.upstream.selected_subprotocol if self.upstream is not None else None
        return chosen if chosen in subprotocols else None

    def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)
        self._relay = asyncio.ensure_future(self._relay_upstream())

    async def on_message(self, message: str | bytes) -> None:
        upstream = self.upstream
        if upstream is None:
            return
        self._used()
        try:
            await upstream.write_message(message, binary=isinstance(message, bytes))
        except WebSocketClosedError:
            self.close()

    async def _relay_upstream(self) -> None:
        upstream = self.upstream
        assert upstream is not None
        while True:
            message = await upstream.read_message()
            if message is None:
                break
            self._used()
            try:
                await self.write_message(message, binary=isinstance(message, bytes))
            except WebSocketClosedError:
                upstream.close()
                return
        code = upstream.close_code
        self.close(code if _sendable(code) else None, upstream.close_reason)

    def _used(self) -> None:
        if self.capability is not None:
            self.terax.preview.capabilities.keep_alive(self.capability)

    def on_close(self) -> None:
        upstream, self.upstream = self.upstream, None
        if upstream is not None:
            code = self.close_code
            upstream.close(code if _sendable(code) else None, self.close_reason)
        if self._relay is not None and not self._relay.done():
            self._relay.cancel()


class CapabilityProxyWebSocket(ProxyWebSocket):
    """The hot-reload socket of a previewed page: its capability is its credential.

    The sandboxed page's origin is ``null``; another site's page (which could only have the
    capability if it was given it) is refused by its origin anyway.
    """

    @allow_unauthenticated
    @capability_required
    async def get(self, port: str, capability: str, path: str) -> None:  # type: ignore[override]
        target = self.proxy_target(port)
        # It counts against the allowance of whoever asked for the capability.
        assert self.capability is not None
        self._take_slot(SimpleNamespace(username=self.capability.user))
        origin = self.get_origin()
        if origin is not None and not self.check_origin(origin):
            raise web.HTTPError(403, "Cross-origin WebSocket to the preview refused.")
        self.upstream = await self._connect(target)
        try:
            await TeraxWebSocketHandler.get(self, port, capability, path)
        finally:
            if self._relay is None and self.upstream is not None:
                self.upstream.close()
                self.upstream = None

    def check_origin(self, origin: str | None = None) -> bool:
        if origin is None or origin == "null":
            return True
        return super().check_origin(origin)

    def get_login_url(self) -> str:
        raise web.HTTPError(403, "This preview address needs its capability.")


_SENDABLE_CLOSE_CODES = frozenset({1000, 1001, 1002, 1003, *range(1007, 1015)})


def _sendable(code: int | None) -> bool:
    """A close code one may send (1005, 1006 and 1015 only describe a closed connection)."""
    return code is not None and (code in _SENDABLE_CLOSE_CODES or 3000 <= code <= 4999)
