"""OpenAPI fragment of the terminal API."""

from __future__ import annotations

from terax_jupyter.apispec import (
    errors,
    json_body,
    json_response,
    query,
    ref,
    tagged_union,
    typed_object,
)
from terax_jupyter.services.pty import wire

_SESSION = {
    "name": "session_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[0-9a-f]{12}$"},
    "description": "The session id.",
}
_FORMAT = query(
    "format",
    {"type": "string", "enum": ["plain", "rendered"]},
    "plain: escapes stripped; rendered: as a terminal of the session's width shows it.",
)

SCHEMAS = {
    "Block": typed_object(wire.BlockRecord),
    "TerminalSession": typed_object(wire.SessionRecord),
    "CreateTerminal": {
        "type": "object",
        "properties": {
            "cwd": {"type": "string", "description": "A folder in a workspace root."},
            "shell": {"type": "string", "description": "bash, zsh, fish, ... (installed ones)."},
            "name": {"type": "string"},
            "columns": {"type": "integer", "minimum": 2, "maximum": 1000},
            "rows": {"type": "integer", "minimum": 1, "maximum": 500},
        },
    },
    "RenameTerminal": {
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string", "maxLength": 100}},
    },
    "RunCommand": {
        "type": "object",
        "required": ["command"],
        "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "number", "minimum": 0, "maximum": 3600, "default": 60},
        },
    },
    "BlockText": {
        "type": "object",
        "properties": {
            "block": ref("Block"),
            "text": {"type": "string"},
            "truncated": {"type": "boolean", "description": "The start left the scrollback."},
            "format": {"type": "string"},
        },
    },
}
# The stream WebSocket's JSON text frames, from their declarations (wire.py).
SCHEMAS.update(tagged_union("PtyServerMessage", wire.SERVER_MESSAGES))
SCHEMAS.update(tagged_union("PtyClientMessage", wire.CLIENT_MESSAGES))
# The two shapes of a ``server`` message (its event tells them apart).
SCHEMAS["PtyServerDetected"] = typed_object(wire.ServerDetected)
SCHEMAS["PtyServerGone"] = typed_object(wire.ServerGone)
SCHEMAS["PtyServerMessage"]["description"] = "A JSON text frame of the stream, from the server."
SCHEMAS["PtyClientMessage"]["description"] = "A JSON text frame of the stream, from a client."

