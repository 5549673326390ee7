"""OpenAPI fragment of the keys API."""

from __future__ import annotations

from terax_jupyter.apispec import errors, json_body, json_response, ref

_NAME = {
    "name": "name",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
    "description": "The key's name: 1 to 64 of A-Z a-z 0-9 _ . - (OPENAI_API_KEY, ...).",
}
_UNAVAILABLE = {
    "503": {
        "description": "The key store cannot be used (no keychain, an insecure or broken file).",
        "content": {"application/json": {"schema": ref("Error")}},
    }
}

SCHEMAS = {
    "SecretEntry": {
        "type": "object",
        "description": "Whether a key is set and where it comes from; never its value.",
        "required": ["name", "set", "source", "read_only", "provider", "overrides"],
        "properties": {
            "name": {"type": "string"},
            "set": {"type": "boolean"},
            "source": {
                "type": "string",
                "nullable": True,
                "enum": ["keyring", "file", "config", "admin_file", "environment", None],
                "description": "Where the value in use comes from (null when not set).",
            },
            "read_only": {
                "type": "boolean",
                "description": (
                    "Set by the administrator (config, the key file) or the environment."
                ),
            },
            "provider": {"type": "string", "nullable": True},
            "overrides": {
                "type": "array",
                "items": {"type": "string", "enum": ["config", "admin_file", "environment"]},
                "description": "Read-only sources that also set it; the user's key wins.",
            },
        },
    },
    "Secrets": {
        "type": "object",
        "required": ["keys", "store"],
        "properties": {
            "keys": {"type": "array", "items": ref("SecretEntry")},
            "store": {
                "type": "object",
                "description": "Where keys users set are kept.",
                "properties": {
                    "kind": {"type": "string", "nullable": True, "enum": ["keyring", "file", None]},
                    "path": {"type": "string"},
                    "backend": {"type": "string"},
                    "problem": {
                        "type": "string",
                        "nullable": True,
                        "description": "Why the store cannot be used now (then no user keys).",
                    },
                },
            },
        },
    },
    "SecretValue": {
        "type": "object",
        "required": ["value"],
        "properties": {
            "value": {
                "type": "string",
                "description": "The key: no control characters or surrounding spaces, <= 8 KiB.",
            }
        },
    },
}

PATHS = {
    "/terax/api/secrets": {
        "get": {
            "summary": "Which keys are set and where each comes from (never a value).",
            "responses": {"200": json_response("The keys.", ref("Secrets"))},
        },
    },
    "/terax/api/secrets/{name}": {
        "parameters": [_NAME],
        "put": {
            "summary": "Set the user's own key (takes precedence over config and environment).",
            "requestBody": json_body("SecretValue"),
            "responses": {
                "200": json_response(
                    "Set; the key's entry, without its value.", ref("SecretEntry")
                ),
                **errors("BadRequest", "TooLarge"),
                **_UNAVAILABLE,
            },
        },
        "delete": {
            "summary": "Delete the user's own key (config and environment keys are read-only).",
            "responses": {
                "200": json_response("Deleted; the key's entry now.", ref("SecretEntry")),
                **errors("BadRequest", "NotFound", "Conflict"),
                **_UNAVAILABLE,
            },
        },
    },
}
