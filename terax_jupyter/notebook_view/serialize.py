"""A notebook's JSON as the text Jupyter writes: sources split in lines, keys sorted,
indent 1, a final newline (so a change made here diffs like one made in Lab)."""

from __future__ import annotations

from typing import Any

from nbformat import from_dict
from nbformat.v4.nbjson import writes


def notebook_text(book: dict[str, Any]) -> str:
    return writes(from_dict(book)) + "\n"
