"""Cell operations on a notebook's JSON: hash checks, idempotence, ids and outputs kept."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from terax_jupyter.exceptions import Conflict, InvalidRequest
from terax_jupyter.notebook_view.cells import source_hash
from terax_jupyter.notebook_view.changes import STASH_KEY, Outcome, apply_ops, new_cell_id

OUTPUT = {"output_type": "stream", "name": "stdout", "text": ["42\n"]}


def _notebook() -> dict[str, Any]:
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"id": "a", "cell_type": "markdown", "metadata": {}, "source": ["# Title"]},
            {
                "id": "b",
                "cell_type": "code",
                "metadata": {},
                "source": ["x = 41\n", "print(x + 1)"],
                "execution_count": 3,
                "outputs": [OUTPUT],
            },
            {
                "id": "c",
                "cell_type": "code",
                "metadata": {},
                "source": "y = 2",
                "execution_count": None,
                "outputs": [],
            },
        ],
    }


def _hash(book: dict[str, Any], cell_id: str) -> str:
    cell = next(cell for cell in book["cells"] if cell["id"] == cell_id)
    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    return source_hash(source)[:12]


def _ids(book: dict[str, Any]) -> list[str]:
    return [cell.get("id") for cell in book["cells"]]


def test_a_batch_applies_in_order_and_leaves_the_input_alone():
    book = _notebook()
    before = copy.deepcopy(book)
    ops = [
        {"op": "insert", "id": "n1", "after": None, "cell_type": "code", "source": "import os"},
        {"op": "insert", "id": "n2", "after": "n1", "cell_type": "markdown", "source": "Hi"},
        {"op": "replace", "id": "c", "expected_hash": _hash(book, "c"), "source": "y = 3"},
        {"op": "move", "id": "a", "after": "c", "expected_hash": _hash(book, "a")},
        {"op": "delete", "id": "b", "expected_hash": _hash(book, "b")},
    ]
    result, outcome = apply_ops(book, ops)
    assert book == before
    assert _ids(result) == ["n1", "n2", "c", "a"]
    assert result["cells"][0] == {
        "id": "n1",
        "cell_type": "code",
        "metadata": {},
        "source": "import os",
        "execution_count": None,
        "outputs": [],
    }
    assert result["cells"][2]["source"] == "y = 3"
    assert outcome.applied == [0, 1, 2, 3, 4]
    assert not outcome.already


def test_a_stale_hash_refuses_the_whole_batch():
    book = _notebook()
    ops = [
        {"op": "replace", "id": "c", "expected_hash": _hash(book, "c"), "source": "y = 3"},
        {"op": "delete", "id": "b", "expected_hash": source_hash("x = 41")[:12]},
    ]
    with pytest.raises(Conflict) as caught:
        apply_ops(book, ops)
    assert caught.value.reason == "stale_cell"
    assert "Cell b changed since you read it" in str(caught.value)
    assert book == _notebook()


@pytest.mark.parametrize("expected", ["", "abc", "zzzzzzzzzzzz"])
def test_a_hash_too_short_or_not_hex_never_matches(expected):
    book = _notebook()
    with pytest.raises((Conflict, InvalidRequest)):
        apply_ops(book, [{"op": "delete", "id": "b", "expected_hash": expected}])


def test_a_missing_cell_or_anchor_is_a_conflict():
    book = _notebook()
    with pytest.raises(Conflict, match="no longer in the notebook"):
        apply_ops(book, [{"op": "replace", "id": "zz", "expected_hash": "0" * 12, "source": ""}])
    with pytest.raises(Conflict, match="to insert or move after"):
        apply_ops(
            book,
            [{"op": "insert", "id": "n", "after": "gone", "cell_type": "code", "source": ""}],
        )


def test_applying_twice_changes_nothing_the_second_time():
    book = _notebook()
    ops = [
        {"op": "insert", "id": "n1", "after": "a", "cell_type": "code", "source": "1"},
        {"op": "replace", "id": "b", "expected_hash": _hash(book, "b"), "source": "x = 1"},
        {"op": "move", "id": "c", "after": None, "expected_hash": _hash(book, "c")},
        {"op": "set_type", "id": "a", "expected_hash": _hash(book, "a"), "cell_type": "raw"},
        {"op": "clear_outputs", "id": "b", "expected_hash": _hash(book, "b")},
    ]
    # Every hash names the source the cell had before the batch, even after its replace.
    once, first = apply_ops(book, ops)
    twice, second = apply_ops(once, ops)
    assert first.applied == [0, 1, 2, 3, 4]
    assert twice == once
    assert second.already == [0, 1, 2, 3, 4]
    assert not second.changed
    delete = [{"op": "delete", "id": "c", "expected_hash": _hash(book, "c")}]
    gone, _ = apply_ops(once, delete)
    assert apply_ops(gone, delete) == (gone, Outcome(already=[0]))


def test_a_type_change_keeps_the_id_and_brings_outputs_back():
    book = _notebook()
    to_markdown = {
        "op": "set_type",
        "id": "b",
        "expected_hash": _hash(book, "b"),
        "cell_type": "markdown",
    }
    markdown, _ = apply_ops(book, [to_markdown])
    cell = markdown["cells"][1]
    assert cell["id"] == "b"
    assert cell["cell_type"] == "markdown"
    assert "outputs" not in cell
    assert "execution_count" not in cell
    assert cell["metadata"]["terax"][STASH_KEY] == {"outputs": [OUTPUT], "execution_count": 3}
    back, _ = apply_ops(markdown, [{**to_markdown, "cell_type": "code"}])
    assert back["cells"][1] == book["cells"][1]


def test_attachments_survive_a_round_trip_through_code():
    book = _notebook()
    book["cells"][0]["attachments"] = {"a.png": {"image/png": "iVBO"}}
    op = {"op": "set_type", "id": "a", "expected_hash": _hash(book, "a"), "cell_type": "code"}
    code, _ = apply_ops(book, [op])
    assert "attachments" not in code["cells"][0]
    back, _ = apply_ops(code, [{**op, "cell_type": "markdown"}])
    assert back["cells"][0]["attachments"] == {"a.png": {"image/png": "iVBO"}}
    assert "terax" not in back["cells"][0]["metadata"]


def test_an_older_notebook_gets_no_cell_ids():
    book = _notebook()
    book["nbformat_minor"] = 4
    result, _ = apply_ops(
        book, [{"op": "insert", "id": "n", "after": "c", "cell_type": "markdown", "source": "x"}]
    )
    assert "id" not in result["cells"][-1]


@pytest.mark.parametrize(
    "op",
    [
        {"op": "rename", "id": "a"},
        {"op": "insert", "id": "n", "after": None, "cell_type": "heading", "source": ""},
        {"op": "replace", "id": "b", "expected_hash": "0" * 12},
        {"op": "clear_outputs", "id": "a", "expected_hash": source_hash("# Title")[:12]},
        {"op": "move", "id": "b", "after": "b", "expected_hash": source_hash("x")[:12]},
    ],
)
def test_a_malformed_operation_is_refused(op):
    with pytest.raises(InvalidRequest):
        apply_ops(_notebook(), [op])


def test_new_cell_ids_are_valid_nbformat_ids():
    ids = {new_cell_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(len(cell_id) == 8 and cell_id.isalnum() for cell_id in ids)


def test_fallback_and_duplicate_ids_are_refused_not_taken_as_done():
    book = _notebook()
    with pytest.raises(InvalidRequest, match="fallback id") as caught:
        apply_ops(book, [{"op": "delete", "id": "~1:0badc0de", "expected_hash": "0" * 12}])
    assert caught.value.reason == "no_stable_ids"
    book["cells"][2]["id"] = "b"
    with pytest.raises(Conflict, match="2 cells share the id b"):
        apply_ops(book, [{"op": "delete", "id": "b", "expected_hash": _hash(book, "a")}])
