"""Cell operations on a notebook's JSON, checked against the sources the model saw.

The edit tools resolve what the model asked for (a find-and-replace, the hunks a person
accepted) into these operations; here they are applied to the raw notebook, in order:
insert, replace (the whole new source), delete, move, set_type and clear_outputs. Every
operation on an existing cell carries the hash of the source it expects (a prefix of the
SHA-256, as ``notebook_outline`` shows it) of the source the cell had before the batch: a
stale one refuses the whole batch, so a cell the user changed meanwhile is never overwritten.
Applying is idempotent: an operation whose result is already there (the change was made in
the notebook open in Lab and saved) is counted as done and changes nothing. Ids and outputs
survive a type change: outputs a markdown or raw cell cannot hold (and attachments a code
cell cannot) are kept in its metadata and come back when it turns back.
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
    before = {
        cell.get("id"): joined(cell.get("source")) for cell in cells if isinstance(cell, dict)
    }
    for index, op in enumerate(ops):
        done = _apply(cells, op, book.get("nbformat_minor"), before)
        (outcome.applied if done else outcome.already).append(index)
    return book, outcome


def _apply(
    cells: list[dict[str, Any]], op: dict[str, Any], minor: Any, before: dict[Any, str]
) -> bool:
    kind = op.get("op")
    if kind not in OPS:
        raise InvalidRequest(f"Unknown notebook operation {kind!r}.", reason="invalid_argument")
    if kind == "insert":
        return _insert(cells, op, minor)
    position = _find(cells, _text(op, "id"))
    if kind == "delete":
        if position is None:
            return False
        _expect(cells[position], op, before)
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
        _expect(cell, op, before)
        cell["source"] = source
        return True
    if kind == "move":
        return _move(cells, position, op, before)
    # An operation already done is checked no further, so that applying a batch again after
    # the notebook took its replace still counts the rest as done.
    if kind == "set_type":
        cell_type = _cell_type(op)
        if cell.get("cell_type") == cell_type:
            return False
        _expect(cell, op, before)
        return _set_type(cell, cell_type)
    if not _has_outputs(cell):
        return False
    _expect(cell, op, before)
    cell["outputs"], cell["execution_count"] = [], None
    return True


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


def _move(
    cells: list[dict[str, Any]], position: int, op: dict[str, Any], before: dict[Any, str]
) -> bool:
    anchor = _anchor(cells, op)
    if anchor == position:
        raise InvalidRequest("A cell cannot move after itself.", reason="invalid_argument")
    if anchor == position - 1:
        return False
    _expect(cells[position], op, before)
    cell = cells.pop(position)
    cells.insert(anchor + (0 if anchor > position else 1), cell)
    return True


def _set_type(cell: dict[str, Any], cell_type: str) -> bool:
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


def _has_outputs(cell: dict[str, Any]) -> bool:
    if cell.get("cell_type") != "code":
        raise InvalidRequest(
            f"Cell {cell.get('id')} is a {cell.get('cell_type')} cell: it has no outputs.",
            reason="invalid_argument",
        )
    return bool(cell.get("outputs")) or cell.get("execution_count") is not None


def _expect(cell: dict[str, Any], op: dict[str, Any], before: dict[Any, str]) -> None:
    """The cell's source before the batch must be the one the model saw."""
    expected = _text(op, "expected_hash")
    source = before.get(cell.get("id"), joined(cell.get("source")))
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


# -- from the model's request to operations, and back from a review -------------------------


