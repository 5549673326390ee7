"""OpenAPI fragment of the workspace-roots API."""

from __future__ import annotations

from terax_jupyter.apispec import errors, json_body, json_response, query, ref

SCHEMAS = {
    "Roots": {
        "type": "object",
        "properties": {
            "roots": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "kind": {"type": "string", "enum": ["server", "admin", "user"]},
                        "added_by": {"type": "string", "nullable": True},
                        "added_at": {"type": "string", "nullable": True},
                    },
                },
            },
            "allow_user_roots": {"type": "boolean"},
        },
    },
    "RootRequest": {
        "type": "object",
        "required": ["path"],
        "properties": {"path": {"type": "string"}},
    },
}

PATHS = {
    "/terax/api/workspace/roots": {
        "get": {
            "summary": "The workspace roots: server root, admin roots, user roots.",
            "responses": {"200": json_response("Roots.", ref("Roots"))},
        },
        "post": {
            "summary": "Add a folder as a workspace root (recorded in the audit log).",
            "requestBody": json_body("RootRequest"),
            "responses": {
                "201": json_response("Added.", ref("Roots")),
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict"),
            },
        },
        "delete": {
            "summary": "Remove a root a user added (recorded in the audit log).",
            "parameters": [query("path", {"type": "string"}, "The root to remove.", required=True)],
            "responses": {
                "200": json_response("Removed.", ref("Roots")),
                **errors("BadRequest", "Forbidden", "NotFound"),
            },
        },
    }
}