PATHS = {
    "/terax/api/pty/sessions": {
        "get": {
            "summary": "The open terminal sessions.",
            "responses": {
                "200": json_response(
                    "Sessions, oldest first.",
                    {
                        "type": "object",
                        "properties": {
                            "sessions": {"type": "array", "items": ref("TerminalSession")}
                        },
                    },
                )
            },
        },
        "post": {
            "summary": "Start a shell on a PTY in a workspace folder.",
            "requestBody": json_body("CreateTerminal"),
            "responses": {
                "201": json_response("Started.", ref("TerminalSession")),
                **errors("BadRequest", "Forbidden", "NotFound", "TooLarge"),
            },
        },
    },
    "/terax/api/pty/sessions/{session_id}": {
        "parameters": [_SESSION],
        "get": {
            "summary": "One session.",
            "responses": {
                "200": json_response("The session.", ref("TerminalSession")),
                **errors("NotFound"),
            },
        },
        "patch": {
            "summary": "Rename a session.",
            "requestBody": json_body("RenameTerminal"),
            "responses": {
                "200": json_response("Renamed.", ref("TerminalSession")),
                **errors("BadRequest", "NotFound"),
            },
        },
        "delete": {
            "summary": "Close a session: its whole process group gets SIGHUP, then SIGKILL.",
            "responses": {"204": {"description": "Closed."}, **errors("NotFound")},
        },
    },
    "/terax/api/pty/sessions/{session_id}/blocks": {
        "parameters": [_SESSION],
        "get": {
            "summary": "The command blocks of a session (needs shell integration).",
            "responses": {
                "200": json_response(
                    "Blocks, oldest first.",
                    {
                        "type": "object",
                        "properties": {"blocks": {"type": "array", "items": ref("Block")}},
                    },
                ),
                **errors("NotFound"),
            },
        },
    },
    "/terax/api/pty/sessions/{session_id}/blocks/{block_id}": {
        "parameters": [
            _SESSION,
            {
                "name": "block_id",
                "in": "path",
                "required": True,
                "schema": {"type": "integer", "minimum": 0, "maximum": 999999999},
            },
        ],
        "get": {
            "summary": "The output of one command block as text.",
            "parameters": [_FORMAT],
            "responses": {
                "200": json_response("The block and its text.", ref("BlockText")),
                **errors("BadRequest", "NotFound"),
            },
        },
    },
    "/terax/api/pty/sessions/{session_id}/lines": {
        "parameters": [_SESSION],
        "get": {
            "summary": "The last lines of a session's output as text.",
            "parameters": [
                query("count", {"type": "integer", "minimum": 1, "maximum": 10000}, "Lines."),
                _FORMAT,
            ],
            "responses": {
                "200": json_response(
                    "Text.",
                    {
                        "type": "object",
                        "properties": {"text": {"type": "string"}, "count": {"type": "integer"}},
                    },
                ),
                **errors("BadRequest", "NotFound"),
            },
        },
    },
    "/terax/api/pty/sessions/{session_id}/run": {
        "parameters": [_SESSION],
        "post": {
            "summary": "Type a command at the prompt and wait for it to finish.",
            "description": (
                "A line the shell cannot run is answered at once with 400: reason "
                "`syntax_error` (with the shell's message) or `incomplete` (an unclosed "
                "quote or block; the line editor is cleared). Text left in the line editor "
                "is interrupted away before the command is typed."
            ),
            "requestBody": json_body("RunCommand"),
            "responses": {
                "200": json_response("The finished block and its output.", ref("BlockText")),
                **errors("BadRequest", "NotFound", "Conflict", "Timeout"),
            },
        },
    },
    "/terax/api/pty/history": {
        "get": {
            "summary": "Command suggestions: prefix matches (newest first), then fuzzy ones.",
            "parameters": [
                query("q", {"type": "string"}, "What has been typed."),
                query("limit", {"type": "integer", "minimum": 1, "maximum": 200}, "Most."),
            ],
            "responses": {
                "200": json_response(
                    "Suggestions.",
                    {
                        "type": "object",
                        "properties": {
                            "query": {"type": "string"},
                            "suggestions": {"type": "array", "items": {"type": "object"}},
                        },
                    },
                ),
                **errors("BadRequest"),
            },
        }
    },
    "/terax/api/pty/shells": {
        "get": {
            "summary": "Installed shells and the default one.",
            "responses": {
                "200": json_response(
                    "Shells.",
                    {
                        "type": "object",
                        "properties": {
                            "shells": {"type": "array", "items": {"type": "string"}},
                            "default": {"type": "string", "nullable": True},
                        },
                    },
                )
            },
        }
    },
    "/terax/api/pty/{session_id}/stream": {
        "parameters": [_SESSION],
        "get": {
            "summary": "WebSocket: terminal output and input as binary frames, control as JSON.",
            "description": (
                "Binary frames carry raw terminal bytes both ways (the scrollback replay "
                "first, in chunks, then a replayed message). Text frames carry JSON: "
                "PtyClientMessage from the client, PtyServerMessage from the server. Query: "
                "columns, "
                "rows, and acks=1 (the client acknowledges the output bytes it has shown, "
                '{"type": "ack", "bytes": n}, and its unacknowledged bytes pace '
                "the program)."
            ),
            "x-websocket": True,
            "responses": {
                "101": {"description": "Switching protocols."},
                **errors("Forbidden", "NotFound"),
                "503": {
                    "description": (
                        "Refused, reason too_many_connections: the terminal has "
                        "PtyManager.max_clients_per_session views already, or the user "
                        "TeraxApp.max_websockets_per_user Terax WebSockets. A plain GET of "
                        "this address answers the same (browsers hide a handshake's answer)."
                    ),
                    "content": {"application/json": {"schema": ref("Error")}},
                },
            },
        },
    },
}
