"""The preview's connections to dev servers: made, then kept only if the server's uid answers.

Both halves of the proxy (HTTP and WebSocket) connect through ``OwnListenerTCPClient``; the
owner of the socket that accepted the connection is read from the kernel (``owner.py``) and a
connection to another account's process is closed before a byte is sent.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from tornado.tcpclient import TCPClient
from tornado.websocket import WebSocketClientConnection

from terax_jupyter.services.preview.owner import own_uid, peer_uid

if TYPE_CHECKING:
    from tornado.httpclient import HTTPRequest
    from tornado.iostream import IOStream


class ForeignListener(ConnectionRefusedError):
    """The port answered, but from a process of another account: treated as not listening
    here (the next address is tried), then refused by name."""

    def __init__(self, port: int) -> None:
        super().__init__(f"port {port} is served by another account's process")
        self.port = port


class OwnListenerTCPClient(TCPClient):
    """A TCPClient whose connections end at a socket of this server's own uid."""

    async def connect(self, host: str, port: int, *args: Any, **kwargs: Any) -> IOStream:
        stream = await super().connect(host, port, *args, **kwargs)
        uid = own_uid()
        if uid is None:
            return stream  # no uids to compare (Windows): one account's machine by design
        try:
            owner = await asyncio.to_thread(peer_uid, stream.socket)
        except OSError:
            owner = None
        if owner != uid:
            stream.close()
            raise ForeignListener(port)
        return stream


class OwnListenerWebSocket(WebSocketClientConnection):
    """``websocket_connect`` through ``OwnListenerTCPClient``."""

    def __init__(self, request: HTTPRequest, **kwargs: Any) -> None:
        super().__init__(request, **kwargs)
        # The connection starts on the loop's next turn (tornado schedules ``run()``), and it
        # reads this attribute then: swapping it here is in time.
        self.tcp_client.close()
        self.tcp_client = OwnListenerTCPClient()


async def websocket_connect(
    request: HTTPRequest, *, subprotocols: list[str] | None
) -> WebSocketClientConnection:
    connection = OwnListenerWebSocket(request, subprotocols=subprotocols)
    return await connection.connect_future


def is_foreign(error: BaseException | None) -> bool:
    while error is not None:
        if isinstance(error, ForeignListener):
            return True
        error = error.__cause__ or error.__context__
    return False
