"""Terminal output as text: escape sequences stripped (``terax_jupyter.ansi``, shared with the
notebook views), or rendered by a VT emulator (pyte)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from terax_jupyter.ansi import strip

if TYPE_CHECKING:
    import pyte

__all__ = ["RENDER_LIMIT", "last_lines", "render", "strip"]

RENDER_LIMIT = 256 * 1024
# What rendering text needs of CSI is cursor movement, erasing, scrolling and modes. Graphic
# renditions (colours; underline styles with ':' sub-parameters, ``ESC[4:3m``) and private or
# extended sequences (``ESC[?4m`` vim 9 sends, ``ESC[>4;2m``, ``ESC[=5u``, ``ESC[<u``, DECRQM
# ``ESC[?25$p``, ``ESC[?1;2c``) change no character, and pyte 0.8 raises on some of them or
# prints others as text: they are dropped before it sees them. DEC modes (``ESC[?1049h``, the
# alternate screen; ``ESC[?7l``, no wrap) stay.
_NOT_TEXT = re.compile(
    r"\x1b\[[0-9;:]*m"
    r"|\x1b\[[<=>?][0-9;:]*[ -/]*[@-~](?<![hl])"
    r"|\x1b\[[<=>][0-9;:]*[ -/]*[hl]"
    r"|\x1b\[[0-9;]*:[0-9;:]*[ -/]*[@-~]"
    r"|\x1b\[[0-9;?]*[ -/]+[@-~]"
)


def render(data: bytes, columns: int) -> str:
    """What a terminal of ``columns`` would show, scrolled-off lines included; the plain
    text (``strip``) when the emulator cannot follow the output.

    pyte is a faithful but slow emulator, so only the last ``RENDER_LIMIT`` bytes are fed.
    """
    try:
        return _render(data, columns)
    except Exception:  # an emulator bug must not take the text away (it was a 500)
        return strip(data)


def _render(data: bytes, columns: int) -> str:
    if len(data) > RENDER_LIMIT:
        data = data[-RENDER_LIMIT:]
        first_newline = data.find(b"\n")
        data = data[first_newline + 1 :] if first_newline != -1 else data
    text = _NOT_TEXT.sub("", data.decode("utf-8", "replace")).replace("\n", "\r\n")
    # Enough rows that nothing scrolls off: every line, plus every wrap a line can need.
    rows = text.count("\n") + len(text) // max(columns, 2) + 2
    import pyte  # loaded on first use: an idle server does not need the emulator

    screen = pyte.Screen(max(columns, 2), min(rows, 100_000))
    stream = pyte.Stream(screen)
    stream.feed(text)
    lines = _screen_lines(screen)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _screen_lines(screen: pyte.Screen) -> list[str]:
    """The screen's lines from the cells written (``Screen.display`` visits every cell)."""
    from pyte.screens import wcwidth  # the width the emulator laid the cells out with

    lines = []
    for y in range(screen.lines):
        row = screen.buffer.get(y)
        if not row:
            lines.append("")
            continue
        parts = []
        column = 0
        for x in sorted(row):
            if x >= screen.columns:
                break  # cells pushed off the line's end (insertions) are not shown
            if x < column:
                continue  # the second cell of a wide character
            if x > column:
                parts.append(" " * (x - column))
            char = row[x].data
            parts.append(char)
            column = x + (2 if char and wcwidth(char[0]) == 2 else 1)
        lines.append("".join(parts).rstrip())
    return lines


def last_lines(text: str, count: int) -> str:
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines[-count:])
