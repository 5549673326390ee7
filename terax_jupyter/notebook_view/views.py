"""What notebook_outline and notebook_read return: a notebook's cells as text for a model.

The built-in agent's tools and ``jupyter terax mcp`` both answer with these, each with its own
redactor: secrets are redacted before anything is cut, and what a cell printed is wrapped in a
nonced envelope (``untrusted.py``), within a per-call character budget.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from terax_jupyter.exceptions import InvalidRequest, NotFound
from terax_jupyter.notebook_view.cells import Cell, Notebook
from terax_jupyter.notebook_view.images import MAX_IMAGES, OutputImage
from terax_jupyter.notebook_view.render import output_label, output_summary, plain, render_output
from terax_jupyter.notebook_view.untrusted import Envelope

OUTLINE_CELLS = 200
FIRST_LINE_CHARS = 100
OUTLINE_OUTPUTS = 6  # output summaries per cell in the outline
READ_IDS = 50
DEFAULT_BUDGET = 16_000
MAX_BUDGET = 64_000
MIN_BUDGET = 500
SOURCE_BUDGET = 48_000  # all sources of one notebook_read call, apart from the output budget


class Redact(Protocol):
    """A redactor's ``redact``: ``keep_lines`` keeps a multi-line secret's line breaks."""

    def __call__(self, text: str, *, keep_lines: bool = False) -> str: ...


@dataclass
class View:
    """A tool's answer: the text for the model, the structured facts for a UI, and the
    images the text names (``OutputImage.label``) for a model that reads them."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    images: list[OutputImage] = field(default_factory=list)


def outline(book: Notebook, redact: Redact, *, start: int = 0) -> View:
    """Cells from ``start`` on (at most OUTLINE_CELLS): id, facts, first line, outputs."""
    total = len(book.cells)
    if start and start >= total:
        raise InvalidRequest(
            f"start {start} is past the last cell of {book.path} ({total} cells).",
            reason="invalid_argument",
        )
    listed = book.cells[start : start + OUTLINE_CELLS]
    kinds = Counter(cell.type for cell in book.cells)
    counted = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
    lines = [
        f"Notebook {book.path}: {total} cells ({counted or 'none'}), nbformat "
        f"{book.version}, {redact(book.kernel())}."
    ]
    note = book.id_note()
    if note:
        lines.append(note)
    envelope = Envelope()
    if listed:
        lines.append(
            "Cells, in order (id | type, [execution count], source hash | first line | "
            "outputs). " + envelope.notice("the notebook's own content")
        )
        body = redact("\n".join(_outline_line(cell) for cell in listed), keep_lines=True)
        lines.append(envelope.wrap(body, f"cells of {book.path}"))
    end = start + len(listed)
    if start or end < total:
        lines.append(
            f"[Listed cells {start + 1}-{end} of {total}; "
            f"{total - len(listed)} not listed."
            + (f" List more with start={end}.]" if end < total else "]")
        )
    return View(
        "\n".join(lines),
        data={
            "path": book.path,
            "nbformat": book.version,
            "kernel": book.kernel_json(),
            "cells": total,
            "listed": len(listed),
            "start": start,
            "truncated": end < total or start > 0,
            "ids_stable": book.ids_stable,
            "outline": [
                {
                    "id": cell.id,
                    "type": cell.type,
                    "source_hash": cell.hash,
                    "execution_count": cell.execution_count,
                    "executed_source_hash": cell.executed_hash,
                    "outputs": len(cell.outputs),
                }
                for cell in listed
            ],
        },
    )


def _outline_line(cell: Cell) -> str:
    lines = cell.source.split("\n")
    first = next((line.strip() for line in lines if line.strip()), "")
    first = plain(first)
    if len(first) > FIRST_LINE_CHARS:
        first = first[:FIRST_LINE_CHARS] + "…"
    more = len([line for line in lines if line.strip()]) - 1
    shown = (first or "(empty)") + (f" (+{more} lines)" if more > 0 else "")
    parts = [cell.id, cell.facts(), shown]
    if cell.outputs:
        summaries = [output_summary(output) for output in cell.outputs[:OUTLINE_OUTPUTS]]
        if len(cell.outputs) > OUTLINE_OUTPUTS:
            summaries.append(f"and {len(cell.outputs) - OUTLINE_OUTPUTS} more outputs")
        parts.append("out: " + "; ".join(summaries))
    elif cell.type == "code":
        parts.append("no output")
    return " | ".join(parts)


def cell_ids(value: Any) -> list[str]:
    """The ids a notebook_read call asks for: 1 to READ_IDS non-empty strings, each once."""
    if not isinstance(value, list) or not value or len(value) > READ_IDS:
        raise InvalidRequest(
            f"'ids' must be a list of 1 to {READ_IDS} cell ids.", reason="invalid_argument"
        )
    if not all(isinstance(item, str) and item for item in value):
        raise InvalidRequest("Each cell id must be a non-empty string.", reason="invalid_argument")
    return list(dict.fromkeys(value))  # each cell once, in the order asked


