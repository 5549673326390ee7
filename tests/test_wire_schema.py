"""The wire declared once: TypedDicts -> the document's schemas -> the checks tests run.

``apispec.typed_object`` / ``tagged_union`` derive a schema from a declaration; the document
publishes the agent's events and the terminal's frames that way, and ``testing.wire`` checks
real traffic against it (every test does, through tests/conftest.py).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from typing_extensions import NotRequired, TypedDict

from terax_jupyter.apispec import Note, Ref, tagged_union, typed_object
from terax_jupyter.openapi import openapi_document
from terax_jupyter.services.ai import wire as ai_wire
from terax_jupyter.services.pty import wire as pty_wire
from terax_jupyter.testing.wire import check_message


class Inner(TypedDict):
    flag: bool


class Sample(TypedDict):
    """A sample message."""

    type: Literal["sample"]
    name: str
    count: int
    ratio: float | None
    tags: list[str]
    extra: dict[str, Any]
    inner: Inner
    rule: Annotated[dict[str, str] | None, Ref("AiRule")]
    described: Annotated[int, Note("Seconds.")]
    maybe: NotRequired[str]


class Other(TypedDict):
    type: Literal["other"]


def test_a_declaration_becomes_a_closed_object_schema() -> None:
    schema = typed_object(Sample)
    assert schema["description"] == "A sample message."
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == set(Sample.__annotations__) - {"maybe"}
    fields = schema["properties"]
    assert fields["type"] == {"type": "string", "enum": ["sample"]}
    assert fields["ratio"] == {"type": "number", "nullable": True}
    assert fields["tags"] == {"type": "array", "items": {"type": "string"}}
    assert fields["extra"] == {"type": "object", "additionalProperties": True}
    assert fields["inner"]["properties"] == {"flag": {"type": "boolean"}}
    assert fields["rule"] == {"allOf": [{"$ref": "#/components/schemas/AiRule"}], "nullable": True}
    assert fields["described"] == {"type": "integer", "description": "Seconds."}


def test_a_union_is_told_apart_by_its_tag_and_frames_only_its_members() -> None:
    class Frame(TypedDict):
        seq: int

    schemas = tagged_union("Msg", [Sample], frame=Frame, unframed=[Other])
    assert schemas["Msg"]["discriminator"] == {
        "propertyName": "type",
        "mapping": {
            "sample": "#/components/schemas/MsgSample",
            "other": "#/components/schemas/MsgOther",
        },
    }
    assert "seq" in schemas["MsgSample"]["required"]
    assert "seq" not in schemas["MsgOther"]["properties"]


def test_what_no_schema_can_say_is_refused() -> None:
    class Untagged(TypedDict):
        type: str

    class Twice(TypedDict):
        type: Literal["sample"]

    class Either(TypedDict):
        value: int | str

    class IntKeys(TypedDict):
        table: dict[int, str]

    with pytest.raises(TypeError, match="must be a Literal"):
        typed_object(Untagged)
    with pytest.raises(TypeError, match="declared twice"):
        tagged_union("Msg", [Sample, Twice])
    with pytest.raises(TypeError, match=r"only X \| None unions"):
        typed_object(Either)
    with pytest.raises(TypeError, match="keys are strings"):
        typed_object(IntKeys)


@pytest.mark.parametrize(
    ("union", "classes"),
    [
        ("AiEvent", ai_wire.RUN_EVENTS + ai_wire.HUB_EVENTS),
        ("PtyServerMessage", pty_wire.SERVER_MESSAGES),
        ("PtyClientMessage", pty_wire.CLIENT_MESSAGES),
    ],
)
def test_the_document_publishes_every_declared_message(union: str, classes: tuple) -> None:
    schemas = openapi_document()["components"]["schemas"]
    mapping = schemas[union]["discriminator"]["mapping"]
    published = {ref.rsplit("/", 1)[1] for ref in mapping.values()}
    assert published == {union + cls.__name__ for cls in classes}
    assert len(schemas[union]["oneOf"]) == len(classes)


def test_terminal_frames_off_their_declaration_fail_the_check() -> None:
    check_message("PtyServerMessage", {"type": "size", "columns": 80, "rows": 24})
    check_message(
        "PtyServerMessage", {"type": "agent", "agent": "claude", "state": "exited", "exit_code": 0}
    )
    check_message("PtyServerMessage", {"type": "server", "event": "gone", "port": 5173})
    for message, fault in [
        ({"type": "agent", "agent": "claude", "state": "asleep"}, "'asleep' is not one of"),
        ({"type": "attached", "session": {}}, "'nonce' is a required property"),
        ({"type": "size", "columns": "80", "rows": 24}, "'80' is not of type 'integer'"),
        ({"type": "exit", "code": 0, "signal": 9}, "'signal' was unexpected"),
    ]:
        with pytest.raises(AssertionError, match=fault):
            check_message("PtyServerMessage", message)
    check_message("PtyClientMessage", {"type": "signal", "name": "INT"})
    with pytest.raises(AssertionError, match="'KILL' is not one of"):
        check_message("PtyClientMessage", {"type": "signal", "name": "KILL"})
