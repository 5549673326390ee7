"""OpenAPI fragment of the web preview: the servers list and the proxy routes."""

from __future__ import annotations

from typing import Any

from terax_jupyter.apispec import errors, json_body, json_response, query, ref

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
_CAPABILITY = {
    "name": "capability",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
    "description": (
        "The preview capability (POST /terax/api/preview/capabilities): the only credential "
        "of a previewed page, which runs sandboxed and sends no cookies."
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
        "server's own port (own_port), a port the administrator denied (port_denied), a port "
        "another account's process serves (not_own_port), a navigation another site started "
        "(cross_site_preview), a browser request without its capability "
        "(preview_capability_required), or an expired or wrong capability (preview_expired, "
        "preview_capability_mismatch)."
    ),
    "413": _proxy_error("The request body is over PreviewManager.max_body_bytes."),
    "502": _proxy_error(
        "Nothing listens on the port (nothing_listening), or the server failed to answer."
    ),
    "503": _proxy_error(
        "A WebSocket upgrade past the user's connections (too_many_connections): the message "
        "names TeraxApp.max_websockets_per_user."
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
    "PreviewCapabilityRequest": {
        "type": "object",
        "required": ["target"],
        "properties": {
            "target": {
                "type": "string",
                "description": "A port, or '<loopback host>:<port>', as in the proxy's path.",
            }
        },
    },
    "PreviewCapability": {
        "type": "object",
        "properties": {
            "target": {"type": "string"},
            "prefix": {
                "type": "string",
                "nullable": True,
                "description": (
                    "Where the page is served (base URL included, trailing slash): the base to "
                    "give a dev server that writes root-absolute URLs (vite --base). Null for a "
                    "capability from before a restart that no page has used since."
                ),
            },
            "issued": {"type": "number", "description": "Seconds since the epoch."},
            "expires": {
                "type": "number",
                "description": "When it ends unless used again (each request extends it).",
            },
            "navigation": {
                "type": "object",
                "nullable": True,
                "description": "The last page a frame loaded with it (GET only).",
                "properties": {
                    "path": {"type": "string"},
                    "status": {"type": "integer"},
                    "count": {"type": "integer"},
                    "error": {"type": "object", "nullable": True},
                },
            },
        },
    },
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
    "/terax/api/preview/capabilities": {
        "post": {
            "summary": "The preview address for a target (issued, or the live one).",
            "description": "Needs execute on terax.preview, as the proxy does.",
            "requestBody": json_body("PreviewCapabilityRequest"),
            "responses": {
                "200": json_response("The capability.", ref("PreviewCapability")),
                **errors("BadRequest", "Forbidden"),
            },
        },
        "get": {
            "summary": "The live preview address for a target and the last page it loaded.",
            "parameters": [query("target", {"type": "string"}, "A port.", required=True)],
            "responses": {
                "200": json_response("The capability.", ref("PreviewCapability")),
                **errors("BadRequest", "Forbidden", "NotFound"),
            },
        },
        "delete": {
            "summary": "Revoke every preview address of this server.",
            "responses": {
                "200": json_response(
                    "How many were revoked.",
                    {"type": "object", "properties": {"revoked": {"type": "integer"}}},
                ),
            },
        },
    },
    "/terax/proxy/{port}~{capability}/{path}": {
        "parameters": [_PORT, _CAPABILITY, _PATH],
        **{
            verb: _proxied(
                "What a previewed page loads: proxied with its capability as the credential"
                + (" (a WebSocket upgrade too: hot reload)." if verb == "get" else ".")
            )
            for verb in _VERBS
        },
    },
    "/terax/proxy/{port}/{path}": {
        "parameters": [_PORT, _PATH],
        **{
            verb: _proxied(
                "Proxy to a server on this machine's loopback, for a token; a browser's own "
                "navigation is redirected to its capability address"
                + (" (a WebSocket upgrade too: hot reload)." if verb == "get" else ".")
            )
            for verb in _VERBS
        },
    },
}
