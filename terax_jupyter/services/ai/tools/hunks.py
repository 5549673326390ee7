"""Line diffs as numbered hunks, and applying only the hunks a person approved."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.ai.tools.base import Hunk

if TYPE_CHECKING:
    from collections.abc import Iterable

NO_NEWLINE = "\\ No newline at end of file"
Opcode = tuple[str, int, int, int, int]


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept, split at ``\\n`` only (``\\r\\n`` stays whole; form
    feeds and U+2028 are not line breaks in a source file). The last line may lack one."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def diff_hunks(
    old: str, new: str, *, context: int = 3, path: str = "file"
) -> tuple[str, list[Hunk]]:
    """The unified diff of ``old`` -> ``new`` and its hunks, numbered from 0 in file order.

    Each hunk line is ``" "``, ``"-"`` or ``"+"`` and the line without its ``\\n`` (a
    ``\\r`` of a CRLF file stays, as in git's patches), followed by ``NO_NEWLINE`` when the
    line is the last one and has no newline. Identical texts give ``("", [])``.
    """
    a, b = split_lines(old), split_lines(new)
    hunks = [_hunk(index, group, a, b) for index, group in enumerate(_groups(a, b, context))]
    if not hunks:
        return "", []
    body = [f"--- a/{path}", f"+++ b/{path}"]
    for hunk in hunks:
        body.append(hunk.header)
        body.extend(hunk.lines)
    return "\n".join(body) + "\n", hunks


def apply_hunks(old: str, new: str, selected: Iterable[int], *, context: int = 3) -> str:
    """``old`` with only the changes of the ``selected`` hunks of ``diff_hunks(old, new)``.

    Every hunk selected gives ``new``, none gives ``old``. ``context`` must be the one the
    hunks were numbered with: it decides where one hunk ends and the next begins.
    """
    a, b = split_lines(old), split_lines(new)
    groups = list(_groups(a, b, context))
    chosen = set(selected)
    unknown = sorted(i for i in chosen if not 0 <= i < len(groups))
    if unknown:
        raise InvalidRequest(
            f"No hunk {', '.join(map(str, unknown))}: the change has {len(groups)} hunks.",
            reason="invalid_hunk",
        )
    # A change belongs to exactly one group; grouping only trims the equal runs between them.
    taken = {
        (i1, i2, j1, j2)
        for index, group in enumerate(groups)
        if index in chosen
        for tag, i1, i2, j1, j2 in group
        if tag != "equal"
    }
    out: list[str] = []
    for tag, i1, i2, j1, j2 in _matcher(a, b).get_opcodes():
        if tag != "equal" and (i1, i2, j1, j2) in taken:
            out.extend(b[j1:j2])
        else:
            out.extend(a[i1:i2])
    return "".join(out)


def _matcher(a: list[str], b: list[str]) -> difflib.SequenceMatcher[str]:
    return difflib.SequenceMatcher(None, a, b)


def _groups(a: list[str], b: list[str], context: int) -> Iterable[list[Opcode]]:
    return _matcher(a, b).get_grouped_opcodes(context)


def _hunk(index: int, group: list[Opcode], a: list[str], b: list[str]) -> Hunk:
    old_start, old_lines = _range(group[0][1], group[-1][2])
    new_start, new_lines = _range(group[0][3], group[-1][4])
    lines: list[str] = []
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            lines.extend(_shown(" ", a[i1:i2]))
            continue
        if tag in ("replace", "delete"):
            lines.extend(_shown("-", a[i1:i2]))
        if tag in ("replace", "insert"):
            lines.extend(_shown("+", b[j1:j2]))
    header = f"@@ -{old_start},{old_lines} +{new_start},{new_lines} @@"
    return Hunk(index, header, old_start, old_lines, new_start, new_lines, lines)


def _range(start: int, stop: int) -> tuple[int, int]:
    """Unified diff numbering: 1-based first line; an empty range names the line before it."""
    length = stop - start
    return (start + 1 if length else start), length


def _shown(prefix: str, lines: list[str]) -> list[str]:
    shown = []
    for line in lines:
        if line.endswith("\n"):
            shown.append(prefix + line[:-1])
        else:
            shown.extend((prefix + line, NO_NEWLINE))
    return shown
