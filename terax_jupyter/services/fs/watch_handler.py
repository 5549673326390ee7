"""The watch WebSocket: clients subscribe to folders and receive batched change events."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from jupyter_server.auth.decorator import ws_authenticated
from tornado.websocket import WebSocketClosedError

from terax_jupyter.base import TeraxWebSocketHandler, parse_bool
from terax_jupyter.exceptions import InvalidRequest, TeraxError

if TYPE_CHECKING:
    import asyncio

    from terax_jupyter.services.fs.watch import Subscription

MAX_SUBSCRIPTIONS = 64
MAX_MESSAGE_BYTES = 64 * 1024
# Event messages a client has not taken off its socket yet. Past this a socket gets no more
# batches, only an ``overflow`` (rescan) per subscription once it has drained: a client
# that stops reading costs the server this much, not every change made meanwhile.
MAX_UNSENT_BYTES = 1024 * 1024


class WatchWebSocket(TeraxWebSocketHandler):
    """Protocol (JSON text frames).

    client: ``{"op": "subscribe", "id": "a", "path": "src", "recursive": true}``,
    ``{"op": "unsubscribe", "id": "a"}``.
    server: ``{"type": "subscribed", "id", "path"}``, ``{"type": "changes", "id",
    "events": [{"kind", "path", "dest"?, "directory"}]}``, ``{"type": "overflow", "id"}``
    (events were dropped, by the service or because this client fell behind: rescan),
    ``{"type": "error", "id", "message", "reason"}``.
    """

    auth_resource = "terax.fs"

    def initialize(self) -> None:
        self._subscriptions: dict[str, Subscription] = {}
        self._unsent = 0  # bytes of event messages handed to the socket, not yet sent
        self._overflowed: set[str] = set()  # subscriptions whose batches were dropped

    @ws_authenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        await self.authorize_execute()
        await super().get(*args, **kwargs)

    def on_message(self, message: str | bytes) -> None:
        request_id = None
        try:
            if isinstance(message, bytes) or len(message) > MAX_MESSAGE_BYTES:
                raise InvalidRequest(
                    "Messages must be JSON text under 64 KiB.", reason="invalid_message"
                )
            try:
                request = json.loads(message)
            except ValueError:
                raise InvalidRequest(
                    "The message is not valid JSON.", reason="invalid_json"
                ) from None
            if not isinstance(request, dict):
                raise InvalidRequest("The message must be a JSON object.", reason="invalid_message")
            request_id = str(request.get("id", ""))
            if not request_id:
                raise InvalidRequest("The message needs an 'id'.", reason="missing_parameter")
            op = request.get("op")
            if op == "subscribe":
                self._subscribe(request_id, request)
            elif op == "unsubscribe":
                self._unsubscribe(request_id)
            else:
                raise InvalidRequest(
                    "'op' must be 'subscribe' or 'unsubscribe'.", reason="invalid_message"
                )
        except TeraxError as error:
            self.send_json(
                {
                    "type": "error",
                    "id": request_id,
                    "message": error.message,
                    "reason": error.reason,
                }
            )
        except OSError as error:
            # The OS refused the watch (inotify limits, permissions): say so, keep the connection.
            self.log.warning("Watching failed: %s", error)
            self.send_json(
                {
                    "type": "error",
                    "id": request_id,
                    "message": "The server could not watch that folder (a system limit).",
                    "reason": "unavailable",
                }
            )

    def _subscribe(self, request_id: str, request: dict[str, Any]) -> None:
        if request_id in self._subscriptions:
            raise InvalidRequest(
                f"The id '{request_id}' is already subscribed.", reason="duplicate_id"
            )
        if len(self._subscriptions) >= MAX_SUBSCRIPTIONS:
            raise InvalidRequest(
                f"At most {MAX_SUBSCRIPTIONS} folders per connection.", reason="too_many"
            )
        path = request.get("path", "")
        if not isinstance(path, str):
            raise InvalidRequest("'path' must be a string.", reason="invalid_parameter")
        recursive = parse_bool(request.get("recursive", True), "recursive")

        def deliver(events: list[dict[str, Any]] | None) -> None:
            if request_id not in self._subscriptions:
                return  # a batch already on its way when the subscription ended
            if self._unsent > MAX_UNSENT_BYTES:
                self._overflowed.add(request_id)  # not even serialized: the work is bounded
            elif events is None:
                self._send_counted({"type": "overflow", "id": request_id})
            elif events:
                self._send_counted({"type": "changes", "id": request_id, "events": events})

        subscription = self.terax.watch.subscribe(path, deliver, recursive=recursive)
        self._subscriptions[request_id] = subscription
        self.send_json(
            {
                "type": "subscribed",
                "id": request_id,
                "path": self.terax.security.paths.display(subscription.folder),
            }
        )

    def _unsubscribe(self, request_id: str) -> None:
        subscription = self._subscriptions.pop(request_id, None)
        if subscription is None:
            raise InvalidRequest(f"Nothing is subscribed as '{request_id}'.", reason="unknown_id")
        self.terax.watch.unsubscribe(subscription)
        self.send_json({"type": "unsubscribed", "id": request_id})

    def _send_counted(self, message: dict[str, Any]) -> None:
        if self.ws_connection is None or self.ws_connection.is_closing():
            return
        text = json.dumps(message)
        try:
            future = self.write_message(text)
        except WebSocketClosedError:
            return
        size = len(text)
        self._unsent += size
        # A lambda with a default argument is one mypy cannot infer a type for.
        future.add_done_callback(lambda f, n=size: self._sent(f, n))  # type: ignore[misc]

    def _sent(self, future: asyncio.Future[Any], size: int) -> None:
        if not future.cancelled():
            future.exception()  # a closed socket: nothing to report
        self._unsent -= size
        if self._overflowed and self._unsent <= MAX_UNSENT_BYTES // 2:
            dropped, self._overflowed = self._overflowed, set()
            for request_id in sorted(dropped):
                if request_id in self._subscriptions:
                    self._send_counted({"type": "overflow", "id": request_id})

    def on_close(self) -> None:
        subscriptions, self._subscriptions = self._subscriptions, {}
        for subscription in subscriptions.values():
            self.terax.watch.unsubscribe(subscription)
        self._overflowed.clear()
