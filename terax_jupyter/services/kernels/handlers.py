"""The live-notebooks WebSocket: a Lab page says which notebooks it has open, and gets the
outputs of the agent's cell runs in them, to take into its notebook models."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from jupyter_server.auth.decorator import ws_authenticated
from tornado.websocket import WebSocketClosedError

from terax_jupyter.base import TeraxWebSocketHandler

AUTH_RESOURCE = "terax.kernels"
MAX_PATHS = 200
MAX_PATH_CHARS = 4096


class LiveNotebooksWebSocket(TeraxWebSocketHandler):
    """Protocol: the client sends ``{"type": "open", "paths": [...]}`` (the notebooks it has
    open, by API path, whenever that set changes); the server sends ``{"type": "cell", "run",
    "path", "cell_id", "status", "execution_count", "outputs", "executed_hash"}`` as a cell of
    a run in one of them runs and prints. While a page holds a notebook, the runs' outputs
    are its to put in the notebook; nothing is written to the file under it."""

    auth_resource = AUTH_RESOURCE

    def initialize(self) -> None:
        self.paths: set[str] = set()

    @ws_authenticated
    async def get(self) -> None:
        await self.authorize_execute()
        await super().get()

    def open(self) -> None:
        super().open()
        self.terax.kernels.listeners.add(self)

    def on_message(self, message: str | bytes) -> None:
        try:
            frame = json.loads(message)
        except ValueError:
            return
        paths = frame.get("paths") if isinstance(frame, dict) else None
        if frame.get("type") == "open" and isinstance(paths, list):
            self.paths = {
                path
                for path in paths[:MAX_PATHS]
                if isinstance(path, str) and 0 < len(path) <= MAX_PATH_CHARS
            }

    def send(self, event: dict[str, Any]) -> None:
        with contextlib.suppress(WebSocketClosedError):
            self.write_message(json.dumps(event))

    def on_close(self) -> None:
        self.terax.kernels.listeners.discard(self)


default_handlers = [(r"/terax/api/kernels/live", LiveNotebooksWebSocket)]
