"""OpenAPI fragment of the web preview: the servers list and the proxy routes."""

from __future__ import annotations

from typing import Any

from terax_jupyter.apispec import errors, json_response, query, ref

_PORT = {
    "name": "port",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^([0-9]{1,5}|localhost:[0-9]{1,5})$"},
    "description": (
        "A port (1024-65535) of this machine's loopback, or '<loopback host>:<port>' with "
        "localhost, a 127.x.y.z address or [::1]. Other hosts are refused (403), never resolved."
    ),
}
_PATH = {
    "name": "path",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
    "description": "The path on the previewed server (the rest of the URL, query included).",
}


def _proxy_error(description: str) -> dict[str, Any]:
    """An error of the proxy: JSON, or a small HTML page for a browser navigation."""
    return {
        "description": description,
        "content": {
            "application/json": {"schema": ref("Error")},
            "text/html": {"schema": {"type": "string"}},
        },
    }


_PROXY_ERRORS = {
    "400": _proxy_error("Not a port (reason invalid_port)."),
    "403": _proxy_error(
        "Refused: not loopback (not_loopback), a port below 1024 (privileged_port), this "
        "server's own port (own_port), a port the administrator denied (port_denied), or a "
        "cross-site write."
    ),
    "413": _proxy_error("The request body is over PreviewManager.max_body_bytes."),
    "502": _proxy_error(
        "Nothing listens on the port (nothing_listening), or the server failed to answer."
    ),
    "504": _proxy_error("The server accepted the connection but did not answer in time."),
}


def _proxied(summary: str) -> dict[str, Any]:
    return {
        "summary": summary,
        "x-proxy": True,
        "responses": {
            "200": {
                "description": (
                    "Whatever the previewed server answers: any status, its headers (hop-by-hop "
                    "ones dropped, redirects and cookie paths kept under the proxy prefix) and "
                    "its body, streamed."
                )
            },
            **_PROXY_ERRORS,
        },
    }


SCHEMAS = {
    "DetectedServer": {
        "type": "object",
        "properties": {
            "port": {"type": "integer"},
            "url": {"type": "string", "description": "As printed (or made up for a port)."},
            "proxy_path": {
                "type": "string",
                "description": "Where the proxy serves it, with the server's base URL.",
            },
            "session_id": {"type": "string"},
            "session_name": {"type": "string"},
            "pid": {"type": "integer", "nullable": True},
            "process": {"type": "string", "nullable": True},
            "first_seen": {"type": "number", "description": "Seconds since the epoch."},
            "sources": {
                "type": "array",
                "items": {"type": "string", "enum": ["output", "listening"]},
            },
            "listening": {
                "type": "boolean",
                "nullable": True,
                "description": "Seen listening by a process of the session (null: not seen).",
            },
        },
    },
}

_VERBS = ("get", "head", "post", "put", "patch", "delete", "options")

PATHS = {
    "/terax/api/preview/servers": {
        "get": {
            "summary": "Dev servers the terminal sessions started (printed URLs, listening ports).",
            "parameters": [
                query("session", {"type": "string"}, "Only this terminal session's servers.")
            ],
            "responses": {
                "200": json_response(
                    "Servers, first seen first.",
                    {
                        "type": "object",
                        "properties": {
                            "servers": {"type": "array", "items": ref("DetectedServer")}
                        },
                    },
                ),
                **errors("NotFound"),
            },
        }
    },
    "/terax/proxy/{port}/{path}": {
        "parameters": [_PORT, _PATH],
        **{
            verb: _proxied(
                "Proxy to a server on this machine's loopback"
                + (" (a WebSocket upgrade too: hot reload)." if verb == "get" else ".")
            )
            for verb in _VERBS
        },
    },
}
