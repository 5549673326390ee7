"""Helpers that keep each area's OpenAPI fragment short."""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from typing_extensions import NotRequired, Required, get_type_hints, is_typeddict

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


def websocket_responses(*names: str) -> dict[str, Any]:
    """A WebSocket's responses: the handshake, the error kinds ``names``, and the 503 of a
    user who has every connection slot in use."""
    return {
        "101": {"description": "Switching protocols."},
        **errors(*names),
        "503": {
            "description": (
                "Refused, reason too_many_connections: the user has "
                "TeraxApp.max_websockets_per_user Terax WebSockets open already."
            ),
            "content": {"application/json": {"schema": ref("Error")}},
        },
    }


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


# -- schemas from TypedDicts ------------------------------------------------------------
# A message the server sends over a WebSocket is declared once, as a TypedDict its builders
# are type-checked against; its schema in the document (and so the generated TypeScript
# types, labextension/src/api/openapi.ts) is derived from it here.


@dataclass(frozen=True)
class Ref:
    """``Annotated[..., Ref("Name")]``: the field's schema is the component ``Name``."""

    name: str


@dataclass(frozen=True)
class Note:
    """``Annotated[..., Note("...")]``: the field's description in the document."""

    text: str


def typed_object(cls: type, *, tag: str = "type", frame: type | None = None) -> dict[str, Any]:
    """The schema of the TypedDict ``cls`` (plus the fields of ``frame``, a TypedDict of
    what every message gets on its way out). No other field is allowed: a field a builder
    adds without declaring it fails the tests that check real traffic against the schema."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for source in (cls, frame) if frame is not None else (cls,):
        hints = get_type_hints(source, include_extras=True)
        keys: frozenset[str] = source.__required_keys__  # type: ignore[attr-defined]
        for name, hint in hints.items():
            properties[name] = _field_schema(hint)
            # The wrapper decides when there is one: under ``from __future__ import
            # annotations`` a TypedDict's own required keys miss NotRequired.
            wrapper = get_origin(hint)
            if wrapper is Required or (name in keys and wrapper is not NotRequired):
                required.append(name)
    schema: dict[str, Any] = {"type": "object"}
    if required:  # OpenAPI 3.0 allows no empty list
        schema["required"] = required
    if cls.__doc__:
        schema["description"] = " ".join(cls.__doc__.split())
    schema["properties"] = properties
    schema["additionalProperties"] = False
    if tag in properties and "enum" not in properties[tag]:
        raise TypeError(f"{cls.__name__}.{tag} must be a Literal")
    return schema


def tagged_union(
    prefix: str,
    members: Sequence[type],
    *,
    tag: str = "type",
    frame: type | None = None,
    unframed: Sequence[type] = (),
) -> dict[str, dict[str, Any]]:
    """Component schemas ``<prefix><Member>`` for each TypedDict and ``<prefix>`` itself: a
    ``oneOf`` of them told apart by the literal value of ``tag``. ``frame``'s fields are added
    to each of ``members``, not to those of ``unframed``."""
    schemas: dict[str, dict[str, Any]] = {}
    mapping: dict[str, str] = {}
    every = [*members, *unframed]
    for member in every:
        schema = typed_object(member, tag=tag, frame=None if member in unframed else frame)
        name = prefix + member.__name__
        for value in schema["properties"][tag]["enum"]:
            if value in mapping:
                raise TypeError(f"{tag} {value!r} is declared twice in {prefix}")
            mapping[value] = f"#/components/schemas/{name}"
        schemas[name] = schema
    schemas[prefix] = {
        "oneOf": [ref(prefix + member.__name__) for member in every],
        "discriminator": {"propertyName": tag, "mapping": mapping},
    }
    return schemas


_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
}


def _is_optional(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)


def _field_schema(hint: Any) -> dict[str, Any]:
    origin = get_origin(hint)
    if origin in (NotRequired, Required):
        return _field_schema(get_args(hint)[0])
    if origin is Annotated:
        inner, *extras = get_args(hint)
        schema: dict[str, Any] = {}
        for extra in extras:
            if isinstance(extra, Ref):
                schema = ref(extra.name)
                if _is_optional(inner):
                    schema = {"allOf": [schema], "nullable": True}
        if not schema:
            schema = _field_schema(inner)
        for extra in extras:
            if isinstance(extra, Note):
                # OpenAPI 3.0 ignores siblings of $ref: a described reference is an allOf.
                schema = {"allOf": [schema]} if "$ref" in schema else dict(schema)
                schema["description"] = extra.text
        return schema
    if hint in _SCALARS:
        return dict(_SCALARS[hint])
    if hint is Any:
        return {}
    if origin is Literal:
        values = list(get_args(hint))
        kinds = {type(value) for value in values}
        if len(kinds) != 1 or next(iter(kinds)) not in _SCALARS:
            raise TypeError(f"a Literal of one scalar type, not {hint!r}")
        return {**_SCALARS[next(iter(kinds))], "enum": values}
    if origin in (Union, types.UnionType):
        options = [arg for arg in get_args(hint) if arg is not type(None)]
        if len(options) != 1:
            raise TypeError(f"only X | None unions are supported, not {hint!r}")
        inner_schema = _field_schema(options[0])
        if "$ref" in inner_schema:
            return {"allOf": [inner_schema], "nullable": True}
        return {**inner_schema, "nullable": True}
    if origin in (list, tuple, Sequence) or hint in (list, tuple):
        args = get_args(hint)
        return {"type": "array", "items": _field_schema(args[0]) if args else {}}
    if origin in (dict, Mapping) or hint is dict:
        args = get_args(hint)
        if args and args[0] is not str:
            raise TypeError(f"object keys are strings, not {args[0]!r}")
        value = _field_schema(args[1]) if args else {}
        return {"type": "object", "additionalProperties": value or True}
    if is_typeddict(hint):
        return typed_object(hint)
    raise TypeError(f"no schema for {hint!r}")
