"""The terminal stream WebSocket: raw bytes both ways, JSON text frames for control."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
from typing import TYPE_CHECKING, Any, TypeGuard

from jupyter_server.auth.decorator import ws_authenticated
from tornado import web
from tornado.websocket import WebSocketClosedError

from terax_jupyter import activity
from terax_jupyter.base import TeraxWebSocketHandler
from terax_jupyter.exceptions import NotFound, Unavailable

if TYPE_CHECKING:
    from terax_jupyter.services.pty.session import PtySession
    from terax_jupyter.services.pty.wire import ServerMessage

# A small kernel send buffer keeps what a slow browser has not read yet on our side of the
# socket, where flow control counts it, instead of in megabytes of autotuned buffer.
SEND_BUFFER_BYTES = 256 * 1024
# And of that buffer, at most this much waits unsent (TCP_NOTSENT_LOWAT, Linux and macOS):
# the rest of a backlog stays in the session's count, so the PTY pauses sooner and less
# output is still on its way when Ctrl-C flushes the session's queue. A client that keeps
# up never meets the bound; bytes sent but not yet acknowledged do not count against it.
UNSENT_BYTES = 16 * 1024
_SIGNALS = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "HUP": signal.SIGHUP}
if hasattr(signal, "SIGQUIT"):
    _SIGNALS["QUIT"] = signal.SIGQUIT
if hasattr(signal, "SIGTSTP"):
    _SIGNALS["TSTP"] = signal.SIGTSTP


class PtyStreamWebSocket(TeraxWebSocketHandler):
    """Protocol.

    client -> server: binary frames are keystrokes and pastes for the PTY; text frames are
    JSON: ``{"type": "resize", "columns", "rows"}``, ``{"type": "signal", "name": "INT"}``,
    ``{"type": "input", "data"}``, and ``{"type": "ack", "bytes"}`` from a client that
    connected with ``?acks=1``: the output bytes it has shown since its last ack. Such a
    client's unacknowledged bytes are what paces the program (a browser reads its socket
    eagerly, so without acks megabytes can sit in its queue when Ctrl-C is pressed).
    server -> client: binary frames are terminal output (the scrollback replay first, in
    chunks, ended by ``replayed``); text frames are JSON: ``attached`` (session, nonce),
    ``replayed`` (the frames before it were the replay, later ones are live), ``block``
    (start/end with command, cwd, exit code, times), ``prompt``, ``input``, ``cwd``,
    ``title``, ``alt_screen``, ``agent``, ``notify``, ``notice`` (output skipped),
    ``server`` (a dev server detected or gone: the web preview), ``size`` (the terminal was
    resized, by any view), ``renamed``, ``exit``, ``closed``.
    A terminal shown in ``PtyManager.max_clients_per_session`` views already refuses the
    handshake with 503 ``too_many_connections`` (so does a user over the per-user cap).
    """

    auth_resource = "terax.pty"

    def initialize(self) -> None:
        self.session: PtySession | None = None

    @ws_authenticated
    async def get(self, session_id: str) -> None:
        await self.authorize_execute()
        try:
            session = self.terax.pty.get(session_id)
        except NotFound as error:
            raise web.HTTPError(404, error.message) from None
        limit = self.terax.pty.max_clients_per_session
        # No await between this check and the attach in open(): the count cannot go stale.
        if limit > 0 and session.client_count >= limit:
            raise Unavailable(
                f"This terminal is already shown in {session.client_count} views, the most "
                f"one terminal may have at once. Close one of them, or ask the administrator "
                f"to raise PtyManager.max_clients_per_session.",
                reason="too_many_connections",
            )
        self.terax.security.policy.require("terminals")
        self.session = session
        await super().get(session_id)

    def open(self, session_id: str) -> None:
        super().open()
        self.set_nodelay(True)
        with contextlib.suppress(Exception):
            # No connection or stream (closed already): the suppress skips the tuning.
            stream_socket = self.ws_connection.stream.socket  # type: ignore[union-attr]
            stream_socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
            unsent_option = getattr(socket, "TCP_NOTSENT_LOWAT", None)
            if unsent_option is not None:
                stream_socket.setsockopt(socket.IPPROTO_TCP, unsent_option, UNSENT_BYTES)
        assert self.session is not None
        columns = _query_int(self.get_query_argument("columns", ""), 2, 1000)
        rows = _query_int(self.get_query_argument("rows", ""), 1, 500)
        acks = self.get_query_argument("acks", "") in ("1", "true")
        self.session.attach(self, columns, rows, acks=acks)

    def on_message(self, message: str | bytes) -> None:
        session = self.session
        if session is None:
            return
        # Typing keeps the server up for JupyterHub's idle culler, as in Lab's terminals.
        activity.mark(self.settings)
        if isinstance(message, bytes):
            session.write(message)
            return
        try:
            request = json.loads(message)
        except ValueError:
            return
        if not isinstance(request, dict):
            return
        kind = request.get("type")
        if kind == "resize":
            columns, rows = request.get("columns"), request.get("rows")
            if _is_int(columns) and _is_int(rows):
                session.resize(columns, rows)
        elif kind == "signal":
            number = _SIGNALS.get(str(request.get("name", "")).upper())
            if number is not None:
                session.process.signal_foreground(number)
        elif kind == "input" and isinstance(request.get("data"), str):
            session.write(request["data"].encode("utf-8"))
        elif kind == "ack" and _is_int(request.get("bytes")):
            session.acknowledge(self, request["bytes"])

    def on_close(self) -> None:
        if self.session is not None:
            self.session.detach(self)
            self.session = None

    # -- PtyClient -------------------------------------------------------------------

    def send_output(self, data: bytes) -> asyncio.Future[Any] | None:
        activity.mark(self.settings)  # output someone is shown is activity (as in Lab)
        try:
            return self.write_message(data, binary=True)
        except WebSocketClosedError:
            return None

    def send_control(self, message: ServerMessage) -> asyncio.Future[Any] | None:
        try:
            return self.write_message(json.dumps(message))
        except WebSocketClosedError:
            return None


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _query_int(text: str, minimum: int, maximum: int) -> int | None:
    try:
        value = int(text)
    except ValueError:
        return None
    return value if minimum <= value <= maximum else None
