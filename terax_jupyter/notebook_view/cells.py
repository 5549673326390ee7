"""A notebook's JSON as cells: stable ids (or marked fallback ids), source hashes, run state.

Parsed with json, its multi-line strings joined as nbformat's reader does, without nbformat's
NotebookNode conversion or schema validation: fast, and nothing in a notebook is trusted
anyway. Nothing here reads a file or redacts: the caller brings the text (through its
security layer) and the redactor.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from nbformat.reader import get_version

from terax_jupyter.exceptions import InvalidRequest, Unsupported
from terax_jupyter.notebook_view.render import joined, plain

NOTEBOOK_SUFFIX = ".ipynb"
HASH_CHARS = 12
METADATA_CHARS = 60  # of a kernel's name or display name
EXECUTED_KEY = "executed_source_hash"  # under the cell's metadata "terax"
PARSED_NOTEBOOKS = 8  # parses kept (by path and text) for the next call on the same file

_ID_NOTE = (
    "This notebook has no stable cell ids (nbformat {version}{why}): its cells carry "
    "fallback ids ('~position:hash'), NOT STABLE: they change when a cell moves or is "
    "edited. Take them from a fresh notebook_outline."
)


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Cell:
    id: str
    stable: bool
    type: str
    source: str
    execution_count: int | None
    executed_hash: str | None
    outputs: list[Any]
    attachments: list[str] = field(default_factory=list)

    @functools.cached_property
    def hash(self) -> str:
        return source_hash(self.source)[:HASH_CHARS]

    @property
    def run_state(self) -> str | None:
        """'edited since run', 'unchanged since run', or None when it is not known."""
        if self.executed_hash is None:
            return None
        recorded = self.executed_hash.lower()
        if len(recorded) >= 8 and source_hash(self.source).startswith(recorded):
            return "unchanged since run"
        return "edited since run"

    def facts(self) -> str:
        """Type, execution count, source hash and run state, in a few words."""
        parts = [self.type]
        if self.type == "code":
            count = self.execution_count
            parts.append(f"[{count}]" if count is not None else "[not run]")
        parts.append(f"src {self.hash}")
        if self.run_state is not None:
            parts.append(self.run_state)
        if not self.stable:
            parts.append("id not stable")
        return ", ".join(parts)


@dataclass(frozen=True)
class Notebook:
    path: str
    version: str
    cells: tuple[Cell, ...]
    kernel_name: str | None
    kernel_display: str | None
    language: str | None

    @property
    def ids_stable(self) -> bool:
        return all(cell.stable for cell in self.cells)

    def kernel(self) -> str:
        if self.kernel_name is None:
            return "kernel not recorded in the notebook's metadata"
        shown = f"kernel {self.kernel_name}"
        return f'{shown} ("{self.kernel_display}")' if self.kernel_display else shown

    def id_note(self) -> str | None:
        if self.ids_stable:
            return None
        minor = self.version.split(".")[1]
        why = "" if int(minor) < 5 else ", some cells lack an id or share one"
        return _ID_NOTE.format(version=self.version, why=why)

    def kernel_json(self) -> dict[str, Any]:
        return {"name": self.kernel_name, "display_name": self.kernel_display}


def check_path(path: str, *, asked: bool = True) -> None:
    """Refuse a path that is not a ``.ipynb``: the one ``asked`` for, before it is read, or
    the one the server resolved it to (a link to something else)."""
    if path.lower().endswith(NOTEBOOK_SUFFIX):
        return
    message = f"{path} is not a notebook (.ipynb)" + ("; read it with read_file." if asked else ".")
    raise Unsupported(message, reason="not_a_notebook")


def parse_notebook(path: str, text: str) -> Notebook:
    """The notebook ``text`` holds, as read from ``path``. The last few parses are kept, by
    path and text: paging an outline or reading cell after cell of an unchanged notebook
    parses it once (a 500-cell notebook takes tens of milliseconds). The result is shared,
    so it is frozen and its cells are a tuple."""
    return _parsed(path, text)


@functools.lru_cache(maxsize=PARSED_NOTEBOOKS)
def _parsed(path: str, text: str) -> Notebook:
    return notebook_of(path, raw_notebook(path, text))


def forget_parsed() -> None:
    """Drop the kept parses (a benchmark's cold start)."""
    _parsed.cache_clear()


def raw_notebook(path: str, text: str) -> dict[str, Any]:
    """The notebook's JSON, checked to be nbformat 4 with a list of cells."""
    try:
        raw = json.loads(text)
    except ValueError as error:
        raise InvalidRequest(
            f"{path} is not valid JSON ({error}), so it cannot be read as a notebook; "
            "read_file shows its text.",
            reason="invalid_notebook",
        ) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("nbformat"), int):
        raise InvalidRequest(
            f"{path} is not a Jupyter notebook: it has no 'nbformat' version.",
            reason="invalid_notebook",
        )
    major = get_version(raw)[0]
    if major < 4:
        raise Unsupported(
            f"{path} is an nbformat {major} notebook; only nbformat 4 is read. Opening and "
            "saving it in JupyterLab converts it.",
            reason="notebook_version",
        )
    if major > 4:
        raise Unsupported(
            f"{path} is an nbformat {major} notebook, newer than this server reads (4).",
            reason="notebook_version",
        )
    if not isinstance(raw.get("cells"), list) or not all(
        isinstance(cell, dict) for cell in raw["cells"]
    ):
        raise InvalidRequest(
            f"{path} is not a valid notebook: 'cells' is not a list of cells.",
            reason="invalid_notebook",
        )
    return raw


