"""notebook_edit: cell operations on a notebook as one change set the user reviews cell by cell.

``propose`` resolves the model's operations against the notebook as it is (a find-and-replace
becomes the cell's new source, inserts get ids) and refuses a stale hash at once. The change
set is shown as units, numbered like an edit's hunks so that a decision names the ones kept:
each diff hunk inside a replaced cell, and each other operation whole. ``apply`` re-reads the
notebook, rebuilds the operations from the units kept and applies them with the hash checks
of ``notebook_view.changes``: a cell the user changed meanwhile refuses the batch, one the
open notebook already took counts as done. A change still to make is written atomically
(etag-checked) after the old notebook is kept as its Jupyter checkpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TYPE_CHECKING, Any, ClassVar

from terax_jupyter.exceptions import AlreadyExists, InvalidRequest
from terax_jupyter.notebook_view.cells import check_path, raw_notebook, source_hash
from terax_jupyter.notebook_view.changes import CELL_TYPES, OPS, apply_ops, drop_ops, resolve_ops
from terax_jupyter.notebook_view.render import joined
from terax_jupyter.notebook_view.serialize import notebook_text
from terax_jupyter.security import Access
from terax_jupyter.services.ai.tools.base import Hunk, Proposal, Tool, ToolResult, object_schema
from terax_jupyter.services.ai.tools.files import string_arg
from terax_jupyter.services.ai.tools.hunks import apply_hunks, diff_hunks

if TYPE_CHECKING:
    from terax_jupyter.services.ai.tools.base import ToolContext

MAX_OPS = 50
CHECKPOINTS = ".ipynb_checkpoints"  # where Jupyter keeps a notebook's checkpoint
_HASH = {"type": "string", "description": "The cell's source hash from notebook_outline."}
_ID = {"type": "string", "minLength": 1, "maxLength": 200}
_AFTER = {
    "type": ["string", "null"],
    "description": "The id of the cell to put it after; null for the top of the notebook.",
}
_OP_SCHEMA = object_schema(
    {
        "op": {"type": "string", "enum": list(OPS)},
        "id": {**_ID, "description": "The cell's id (not for insert)."},
        "expected_hash": _HASH,
        "after": _AFTER,
        "cell_type": {"type": "string", "enum": list(CELL_TYPES)},
        "source": {"type": "string", "description": "The whole new source (insert, replace)."},
        "old_string": {"type": "string", "description": "replace: the exact text to change."},
        "new_string": {"type": "string", "description": "replace: the text to put instead."},
    },
    ["op"],
)


class NotebookEdit(Tool):
    name: ClassVar[str] = "notebook_edit"
    description: ClassVar[str] = (
        "Change cells of a Jupyter notebook (.ipynb) as one change set the user reviews cell "
        "by cell, never by editing its JSON. Operations, in order: insert (cell_type, source, "
        "after: an id or null for the top; inserts after the same cell keep their order), "
        "replace (id, expected_hash, and source, or old_string + new_string occurring once), "
        "delete (id, expected_hash), move (id, expected_hash, after), set_type (id, "
        "expected_hash, cell_type; id and outputs are kept), clear_outputs (id, "
        "expected_hash). expected_hash is the source hash notebook_outline or notebook_read "
        "showed: a cell changed since is refused, so read it again. Applied through the "
        "notebook open in Lab when it is, keeping the user's unsaved edits."
    )
    parameters: ClassVar[dict[str, Any]] = object_schema(
        {
            "path": {"type": "string", "description": "The .ipynb file."},
            "ops": {"type": "array", "minItems": 1, "maxItems": MAX_OPS, "items": _OP_SCHEMA},
        },
        ["path", "ops"],
    )
    mutating: ClassVar[bool] = True

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        path = string_arg(arguments, "path")
        requested = arguments.get("ops")
        if not isinstance(requested, list) or not 0 < len(requested) <= MAX_OPS:
            raise InvalidRequest(
                f"'ops' is a list of 1 to {MAX_OPS} operations.", reason="invalid_argument"
            )
        check_path(path)
        context.security.paths.check(path, Access.WRITE)
        shown, etag, _, raw = await _load(context, path)
        ops, _ = await asyncio.to_thread(resolve_ops, raw, requested)
        change = _change_set(shown, raw, ops)
        return Proposal(
            tool=self.name,
            kind="notebook",
            summary=f"Edit notebook {shown}: {_summary(ops)}",
            payload={"path": shown, "base_etag": etag, "ops": ops, "cells": change.cells},
            path=shown,
            diff=change.diff,
            hunks=change.hunks,
        )

    def audit_subject(self, proposal: Proposal) -> dict[str, Any]:
        """Each operation with the source hash it was checked against and the new source's."""
        ops = []
        for op in proposal.payload.get("ops") or []:
            entry = {
                key: op[key] for key in ("op", "id", "expected_hash", "cell_type") if op.get(key)
            }
            if isinstance(op.get("source"), str):
                entry["source_hash"] = source_hash(op["source"])
            ops.append(entry)
        return {"path": proposal.payload.get("path"), "ops": ops}

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        payload = proposal.payload
        path = string_arg(payload, "path")
        cells: list[dict[str, Any]] = payload["cells"]
        total = sum(len(cell["units"]) for cell in cells)
        kept = set(range(total)) if hunks is None else set(hunks)
        ops = _kept_ops(payload["ops"], cells, kept)
        data: dict[str, Any] = {"path": path, "hunks_applied": len(kept), "hunks_total": total}
        if not ops:
            return ToolResult(f"Nothing was accepted; {path} was not changed.", data=data)
        shown, etag, original, raw = await _load(context, path)
        book, outcome = await asyncio.to_thread(apply_ops, raw, ops)
        data["cells"] = [op.get("id") for op in ops]
        data["written"] = outcome.changed
        rejected = total - len(kept)
        tail = (
            f" {rejected} of {total} proposed changes were rejected: read the cells again "
            "before editing them further."
            if rejected
            else ""
        )
        if not outcome.changed:
            return ToolResult(
                f"{shown} already has these changes (made in the notebook open in Lab); "
                f"nothing was written.{tail}",
                data=data,
            )
        await _keep_checkpoint(context, shown, original)
        text = await asyncio.to_thread(notebook_text, book)
        written = await context.files.write(shown, text, etag=etag)
        context.reads.record(written["path"], written["etag"])
        made = len(outcome.applied)
        already = f" ({len(outcome.already)} were already made)" if outcome.already else ""
        return ToolResult(
            f"Applied {made} cell operations to {shown}{already}; the notebook before them "
            f"is its checkpoint.{tail}",
            data=data,
        )


