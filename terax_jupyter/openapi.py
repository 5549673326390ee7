"""The OpenAPI document of the whole REST API, composed from each area's fragment."""

from __future__ import annotations

import copy
from typing import Any

from terax_jupyter._version import __version__
from terax_jupyter.apispec import ERRORS
from terax_jupyter.services import registry

# Each area's, in the registry's order (services/<area>/__init__.py names them).
FRAGMENTS = registry.openapi_fragments()

ERROR_SCHEMA = {
    "type": "object",
    "required": ["message", "reason"],
    "properties": {
        "message": {"type": "string", "description": "For a person; safe to show as is."},
        "reason": {"type": "string", "description": "A short stable code for programs."},
    },
}


def openapi_document(base_url: str = "/") -> dict[str, Any]:
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {"Error": ERROR_SCHEMA}
    for fragment in FRAGMENTS:
        paths.update(copy.deepcopy(fragment.PATHS))
        schemas.update(fragment.SCHEMAS)
    # Jupyter itself may refuse any request before a handler runs (authorization, a Host
    # header it does not serve), so every operation can answer 403.
    for operations in paths.values():
        for verb, operation in operations.items():
            if verb != "parameters":
                operation["responses"].setdefault(
                    "403", {"$ref": "#/components/responses/Forbidden"}
                )
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "Terax for Jupyter",
            "version": __version__,
            "description": (
                "Every path, command and URL passes the server's security layer. Errors are "
                "JSON objects with 'message' and 'reason'."
            ),
        },
        "servers": [{"url": base_url.rstrip("/") or "/"}],
        "security": [{"token": []}],
        "components": {
            "securitySchemes": {
                "token": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "Authorization",
                    "description": "'token <jupyter server token>'",
                }
            },
            "schemas": schemas,
            "responses": {
                status: {
                    "description": text,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                }
                for status, text in ERRORS.items()
            },
        },
        "paths": paths,
    }