def notebook_of(path: str, raw: dict[str, Any]) -> Notebook:
    """The cells of a notebook ``raw_notebook`` checked."""
    minor = get_version(raw)[1]
    metadata = _mapping(raw.get("metadata"))
    spec = _mapping(metadata.get("kernelspec"))
    language = metadata.get("language_info")
    return Notebook(
        path=path,
        version=f"4.{minor if isinstance(minor, int) else 0}",
        cells=tuple(_cells(raw["cells"])),
        kernel_name=_text_or_none(spec.get("name")),
        kernel_display=_text_or_none(spec.get("display_name")),
        language=_text_or_none(language.get("name")) if isinstance(language, dict) else None,
    )


def _cells(raw_cells: list[dict[str, Any]]) -> list[Cell]:
    counts = Counter(cell.get("id") for cell in raw_cells if isinstance(cell.get("id"), str))
    cells = []
    for position, raw in enumerate(raw_cells):
        source = joined(raw.get("source"))
        given = raw.get("id")
        stable = isinstance(given, str) and bool(given) and counts[given] == 1
        metadata = _mapping(raw.get("metadata"))
        count = raw.get("execution_count")
        outputs = raw.get("outputs")
        attachments = raw.get("attachments")
        cells.append(
            Cell(
                id=given if stable and isinstance(given, str) else _fallback_id(position, source),
                stable=stable,
                type=str(raw.get("cell_type", "unknown")),
                source=source,
                execution_count=count if isinstance(count, int) else None,
                executed_hash=_executed_hash(metadata),
                outputs=_rejoined(outputs) if isinstance(outputs, list) else [],
                attachments=list(attachments) if isinstance(attachments, dict) else [],
            )
        )
    return cells


def _rejoined(outputs: list[Any]) -> list[Any]:
    """Outputs with their multi-line strings (stored as lists of lines) joined, as nbformat's
    reader joins them: a stream's text and a bundle's values, but not JSON ones. Done here
    on the parsed JSON, without nbformat's conversion of every dict into a NotebookNode (most
    of a large notebook's parse time)."""
    for output in outputs:
        if not isinstance(output, dict):
            continue
        if output.get("output_type") in ("execute_result", "display_data"):
            data = _mapping(output.get("data"))
            for mime, value in data.items():
                if _lines(value) and not _is_json_mime(mime):
                    data[mime] = "".join(value)
        elif _lines(output.get("text")):
            output["text"] = "".join(output["text"])
    return outputs


def _lines(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(line, str) for line in value)


def _is_json_mime(mime: str) -> bool:
    return mime == "application/json" or (
        mime.startswith("application/") and mime.endswith("+json")
    )


def _executed_hash(metadata: dict[str, Any]) -> str | None:
    terax = metadata.get("terax")
    value = terax.get(EXECUTED_KEY) if isinstance(terax, dict) else None
    if value is None:
        value = metadata.get(f"terax.{EXECUTED_KEY}")
    if isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{1,64}", value):
        return value
    return None


def _fallback_id(position: int, source: str) -> str:
    # '~' and ':' are not allowed in nbformat ids, so a fallback never equals a real id.
    return f"~{position}:{source_hash(source)[:8]}"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text_or_none(value: Any) -> str | None:
    """A metadata string, shortened: it is the notebook's word, shown outside envelopes."""
    if not isinstance(value, str) or not value.strip():
        return None
    value = " ".join(plain(value).split())
    return value if len(value) <= METADATA_CHARS else value[:METADATA_CHARS] + "…"