# -- the change set --------------------------------------------------------------------------


class _ChangeSet:
    def __init__(self) -> None:
        self.cells: list[dict[str, Any]] = []
        self.hunks: list[Hunk] = []
        self.diff = ""


def _change_set(path: str, raw: dict[str, Any], ops: list[dict[str, Any]]) -> _ChangeSet:
    """One entry per operation, with its units numbered across the whole change set."""
    sources = {cell.get("id"): joined(cell.get("source")) for cell in raw["cells"]}
    types = {cell.get("id"): cell.get("cell_type") for cell in raw["cells"]}
    change = _ChangeSet()
    for op in ops:
        cell_id, kind = op["id"], op["op"]
        old = "" if kind == "insert" else sources.get(cell_id, "")
        new = {"insert": op.get("source", ""), "replace": op.get("source", ""), "delete": ""}
        diff, local = diff_hunks(old, new.get(kind, old), path=f"{path}#{cell_id}")
        label = _label(op, types.get(cell_id))
        if kind != "replace":
            # An insert, a delete or a change of the cell as a whole is one unit.
            local = [_whole(local, label)]
        units = []
        for hunk in local:
            hunk.index = len(change.hunks)
            if kind == "replace":
                hunk.header = f"{hunk.header} cell {cell_id}"
            units.append(hunk.index)
            change.hunks.append(hunk)
        change.diff += f"# {label}\n{diff}"
        change.cells.append(
            {
                "id": cell_id,
                "op": kind,
                "cell_type": op.get("cell_type") or types.get(cell_id),
                "after": op.get("after"),
                "old_source": old,
                "new_source": new.get(kind, old),
                "label": label,
                "units": units,
            }
        )
    return change


