"""Terminal escapes out of text: what a terminal, a kernel's stream or a traceback printed,
as plain text. Pure (regular expressions only): every layer may use it."""

from __future__ import annotations

import re

# CSI, OSC (BEL or ST terminated), strings (DCS, APC, ...), character set selections, other
# two-byte escapes (keypad modes, cursor save and restore, ...), and the C0 controls but \n, \r,
# \t, \b (a stray ESC included).
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]+[0-~]"
    r"|\x1b[0-Z\\-~]"
    r"|[\x00-\x07\x0b\x0c\x0e-\x1f\x7f]"
)

# Erase in line (``ESC[K``, ``ESC[1K``, ``ESC[2K``): what a redrawn prompt or a progress line
# (``\r ESC[K`` then the new text) leaves. Kept through the stripping as noncharacters, which
# no text holds, and applied with the carriage returns.
_ERASE_IN_LINE = re.compile(r"\x1b\[([012]?)K")
_ERASE_TO_END, _ERASE_TO_START, _ERASE_ALL = "\ufdd0", "\ufdd1", "\ufdd2"
_ERASES = {"": _ERASE_TO_END, "0": _ERASE_TO_END, "1": _ERASE_TO_START, "2": _ERASE_ALL}
_ERASE_MARK = re.compile(f"([{_ERASE_TO_END}{_ERASE_TO_START}{_ERASE_ALL}])")


def strip(data: bytes) -> str:
    """Plain text: escapes removed; carriage returns, line erases and backspaces applied per
    line."""
    decoded = data.decode("utf-8", "replace")
    if "\x1b[" in decoded:
        decoded = _ERASE_IN_LINE.sub(lambda match: _ERASES[match.group(1)], decoded)
    text = _ESCAPES.sub("", decoded)
    lines = []
    for line in text.split("\n"):
        if "\r" in line or _ERASE_MARK.search(line):
            line = _overwrite(line)
        if "\b" in line:
            line = _backspace(line)
        lines.append(line.rstrip())
    return "\n".join(lines)


def _overwrite(line: str) -> str:
    """A line as its carriage returns (back to column 0) and erases leave it."""
    result = ""
    for segment in line.split("\r"):
        cursor = 0
        for piece in _ERASE_MARK.split(segment):
            if piece == _ERASE_TO_END:
                result = result[:cursor]
            elif piece == _ERASE_TO_START:  # through the cursor's own column
                result = " " * min(cursor + 1, len(result)) + result[cursor + 1 :]
            elif piece == _ERASE_ALL:
                result = " " * cursor
            else:
                result = result[:cursor] + piece + result[cursor + len(piece) :]
                cursor += len(piece)
    return result


def _backspace(line: str) -> str:
    out: list[str] = []
    for char in line:
        if char == "\b":
            if out:
                out.pop()
        else:
            out.append(char)
    return "".join(out)
