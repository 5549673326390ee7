"""A patch holding exactly a selection of a diff's hunks and lines, for ``git apply``.

Forward (stage: index -> work tree diff applied to the index) the patch's old side must be
the target as it is: an unselected deletion stays as context, an unselected addition is
left out. Reverse (unstage, discard: the patch is applied with ``--reverse``) its new side
must be the target as it is: an unselected addition stays as context, an unselected
deletion is left out. Hunk headers are recounted; the side that is the target keeps its
numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

from terax_jupyter.exceptions import InvalidRequest

if TYPE_CHECKING:
    from terax_jupyter.services.git.diff import FileDiff, Hunk

_PREFIX = {"context": b" ", "delete": b"-", "add": b"+"}
_NO_NEWLINE = b"\\ No newline at end of file\n"


@dataclass(frozen=True)
class Selection:
    hunk: int
    lines: frozenset[int] | None = None  # indices into the hunk's lines; None: all of it


def parse_selection(value: Any) -> list[Selection]:
    """``[{hunk: int, lines?: [int]}]`` from a request body, or InvalidRequest."""
    if not isinstance(value, list) or not value or len(value) > 10_000:
        raise InvalidRequest(
            "'selection' must be a non-empty list of {hunk, lines?}.", reason="invalid_selection"
        )
    selections: dict[int, Selection] = {}
    for item in value:
        hunk = item.get("hunk") if isinstance(item, dict) else None
        lines = item.get("lines") if isinstance(item, dict) else None
        if not _is_index(hunk) or (
            lines is not None
            and (not isinstance(lines, list) or not all(_is_index(n) for n in lines))
        ):
            raise InvalidRequest(
                "Each selection item is {hunk: int, lines?: [int]} with indices from 0.",
                reason="invalid_selection",
            )
        if hunk in selections:
            raise InvalidRequest(f"Hunk {hunk} is selected twice.", reason="invalid_selection")
        selections[hunk] = Selection(hunk, None if lines is None else frozenset(lines))
    return list(selections.values())


def _is_index(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1_000_000


@dataclass
class _Out:
    kind: str
    raw: bytes
    no_newline: bool


def chosen_changes(diff: FileDiff, selection: list[Selection]) -> dict[int, set[int]]:
    """Hunk index -> indices of the selected add/delete lines; refuses what is not in the diff."""
    chosen: dict[int, set[int]] = {}
    for item in selection:
        if item.hunk >= len(diff.hunks):
            raise InvalidRequest(
                f"The diff has no hunk {item.hunk} (it has {len(diff.hunks)}).",
                reason="invalid_selection",
            )
        hunk = diff.hunks[item.hunk]
        changes = {i for i, line in enumerate(hunk.lines) if line.kind != "context"}
        if item.lines is None:
            chosen[item.hunk] = changes
            continue
        outside = sorted(item.lines - changes)
        if outside:
            raise InvalidRequest(
                f"Lines {outside} of hunk {item.hunk} are not added or deleted lines.",
                reason="invalid_selection",
            )
        chosen[item.hunk] = set(item.lines)
    if not any(chosen.values()):
        raise InvalidRequest("The selection holds no changed line.", reason="invalid_selection")
    return chosen


def build_patch(diff: FileDiff, selection: list[Selection], *, reverse: bool) -> bytes:
    """The patch of exactly ``selection`` (see the module docstring for the two directions)."""
    chosen = chosen_changes(diff, selection)
    covers_all = all(
        len(chosen.get(h.index, ())) == sum(1 for line in h.lines if line.kind != "context")
        for h in diff.hunks
    )
    parts = [_file_header(diff, reverse=reverse, covers_all=covers_all)]
    delta = 0
    for hunk in diff.hunks:
        picked = chosen.get(hunk.index)
        if not picked:
            continue
        lines = _hunk_lines(hunk, picked, reverse=reverse)
        _check_newlines(hunk, lines)
        old_count = sum(1 for line in lines if line.kind != "add")
        new_count = sum(1 for line in lines if line.kind != "delete")
        if reverse:
            new_start, other_count = hunk.new_start, old_count
            old_start = _other_start(hunk.new_start, new_count, old_count, delta)
            delta += other_count - new_count
        else:
            old_start = hunk.old_start
            new_start = _other_start(hunk.old_start, old_count, new_count, delta)
            delta += new_count - old_count
        parts.append(f"@@ -{old_start},{old_count} +{new_start},{new_count} @@\n".encode())
        for line in lines:
            parts.append(_PREFIX[line.kind] + line.raw + b"\n")
            if line.no_newline:
                parts.append(_NO_NEWLINE)
    return b"".join(parts)


def _hunk_lines(hunk: Hunk, picked: set[int], *, reverse: bool) -> list[_Out]:
    kept_unselected = "add" if reverse else "delete"
    out: list[_Out] = []
    for index, line in enumerate(hunk.lines):
        if line.kind == "context" or index in picked:
            out.append(_Out(line.kind, line.raw, line.no_newline))
        elif line.kind == kept_unselected:
            out.append(_Out("context", line.raw, line.no_newline))
    return out


def _other_start(anchor_start: int, anchor_count: int, other_count: int, delta: int) -> int:
    """Where the non-target side of a hunk starts: unified diffs number an empty side by the
    line before it."""
    start = anchor_start + delta
    if anchor_count == 0 and other_count > 0:
        start += 1
    elif anchor_count > 0 and other_count == 0:
        start -= 1
    return start


def _check_newlines(hunk: Hunk, lines: list[_Out]) -> None:
    """A line without a final newline must stay last on each side it is on."""
    for side_kind in ("add", "delete"):
        side = [line for line in lines if line.kind != side_kind]
        for line in side[:-1]:
            if line.no_newline:
                raise InvalidRequest(
                    f"In hunk {hunk.index} the selection would put a line after the last line "
                    "of the file, which has no final newline; select the removed and the added "
                    "last line together.",
                    reason="invalid_selection",
                )


def _file_header(diff: FileDiff, *, reverse: bool, covers_all: bool) -> bytes:
    """Creation and deletion headers only where the result really creates or deletes the
    file; otherwise a plain modification (no mode changes: the selection is lines)."""
    creates = diff.status == "added" and (not reverse or covers_all)
    deletes = diff.status == "deleted" and (reverse or covers_all)
    if creates or deletes:
        modes = [
            line
            for line in diff.header
            if line.startswith((b"new file mode", b"deleted file mode"))
        ]
        old = b"/dev/null" if creates else quote(b"a/", diff.file)
        new = b"/dev/null" if deletes else quote(b"b/", diff.file)
        return b"\n".join([_git_line(diff.file), *modes, b"--- " + old, b"+++ " + new, b""])
    a, b = quote(b"a/", diff.file), quote(b"b/", diff.file)
    return b"\n".join([_git_line(diff.file), b"--- " + a, b"+++ " + b, b""])


def _git_line(file: str) -> bytes:
    return b"diff --git " + quote(b"a/", file) + b" " + quote(b"b/", file)


def quote(prefix: bytes, name: str) -> bytes:
    """A path as git writes it quoted in patch headers (always quoted: no ambiguity)."""
    out = bytearray(b'"')
    for byte in prefix + name.encode("utf-8", "surrogateescape"):
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif byte == 0x09:
            out += b"\\t"
        elif byte == 0x0A:
            out += b"\\n"
        elif byte < 0x20 or byte >= 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    out += b'"'
    return bytes(out)