def read(book: Notebook, ids: list[str], redact: Redact, *, budget: int = DEFAULT_BUDGET) -> View:
    """The cells ``ids`` (all known, or NotFound naming the unknown ones): sources and
    outputs, the outputs sharing ``budget`` characters."""
    by_id = {cell.id: cell for cell in book.cells}
    unknown = [cell_id for cell_id in ids if cell_id not in by_id]
    if unknown:
        hint = (
            " This notebook's ids are fallback ids that change when cells move or are "
            "edited: take them from a fresh notebook_outline."
            if not book.ids_stable
            else " Take ids from notebook_outline; cells are not addressed by position."
        )
        raise NotFound(
            f"{book.path} has no cell with id {', '.join(repr(i) for i in unknown)}." + hint,
            reason="unknown_cell",
        )
    reader = Reader(redact, budget, language=book.language or "python")
    sections = [reader.cell(by_id[cell_id]) for cell_id in ids]
    head = [
        f"Notebook {book.path}, {reader.redact(book.kernel())}; {len(ids)} of "
        f"{len(book.cells)} cells.",
        reader.envelope.notice("output of the notebook's code"),
    ]
    note = book.id_note()
    if note:
        head.append(note)
    return View(
        "\n".join(head) + "\n\n" + "\n\n".join(sections),
        data={
            "path": book.path,
            "ids": ids,
            "ids_stable": book.ids_stable,
            "output_budget": budget,
            "output_chars": budget - reader.remaining,
            "outputs_shown": reader.shown,
            "outputs_cut": reader.cut,
            "outputs_omitted": reader.omitted,
            "images": reader.image_facts(),
        },
        images=reader.images,
    )


class Reader:
    """Renders cells for one notebook_read call, spending one output budget."""

    def __init__(self, redact: Redact, budget: int, *, language: str) -> None:
        self.redact = redact
        self.language = re.sub(r"[^\w+-]", "", language.lower()) or "text"
        self.budget = budget
        self.remaining = budget
        self.sources_left = SOURCE_BUDGET
        self.envelope = Envelope()
        self.shown = 0
        self.cut = 0
        self.omitted = 0
        self.images: list[OutputImage] = []

    def image_facts(self) -> list[dict[str, Any]]:
        """The images shown, without their data: for a UI and the tool's data."""
        return [
            {
                "label": image.label,
                "media_type": image.media_type,
                "width": image.width,
                "height": image.height,
                "bytes": image.size,
            }
            for image in self.images
        ]

    def cell(self, cell: Cell) -> str:
        lines = [f"## Cell {cell.id} ({cell.facts()})"]
        if cell.attachments:
            lines.append(f"Attachments (not shown): {', '.join(cell.attachments)}")
        lines.append(self._source(cell))
        if cell.type != "code":
            return "\n".join(lines)
        if not cell.outputs:
            lines.append("No outputs.")
            return "\n".join(lines)
        lines.append(f"Outputs ({len(cell.outputs)}):")
        for number, output in enumerate(cell.outputs, start=1):
            if self.remaining <= 0:
                lines.append(self._omitted(cell, number))
                break
            lines.append(self.output(cell.id, number, output))
        return "\n".join(lines)

    def _omitted(self, cell: Cell, number: int) -> str:
        """One note for the outputs from ``number`` on, once the budget is spent."""
        total = len(cell.outputs)
        self.omitted += total - number + 1
        which = f"output {number}" if number == total else f"outputs {number}-{total}"
        kinds = sorted({output_label(output) for output in cell.outputs[number - 1 :]})
        return (
            f"[{which} ({', '.join(kinds)}) not shown: the output budget ({self.budget} "
            f"characters) is used up. Read fewer cells or raise output_budget (at most "
            f"{MAX_BUDGET}).]"
        )

    def _source(self, cell: Cell) -> str:
        source = self.redact(cell.source, keep_lines=True)
        note = ""
        if len(source) > self.sources_left:
            kept = max(0, self.sources_left)
            note = (
                f"\n[source cut: {kept} of {len(source)} characters shown; read this cell "
                "alone to see more]"
            )
            source = source[:kept]
        self.sources_left -= len(source)
        if not source and not note:
            return "(empty source)"
        longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
        fence = "`" * max(3, longest + 1)
        language = self.language if cell.type == "code" else re.sub(r"\W", "", cell.type)
        return f"{fence}{language}\n{source}\n{fence}{note}"

    def output(self, cell_id: str, number: int, output: Any) -> str:
        """Output ``number`` of a cell, redacted, enveloped and within the budget; its PNG
        and JPEG images are shown (up to MAX_IMAGES per call) when the text naming them
        fits the budget."""
        label = f"cell {cell_id} output {number}"
        pending: list[OutputImage] = []

        def attach(image: OutputImage) -> str | None:
            if len(self.images) + len(pending) >= MAX_IMAGES:
                return None
            named = replace(image, label=f"image {len(self.images) + len(pending) + 1} ({label})")
            pending.append(named)
            return named.label

        rendered = render_output(output, attach)
        label = f"{label}: {rendered.label}"
        text = self.redact(rendered.text)
        if len(text) <= self.remaining:
            self.remaining -= len(text)
            self.shown += 1
            self.images.extend(pending)
            return self.envelope.wrap(text, label)
        kept = text[: self.remaining]
        if "\n" in kept[len(kept) // 2 :]:
            kept = kept[: kept.rindex("\n")]
        self.remaining = 0
        self.cut += 1
        self.images.extend(image for image in pending if f"[{image.label}:" in kept)
        return (
            self.envelope.wrap(kept, label)
            + f"\n[output {number} cut: {len(kept)} of {len(text)} characters shown; the "
            f"output budget ({self.budget}) is used up. Raise output_budget (at most "
            f"{MAX_BUDGET}) or read this cell alone.]"
        )
