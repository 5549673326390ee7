"""OpenAPI fragment of the server-facts API."""

from __future__ import annotations

from terax_jupyter.apispec import json_response

SCHEMAS = {
    "Info": {
        "type": "object",
        "properties": {
            "version": {"type": "string"},
            "server_root": {"type": "string"},
            "read_only": {"type": "boolean"},
            "search_engine": {"type": "string"},
            "grep_engine": {"type": "string"},
            "limits": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
    }
}

PATHS = {
    "/terax/api/info": {
        "get": {
            "summary": "Version, server root, read-only mode, search engines, limits.",
            "responses": {"200": json_response("Facts.", {"$ref": "#/components/schemas/Info"})},
        }
    },
    "/terax/api/openapi.json": {
        "get": {
            "summary": "This document.",
            "responses": {"200": json_response("OpenAPI 3.0.", {"type": "object"})},
        }
    },
}