def resolve_ops(
    raw: dict[str, Any], requested: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The model's operations as ``apply_ops`` takes them, and the notebook they give.

    A find-and-replace (``old_string``/``new_string``) becomes the cell's whole new source;
    replaces of one cell merge into the first (a review shows one diff per cell); inserts get
    fresh ids, and inserts after the same place keep the order they were given in. An
    operation that would change nothing is refused, as a stale hash is.
    """
    book = copy.deepcopy(raw)
    cells = book.get("cells")
    if not isinstance(cells, list):
        raise InvalidRequest("The notebook has no list of cells.", reason="invalid_notebook")
    before = {
        cell.get("id"): joined(cell.get("source")) for cell in cells if isinstance(cell, dict)
    }
    taken = set(before)
    resolved: list[dict[str, Any]] = []
    replaces: dict[str, int] = {}  # cell id -> the position of its replace in ``resolved``
    last_insert: dict[str | None, str] = {}
    for number, requested_op in enumerate(requested, start=1):
        op = _resolved(cells, requested_op, number, len(requested))
        if op["op"] == "insert":
            op["id"] = _fresh_id(taken)
            after = op.get("after")
            op["after"] = last_insert.get(after, after)
            last_insert[after] = op["id"]
        merged = replaces.get(op["id"]) if op["op"] == "replace" else None
        try:
            done = _apply(cells, op, book.get("nbformat_minor"), before)
        except (Conflict, InvalidRequest) as error:
            raise _numbered(error, number, len(requested)) from None
        if merged is not None:
            resolved[merged]["source"] = op["source"]
            continue
        if not done:
            raise _numbered(_no_change(op), number, len(requested))
        if op["op"] == "replace":
            replaces[op["id"]] = len(resolved)
        resolved.append(op)
    return resolved, book


def drop_ops(ops: list[dict[str, Any]], keep: set[int]) -> list[dict[str, Any]]:
    """``ops`` without those not in ``keep``; what was to go after a dropped insert goes
    where that insert would have gone."""
    moved_to: dict[str, Any] = {}
    kept = []
    for index, op in enumerate(ops):
        after = op.get("after")
        anchored = {**op, "after": moved_to[after]} if after in moved_to else op
        if index in keep:
            kept.append(anchored)
        elif op["op"] == "insert":
            moved_to[op["id"]] = anchored.get("after")
    return kept


def _resolved(cells: list[dict[str, Any]], op: Any, number: int, total: int) -> dict[str, Any]:
    if not isinstance(op, dict):
        raise InvalidRequest(f"Operation {number} is not an object.", reason="invalid_argument")
    op = dict(op)
    if op.get("op") == "insert":
        op.setdefault("cell_type", "code")
        op.setdefault("after", None)
    if op.get("op") != "replace" or ("old_string" not in op and "new_string" not in op):
        return op
    if "source" in op:
        raise InvalidRequest(
            f"Operation {number}: a replace gives either 'source' or 'old_string' and "
            "'new_string', not both.",
            reason="invalid_argument",
        )
    old, new = op.pop("old_string", None), op.pop("new_string", None)
    if not isinstance(old, str) or not old or not isinstance(new, str):
        raise InvalidRequest(
            f"Operation {number}: a find-and-replace needs a non-empty 'old_string' and a "
            "'new_string'.",
            reason="invalid_argument",
        )
    try:
        position = _find(cells, _text(op, "id"))
    except (Conflict, InvalidRequest) as error:
        raise _numbered(error, number, total) from None
    if position is None:
        return {**op, "source": old}  # _apply reports the missing cell
    source = joined(cells[position].get("source"))
    count = source.count(old)
    if count != 1:
        why = "was not found" if count == 0 else f"occurs {count} times"
        raise InvalidRequest(
            f"Operation {number}: old_string {why} in cell {op['id']}; copy it exactly from "
            "notebook_read"
            + (", with enough around it to be unique." if count else ".")
            + " Nothing was changed.",
            reason="no_match" if count == 0 else "ambiguous_match",
        )
    return {**op, "source": source.replace(old, new)}


def _no_change(op: dict[str, Any]) -> Conflict | InvalidRequest:
    if op["op"] == "delete":
        return Conflict(
            f"Cell {op['id']} is not in the notebook; take fresh ids from notebook_outline.",
            reason="cell_missing",
        )
    return InvalidRequest(
        f"This would not change cell {op['id']}: it is already as asked. Leave it out; "
        "nothing was changed.",
        reason="no_change",
    )


def _fresh_id(taken: set[Any]) -> str:
    while (cell_id := new_cell_id()) in taken:
        pass
    taken.add(cell_id)
    return cell_id


def _numbered(error: Conflict | InvalidRequest, number: int, total: int) -> Exception:
    if total == 1:
        return error
    return type(error)(f"Operation {number} of {total}: {error.message}", reason=error.reason)
