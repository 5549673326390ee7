"""The agent's event WebSocket: one session's events as JSON text frames, replayable."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING

from jupyter_server.auth.decorator import ws_authenticated
from tornado import web
from tornado.websocket import WebSocketClosedError

from terax_jupyter.base import TeraxWebSocketHandler
from terax_jupyter.exceptions import NotFound

if TYPE_CHECKING:
    from terax_jupyter.services.ai.events import Subscription


class AiEventsWebSocket(TeraxWebSocketHandler):
    """Protocol: server -> client only, JSON objects with ``type``, ``seq``, ``session_id``
    and ``run_id`` (see the OpenAPI document's AiEvent). Connect with ``?after=<seq>`` (the
    session's ``last_seq`` from REST, or the last event seen) to get the events after it;
    a ``resync`` event says some were missed (reload the messages through REST), and
    ``overflow`` that this client fell too far behind and should reconnect with ``after``.
    Text frames from the client are ignored (actions go through REST)."""

    auth_resource = "terax.ai"

    def initialize(self) -> None:
        self.subscription: Subscription | None = None
        self.pump: asyncio.Task[None] | None = None
        self.after: int | None = None

    @ws_authenticated
    async def get(self, session_id: str) -> None:
        await self.authorize_execute()
        try:
            await self.terax.ai.get_session(session_id)
        except NotFound as error:
            raise web.HTTPError(404, error.message) from None
        after = self.get_query_argument("after", "")
        if after and not after.isdigit():
            raise web.HTTPError(400, "'after' is an event number.")
        self.after = int(after) if after else None
        await super().get(session_id)

    def open(self, session_id: str) -> None:
        super().open()
        self.subscription = self.terax.ai.events.subscribe(session_id, after=self.after)
        self.pump = asyncio.ensure_future(self._pump(self.subscription))

    async def _pump(self, subscription: Subscription) -> None:
        while True:
            event = await subscription.next()
            if event is None:
                with contextlib.suppress(Exception):
                    self.close()
                return
            try:
                await self.write_message(json.dumps(event))
            except WebSocketClosedError:
                return

    def on_message(self, message: str | bytes) -> None:
        """Nothing to do: the stream is one-way."""

    def on_close(self) -> None:
        if self.subscription is not None:
            self.subscription.close()
        if self.pump is not None:
            self.pump.cancel()
