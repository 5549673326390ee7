"""OpenAPI fragment of the live-notebooks WebSocket."""

from __future__ import annotations

from terax_jupyter.apispec import websocket_responses

SCHEMAS: dict[str, object] = {
    "LiveCellEvent": {
        "type": "object",
        "description": "A cell of an agent's run in a notebook the page has open.",
        "required": ["type", "run", "path", "cell_id", "status", "outputs", "executed_hash"],
        "properties": {
            "type": {"type": "string", "enum": ["cell"]},
            "run": {"type": "string"},
            "path": {"type": "string"},
            "cell_id": {"type": "string"},
            "status": {
                "type": "string",
                "enum": ["queued", "running", "ok", "error", "interrupted", "not_run"],
            },
            "execution_count": {"type": "integer", "nullable": True},
            "outputs": {"type": "array", "items": {"type": "object"}},
            "executed_hash": {"type": "string"},
        },
    },
}

PATHS = {
    "/terax/api/kernels/live": {
        "get": {
            "summary": "WebSocket: the outputs of the agent's cell runs in the notebooks this "
            "page has open.",
            "description": 'The page sends {"type": "open", "paths": [API paths]} whenever '
            "the notebooks it has open change; it receives LiveCellEvent frames for runs in "
            "them and puts their outputs in its notebook models.",
            "x-websocket": True,
            "responses": websocket_responses("BadRequest", "Forbidden"),
        },
    },
}
