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
    },
    "Policy": {
        "type": "object",
        "description": "The administrator's policy: each setting with whether it is locked.",
        "required": ["sources", "error", "read_only", "features", "ai", "limits", "locked"],
        "properties": {
            "sources": {"type": "array", "items": {"type": "string"}},
            "error": {"type": "string", "nullable": True},
            "read_only": {
                "type": "object",
                "properties": {"value": {"type": "boolean"}, "locked": {"type": "boolean"}},
            },
            "features": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "properties": {
                        "enabled": {"type": "boolean"},
                        "locked": {"type": "boolean"},
                    },
                },
            },
            "ai": {"type": "object"},
            "limits": {"type": "object", "additionalProperties": {"type": "number"}},
            "audit_log": {"type": "string", "nullable": True},
            "locked": {"type": "array", "items": {"type": "string"}},
        },
    },
}

PATHS = {
    "/terax/api/info": {
        "get": {
            "summary": "Version, server root, read-only mode, search engines, limits.",
            "responses": {"200": json_response("Facts.", {"$ref": "#/components/schemas/Info"})},
        }
    },
    "/terax/api/policy": {
        "get": {
            "summary": "The administrator's policy: switches, models, limits, what is locked.",
            "responses": {
                "200": json_response("The policy.", {"$ref": "#/components/schemas/Policy"})
            },
        }
    },
    "/terax/api/openapi.json": {
        "get": {
            "summary": "This document.",
            "responses": {"200": json_response("OpenAPI 3.0.", {"type": "object"})},
        }
    },
}
