"""The OpenAPI document of the whole REST API, composed from each area's fragment."""

from __future__ import annotations

import copy
from typing import Any

from terax_jupyter._version import __version__
from terax_jupyter.apispec import ERRORS
from terax_jupyter.services.ai import openapi as ai_openapi
from terax_jupyter.services.browser import openapi as browser_openapi
from terax_jupyter.services.fs import openapi as fs_openapi
from terax_jupyter.services.git import history_openapi as git_history_openapi
from terax_jupyter.services.git import openapi as git_openapi
from terax_jupyter.services.meta import openapi as meta_openapi
from terax_jupyter.services.preview import openapi as preview_openapi
from terax_jupyter.services.pty import openapi as pty_openapi
from terax_jupyter.services.secrets import openapi as secrets_openapi
from terax_jupyter.services.workspace import openapi as workspace_openapi

FRAGMENTS = (
    fs_openapi,
    pty_openapi,
    git_openapi,
    git_history_openapi,
    workspace_openapi,
    secrets_openapi,
    ai_openapi,
    browser_openapi,
    preview_openapi,
    meta_openapi,
)

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
