"""Check real traffic against the OpenAPI document's message schemas.

The document is OpenAPI 3.0, whose schemas are JSON Schema with ``nullable`` for null; this
turns them into JSON Schema (2020-12) and validates messages against a named component, so a
server test can check every frame it sees. A frame with a field its declaration lacks, or of
another type, fails the test that produced it.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonschema

from terax_jupyter.openapi import openapi_document


def _json_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {
        key: _json_schema(value)
        for key, value in node.items()
        if key not in ("nullable", "discriminator")
    }
    if node.get("nullable"):
        if "type" in converted and "enum" not in converted:
            converted["type"] = [converted["type"], "null"]
        else:
            converted = {"anyOf": [converted, {"type": "null"}]}
    return converted


@functools.cache
def _schemas() -> dict[str, Any]:
    schemas: dict[str, Any] = openapi_document()["components"]["schemas"]
    return schemas


@functools.cache
def _validator(component: str) -> jsonschema.protocols.Validator:
    schemas = _schemas()
    if component not in schemas:
        raise KeyError(f"the document has no schema {component!r}")
    schema = {
        "$ref": f"#/components/schemas/{component}",
        "components": {"schemas": _json_schema(schemas)},
    }
    return jsonschema.Draft202012Validator(schema)


def check_message(component: str, message: Any) -> None:
    """Raise ``AssertionError`` naming what in ``message`` does not fit ``component`` (for a
    tagged union, the member its tag names)."""
    target = component
    discriminator = _schemas().get(component, {}).get("discriminator")
    if discriminator is not None:
        tag = discriminator["propertyName"]
        value = message.get(tag) if isinstance(message, dict) else None
        member = discriminator["mapping"].get(value) if isinstance(value, str) else None
        if member is None:
            raise AssertionError(f"{component} has no message with {tag} {value!r}")
        target = member.rsplit("/", 1)[1]
    errors = list(_validator(target).iter_errors(message))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        where = "/".join(str(part) for part in best.absolute_path) or "(the message)"
        raise AssertionError(f"a message does not fit {target} at {where}: {best.message}")