def _whole(hunks: list[Hunk], label: str) -> Hunk:
    lines = [line for hunk in hunks for line in hunk.lines]
    first = hunks[0] if hunks else None
    return Hunk(
        index=0,
        header=f"@@ {label} @@",
        old_start=first.old_start if first else 0,
        old_lines=first.old_lines if first else 0,
        new_start=first.new_start if first else 0,
        new_lines=first.new_lines if first else 0,
        lines=lines,
    )


def _label(op: dict[str, Any], cell_type: Any) -> str:
    cell_id, kind = op["id"], op["op"]
    where = f"after cell {op['after']}" if op.get("after") else "at the top"
    if kind == "insert":
        return f"insert {op['cell_type']} cell {cell_id} {where}"
    if kind == "move":
        return f"move cell {cell_id} {where}"
    if kind == "set_type":
        return f"cell {cell_id}: {cell_type} to {op['cell_type']}"
    if kind == "clear_outputs":
        return f"clear the outputs of cell {cell_id}"
    return f"{kind} cell {cell_id}"


def _summary(ops: list[dict[str, Any]]) -> str:
    words = {
        "replace": "edited",
        "insert": "inserted",
        "delete": "deleted",
        "move": "moved",
        "set_type": "retyped",
        "clear_outputs": "cleared",
    }
    counts: dict[str, int] = {}
    for op in ops:
        counts[op["op"]] = counts.get(op["op"], 0) + 1
    parts = [f"{count} {words[kind]}" for kind, count in counts.items()]
    return ", ".join(parts) + (" cell" if len(ops) == 1 else " cells")


def _kept_ops(
    ops: list[dict[str, Any]], cells: list[dict[str, Any]], kept: set[int]
) -> list[dict[str, Any]]:
    """The operations the kept units leave: a replace with only some of its hunks gets the
    source those hunks make; an operation none of whose units is kept is dropped."""
    keep: set[int] = set()
    rebuilt = []
    for index, (op, cell) in enumerate(zip(ops, cells, strict=True)):
        units = cell["units"]
        local = [position for position, unit in enumerate(units) if unit in kept]
        if local and op["op"] == "replace" and len(local) < len(units):
            source = apply_hunks(cell["old_source"], cell["new_source"], local)
            op = {**op, "source": source}
        if local:
            keep.add(index)
        rebuilt.append(op)
    return drop_ops(rebuilt, keep)


# -- reading and writing ---------------------------------------------------------------------


async def _load(context: ToolContext, path: str) -> tuple[str, str, str, dict[str, Any]]:
    """The notebook's display path, etag, text and JSON."""
    document = await context.files.read(path, format="text")
    shown = document["path"]
    check_path(shown, asked=False)
    raw = await asyncio.to_thread(raw_notebook, shown, document["content"])
    return shown, document["etag"], document["content"], raw


async def _keep_checkpoint(context: ToolContext, path: str, text: str) -> None:
    """The notebook before the change, where Lab's "Revert to Checkpoint" finds it."""
    folder = os.path.join(os.path.dirname(path), CHECKPOINTS)
    stem = os.path.splitext(os.path.basename(path))[0]
    with contextlib.suppress(AlreadyExists):
        await context.files.create(folder, kind="directory", parents=True)
    await context.files.write(
        os.path.join(folder, f"{stem}-checkpoint.ipynb"), text, overwrite=True
    )
