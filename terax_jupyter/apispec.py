"""Helpers that keep each area's OpenAPI fragment short."""

from __future__ import annotations

from typing import Any

ERRORS = {
    "BadRequest": "The request is malformed (see 'reason').",
    "Forbidden": (
        "The security layer refused (deny-list, outside the workspace, read-only), or Jupyter "
        "did (authorization, an unknown Host)."
    ),
    "NotFound": "Nothing exists at that path.",
    "Conflict": (
        "The target exists, or changed since it was read, or a path changed while it was "
        "being used (reason 'path_changed': try again)."
    ),
    "TooLarge": "Over a size limit; the message names it.",
    "Unsupported": "Binary where text is needed, or an unknown encoding.",
    "Timeout": "The operation ran past its time limit.",
}


def errors(*names: str) -> dict[str, Any]:
    """Response entries for the named error kinds, for use in a fragment."""
    codes = {
        "BadRequest": "400",
        "Forbidden": "403",
        "NotFound": "404",
        "Conflict": "409",
        "TooLarge": "413",
        "Unsupported": "415",
        "Timeout": "504",
    }
    return {codes[name]: {"$ref": f"#/components/responses/{name}"} for name in names}


def query(
    name: str, schema: dict[str, Any], description: str, *, required: bool = False
) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "schema": schema,
        "description": description,
    }


def json_body(schema_name: str) -> dict[str, Any]:
    return {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{schema_name}"}}
        },
    }


def json_response(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}
