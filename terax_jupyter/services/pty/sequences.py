"""A streaming scanner for the terminal sequences the server acts on.

It never changes the byte stream; it reports, with their offsets, the few
sequences the server cares about: OSC 7 (cwd), OSC 133 (prompt and command
marks; ``P;k=c`` is a continuation prompt), OSC 0/2 (title), OSC 9 and 777
(notifications), the alternate screen switches, and device queries (DA1, DA2,
CPR, DSR). Sequences split across reads are completed on the next read; an
unterminated OSC longer than the cap is dropped instead of buffered.

``without_queries`` removes every sequence that asks the terminal something
(the server answers a few itself when no view is attached; replayed output must
ask nothing at all).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

OSC_CAP = 8192

_PATTERN = re.compile(
    rb"\x1b\](?P<osc>[^\x07\x1b]{0,%d})(?:\x07|\x1b\\)"
    rb"|\x1b\[\?(?P<modes>[0-9;]{1,32})(?P<set>[hl])"
    rb"|\x1b\[(?P<query>>?0?c|[56]n)" % OSC_CAP
)
_OSC_BREAK = re.compile(rb"[\x07\x1b]")
# Every sequence that makes a terminal answer. Replayed output must ask nothing: the
# terminal would answer again and the answer would reach the shell as typed input. xterm.js
# also reads the C1 forms (U+009B CSI, U+009D OSC, U+0090 DCS, U+009C ST, UTF-8 encoded).
# Forms it parses that this misses (C0 controls inside a sequence) are answered during the
# replay, and the views drop those answers (``common/terminal/reports.ts``): this is the first wall.
_CSI, _OSC, _DCS = rb"(?:\x1b\[|\xc2\x9b)", rb"(?:\x1b\]|\xc2\x9d)", rb"(?:\x1bP|\xc2\x90)"
_ST = rb"(?:\x1b\\|\xc2\x9c)"
_QUERY = re.compile(
    _CSI + rb"(?:"
    rb"[>=]?0?c"  # DA1, DA2, DA3
    rb"|\??\d+n"  # DSR and CPR, ANSI and DEC forms
    rb"|\??\d+\$p"  # DECRQM
    rb"|\d+\$w"  # DECRQPSR
    rb"|>0?q"  # XTVERSION
    rb"|(?:1[13-689]|2[01])(?:;\d+)*t"  # XTWINOPS reports (state, position, sizes, titles)
    rb"|\?\d*m"  # XTQMODKEYS
    rb"|\?u"  # the kitty keyboard protocol's flags
    rb"|[01]?x"  # DECREQTPARM
    rb")|"
    + _OSC  # colours, the clipboard
    + rb"(?:[45](?:;\d+;\?)+|1\d(?:;\?)+|52;[a-z0-9]*;\?)(?:\x07|"
    + _ST
    + rb")|"
    + _DCS  # DECRQSS, XTGETTCAP
    + rb"(?:\$q|\+q)[^\x07\x1b\x9c]{0,256}"
    + _ST
)
# Where a sequence may begin: ESC, a C1 introducer, or a lead byte the chunk cut off from one.
_INTRODUCER = re.compile(rb"\x1b|\xc2(?:[\x90\x9b\x9d]|\Z)")
# The longest query ``_QUERY`` must see whole: a replay chunk never ends inside one.
QUERY_MAX = 280
_ALT_SCREEN_MODES = {b"47", b"1047", b"1049"}
_QUERIES = {b"c": "da1", b"0c": "da1", b">c": "da2", b">0c": "da2", b"6n": "cpr", b"5n": "dsr"}
_MAX_TITLE = 512


@dataclass(frozen=True)
class Sequence:
    """One recognised sequence: offsets in the chunk fed (``start`` < 0: it began earlier)."""

    start: int
    end: int
    kind: str  # "mark" | "cwd" | "title" | "notify" | "alt_screen" | "query"
    value: str = ""
    params: dict[str, str] = field(default_factory=dict)


class SequenceScanner:
    """Feed output chunks in order; get the sequences that ended in each chunk."""

    def __init__(self) -> None:
        self._carry = b""

    def feed(self, chunk: bytes) -> list[Sequence]:
        if not self._carry and b"\x1b" not in chunk:
            return []  # nothing to complete, nothing begins here (a memchr, not a regex scan)
        data = self._carry + chunk if self._carry else chunk
        shift = len(data) - len(chunk)
        found: list[Sequence] = []
        last_end = 0
        for match in _PATTERN.finditer(data):
            last_end = match.end()
            sequence = _interpret(match, match.start() - shift, last_end - shift)
            if sequence is not None:
                found.append(sequence)
        self._carry = _incomplete_tail(data, last_end)
        return found


def without_queries(data: bytes) -> bytes:
    """``data`` without any sequence that asks the terminal something (see ``_QUERY``).

    Output replayed to a terminal must not ask it anything: it would answer again, and the
    answer would arrive as typed input at the shell's prompt.
    """
    return _QUERY.sub(b"", data) if b"\x1b" in data or b"\xc2" in data else data


def query_safe_end(data: bytes) -> int:
    """How much of ``data`` a replay chunk may take so that no query in it is cut in two.

    A query cut in two escapes ``without_queries`` in both halves and is answered. Past the
    first ESC of the last ``QUERY_MAX`` bytes nothing is taken (a query that begins there
    goes whole into the next chunk), nor from the start of a query that ESC is inside of
    (the ESC of an OSC's or a DCS's terminator).
    """
    found = _INTRODUCER.search(data, max(0, len(data) - QUERY_MAX))
    escape = found.start() if found else -1
    if escape <= 0:
        return len(data)
    for match in _QUERY.finditer(data, max(0, escape - QUERY_MAX)):
        if match.start() >= escape:
            break
        if match.end() > escape:
            return match.start() or len(data)
    return escape


def _incomplete_tail(data: bytes, last_end: int) -> bytes:
    """The start of a sequence the chunk cut off, to complete with the next one."""
    escape = data.rfind(b"\x1b", last_end)
    if escape == -1:
        return b""
    if escape == len(data) - 1 and escape > last_end:
        # A lone ESC at the end may be the first byte of an OSC's ST terminator ("ESC \").
        osc = data.rfind(b"\x1b]", last_end, escape)
        if osc != -1 and not _OSC_BREAK.search(data, osc + 2, escape):
            escape = osc
    tail = data[escape:]
    if len(tail) > OSC_CAP + 3:
        return b""
    if tail.startswith(b"\x1b]"):
        # An OSC that a BEL or ST has not closed yet (an ESC inside would have ended it).
        return tail
    if len(tail) <= 40 and (tail == b"\x1b" or tail.startswith(b"\x1b[")):
        body = tail[2:]
        if not body or all(b in b"0123456789;?>" for b in body):
            return tail
    return b""


def _interpret(match: re.Match[bytes], start: int, end: int) -> Sequence | None:
    osc = match.group("osc")
    if osc is not None:
        return _interpret_osc(osc, start, end)
    modes = match.group("modes")
    if modes is not None:
        if any(mode in _ALT_SCREEN_MODES for mode in modes.split(b";")):
            state = "on" if match.group("set") == b"h" else "off"
            return Sequence(start, end, "alt_screen", state)
        return None
    return Sequence(start, end, "query", _QUERIES[match.group("query")])


def _interpret_osc(payload: bytes, start: int, end: int) -> Sequence | None:
    code, _, rest = payload.partition(b";")
    text = rest.decode("utf-8", "replace")
    if code == b"133":
        letter, _, parameters = text.partition(";")
        if letter not in ("A", "B", "C", "D", "P"):
            return None
        params = _key_values(parameters)
        return Sequence(start, end, "mark", letter, params)
    if code == b"7":
        path = _file_url_path(text)
        return Sequence(start, end, "cwd", path) if path else None
    if code in (b"0", b"2"):
        return Sequence(start, end, "title", _printable(text)[:_MAX_TITLE])
    if code == b"777":
        kind, _, message = text.partition(";")
        if kind == "notify":
            return Sequence(
                start, end, "notify", _printable(message.replace(";", ": ", 1))[:_MAX_TITLE]
            )
        return None
    if code == b"9" and text and not text[0].isdigit():
        # OSC 9 is a notification in iTerm2's dialect; "9;4;..." is ConEmu's progress bar.
        return Sequence(start, end, "notify", _printable(text)[:_MAX_TITLE])
    return None


def _key_values(text: str) -> dict[str, str]:
    """``D;0;nonce=x`` style parameters: positional ones keyed by index, others by name."""
    params: dict[str, str] = {}
    for index, part in enumerate(text.split(";") if text else []):
        key, equals, value = part.partition("=")
        if equals:
            params[key] = value
        else:
            params[str(index)] = part
    return params


def _file_url_path(text: str) -> str:
    try:
        parts = urlsplit(text)
    except ValueError:
        return ""
    if parts.scheme not in ("file", "kitty-shell-cwd") or not parts.path:
        return ""
    return unquote(parts.path)


def _printable(text: str) -> str:
    return "".join(ch for ch in text if ch.isprintable())
