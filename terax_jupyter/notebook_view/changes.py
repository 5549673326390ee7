"""Cell operations on a notebook's JSON, checked against the sources the model saw.

The edit tools resolve what the model asked for (a find-and-replace, the hunks a person
accepted) into these operations; here they are applied to the raw notebook, in order:
insert, replace (the whole new source), delete, move, set_type and clear_outputs. Every
operation on an existing cell carries the hash of the source it expects (a prefix of the
SHA-256, as ``notebook_outline`` shows it): a stale one refuses the whole batch, so a cell
the user changed meanwhile is never overwritten. Applying is idempotent: an operation whose
result is already there (the change was made in the notebook open in Lab and saved) is
counted as done and changes nothing. Ids and outputs survive a type change: outputs a
markdown or raw cell cannot hold (and attachments a code cell cannot) are kept in its
metadata and come back when it turns back.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from nbformat.corpus.words import generate_corpus_id

from terax_jupyter.exceptions import Conflict, InvalidRequest
from terax_jupyter.notebook_view.cells import source_hash
from terax_jupyter.notebook_view.render import joined

CELL_TYPES = ("code", "markdown", "raw")
OPS = ("insert", "replace", "delete", "move", "set_type", "clear_outputs")
MIN_HASH_CHARS = 8
FALLBACK_PREFIX = "~"  # notebook_outline's ids for cells without a stable one
STASH_KEY = "stashed_outputs"  # under the cell's metadata "terax"
ATTACHMENTS_KEY = "stashed_attachments"


@dataclass
class Outcome:
    """What became of a batch: operations made now, and those already in the notebook."""

    applied: list[int] = field(default_factory=list)
    already: list[int] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def new_cell_id() -> str:
    """A fresh nbformat 4.5 cell id, made by nbformat itself."""
    return generate_corpus_id()


def hash_matches(source: str, expected: str) -> bool:
    expected = expected.lower()
    return len(expected) >= MIN_HASH_CHARS and source_hash(source).startswith(expected)


def apply_ops(raw: dict[str, Any], ops: list[dict[str, Any]]) -> tuple[dict[str, Any], Outcome]:
    """``raw`` with ``ops`` applied (a copy; ``raw`` is not changed), and what was done.

    Raises ``Conflict`` (nothing applied) when a cell is missing or its source is not the
    expected one, and ``InvalidRequest`` for a malformed operation.
    """
    book = copy.deepcopy(raw)
    cells = book.get("cells")
    if not isinstance(cells, list):
        raise InvalidRequest("The notebook has no list of cells.", reason="invalid_notebook")
    outcome = Outcome()
    for index, op in enumerate(ops):
        done = _apply(cells, op, book.get("nbformat_minor"))
        (outcome.applied if done else outcome.already).append(index)
    return book, outcome


def _apply(cells: list[dict[str, Any]], op: dict[str, Any], minor: Any) -> bool:
    kind = op.get("op")
    if kind not in OPS:
        raise InvalidRequest(f"Unknown notebook operation {kind!r}.", reason="invalid_argument")
    if kind == "insert":
        return _insert(cells, op, minor)
    position = _find(cells, _text(op, "id"))
    if kind == "delete":
        if position is None:
            return False
        _expect(cells[position], op)
        del cells[position]
        return True
    if position is None:
        raise Conflict(
            f"Cell {op['id']} is no longer in the notebook; take fresh ids from notebook_outline.",
            reason="cell_missing",
        )
    cell = cells[position]
    if kind == "replace":
        source = _text(op, "source", empty_ok=True)
        if joined(cell.get("source")) == source:
            return False
        _expect(cell, op)
        cell["source"] = source
        return True
    if kind == "move":
        return _move(cells, position, op)
    _expect(cell, op)
    if kind == "set_type":
        return _set_type(cell, _cell_type(op))
    return _clear_outputs(cell)


def _insert(cells: list[dict[str, Any]], op: dict[str, Any], minor: Any) -> bool:
    cell_id = _text(op, "id")
    if _find(cells, cell_id) is not None:
        return False
    anchor = _anchor(cells, op)
    cell_type = _cell_type(op)
    cell: dict[str, Any] = {
        "cell_type": cell_type,
        "metadata": {},
        "source": _text(op, "source", empty_ok=True),
    }
    if isinstance(minor, int) and minor >= 5:
        cell["id"] = cell_id
    if cell_type == "code":
        cell.update(execution_count=None, outputs=[])
    cells.insert(anchor + 1, cell)
    return True


def _move(cells: list[dict[str, Any]], position: int, op: dict[str, Any]) -> bool:
    anchor = _anchor(cells, op)
    if anchor == position:
        raise InvalidRequest("A cell cannot move after itself.", reason="invalid_argument")
    if anchor == position - 1:
        return False
    _expect(cells[position], op)
    cell = cells.pop(position)
    cells.insert(anchor + (0 if anchor > position else 1), cell)
    return True


def _set_type(cell: dict[str, Any], cell_type: str) -> bool:
    if cell.get("cell_type") == cell_type:
        return False
    terax = cell.setdefault("metadata", {}).setdefault("terax", {})
    if cell.get("cell_type") == "code":
        outputs, count = cell.pop("outputs", []), cell.pop("execution_count", None)
        if outputs or count is not None:
            terax[STASH_KEY] = {"outputs": outputs, "execution_count": count}
    elif cell_type == "code":
        attachments = cell.pop("attachments", None)
        if attachments:
            terax[ATTACHMENTS_KEY] = attachments
    cell["cell_type"] = cell_type
    if cell_type == "code":
        stashed = terax.pop(STASH_KEY, None) or {}
        cell["outputs"] = stashed.get("outputs", [])
        cell["execution_count"] = stashed.get("execution_count")
    elif ATTACHMENTS_KEY in terax:
        cell["attachments"] = terax.pop(ATTACHMENTS_KEY)
    if not terax:
        del cell["metadata"]["terax"]
    return True


def _clear_outputs(cell: dict[str, Any]) -> bool:
    if cell.get("cell_type") != "code":
        raise InvalidRequest(
            f"Cell {cell.get('id')} is a {cell.get('cell_type')} cell: it has no outputs.",
            reason="invalid_argument",
        )
    if not cell.get("outputs") and cell.get("execution_count") is None:
        return False
    cell["outputs"], cell["execution_count"] = [], None
    return True


def _expect(cell: dict[str, Any], op: dict[str, Any]) -> None:
    expected = _text(op, "expected_hash")
    source = joined(cell.get("source"))
    if not hash_matches(source, expected):
        raise Conflict(
            f"Cell {op['id']} changed since you read it (its source hash is now "
            f"{source_hash(source)[:12]}, not {expected}); nothing was changed. Read it "
            "again with notebook_read.",
            reason="stale_cell",
        )


def _anchor(cells: list[dict[str, Any]], op: dict[str, Any]) -> int:
    """The position the cell goes after: -1 for the top of the notebook."""
    after = op.get("after")
    if after is None:
        return -1
    position = _find(cells, _text(op, "after"))
    if position is None:
        raise Conflict(
            f"Cell {after} (the cell to insert or move after) is no longer in the notebook.",
            reason="cell_missing",
        )
    return position


def _find(cells: list[dict[str, Any]], cell_id: str) -> int | None:
    """The position of the one cell with ``cell_id``, or None when there is none."""
    if cell_id.startswith(FALLBACK_PREFIX):
        raise InvalidRequest(
            f"{cell_id} is a fallback id: this notebook has no stable cell ids, so its cells "
            "cannot be edited by id. Opening and saving it in JupyterLab gives every cell one.",
            reason="no_stable_ids",
        )
    found = [i for i, cell in enumerate(cells) if cell.get("id") == cell_id]
    if len(found) > 1:
        raise Conflict(
            f"{len(found)} cells share the id {cell_id}, so it names none of them; opening "
            "and saving the notebook in JupyterLab makes the ids unique.",
            reason="duplicate_cell_id",
        )
    return found[0] if found else None


def _cell_type(op: dict[str, Any]) -> str:
    value = op.get("cell_type")
    if value not in CELL_TYPES:
        raise InvalidRequest(
            f"cell_type is one of {', '.join(CELL_TYPES)}.", reason="invalid_argument"
        )
    return str(value)


def _text(op: dict[str, Any], key: str, *, empty_ok: bool = False) -> str:
    value = op.get(key)
    if not isinstance(value, str) or (not value and not empty_ok):
        raise InvalidRequest(
            f"A {op.get('op')} operation needs '{key}'.", reason="invalid_argument"
        )
    return value
