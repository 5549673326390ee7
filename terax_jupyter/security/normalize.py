"""Pure path-string normalization: what a path means, before anything touches the disk."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import InvalidPath

if TYPE_CHECKING:
    from collections.abc import Callable

# Linux PATH_MAX and NAME_MAX; Windows long paths stay well inside both.
MAX_PATH_BYTES = 4096
MAX_SEGMENT_BYTES = 255

_DRIVE = re.compile(r"^/?[A-Za-z]:(?=/|$)")
_WINDOWS_DEVICE_PREFIX = re.compile(r"^//[?.]/")
_UNC_GLOBALROOT = re.compile(r"^/\?\?/")
_MULTI_SLASH = re.compile(r"/{2,}")


def reject_unusable(path: object) -> str:
    """Raise InvalidPath for anything that is not a plausible path string.

    Control bytes (C0, DEL, C1) and Unicode format characters (zero-width
    joiners, bidi overrides) have no business in a path a person typed: they
    are how a path is made to look like another one.
    """
    if not isinstance(path, str):
        raise InvalidPath("A path must be a string.")
    if path == "" or path.strip() == "":
        raise InvalidPath("The path is empty.")
    for ch in path:
        code = ord(ch)
        if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            raise InvalidPath(f"The path contains a control character (U+{code:04X}).")
        # Line and paragraph separators break a path across lines like a newline would.
        if unicodedata.category(ch) in ("Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            raise InvalidPath(
                f"The path contains an invisible or unassigned character (U+{code:04X})."
            )
    encoded_length = len(path.encode("utf-8"))
    if encoded_length > MAX_PATH_BYTES:
        raise InvalidPath(
            f"The path is too long ({encoded_length} bytes; the limit is {MAX_PATH_BYTES})."
        )
    for segment in path.replace("\\", "/").split("/"):
        if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise InvalidPath(f"A path segment is longer than {MAX_SEGMENT_BYTES} bytes.")
    return path


def to_slashes(path: str) -> str:
    """Backslashes to slashes, device prefixes (``//?/``, ``//./``) off, runs of ``/`` collapsed."""
    text = path.replace("\\", "/")
    device = _WINDOWS_DEVICE_PREFIX.match(text) or _UNC_GLOBALROOT.match(text)
    if device:
        text = "/" + text[device.end() :]
        # ``//?/UNC/server/share`` names ``//server/share``; a plain ``/unc`` is just a folder.
        if text.lower().startswith("/unc/"):
            text = "/" + text[len("/unc/") :]
    return _MULTI_SLASH.sub("/", text)


def strip_drive(path: str) -> str:
    """``C:/x`` and ``/C:/x`` become ``/x``: drive letters do not change what a name means."""
    match = _DRIVE.match(path)
    if match:
        rest = path[match.end() :]
        return rest if rest.startswith("/") else "/" + rest
    return path


def strip_segment_decorations(segment: str) -> str:
    """What Windows would open for a segment: no ``:stream`` suffix, no trailing dots or spaces."""
    if segment in (".", ".."):
        return segment
    if ":" in segment:
        segment = segment.split(":", 1)[0]
    stripped = segment.rstrip(". ")
    return stripped or segment


@lru_cache(maxsize=1)
def _homoglyph_fold() -> dict[int, str]:
    """Non-ASCII characters that look like an ASCII letter, digit or ``._-``, mapped to it."""
    # Loaded on first use: the data takes ~7 MiB, which an idle server does not need.
    from confusable_homoglyphs.confusables import confusables_data

    table: dict[int, str] = {}
    for char, homoglyphs in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        for glyph in homoglyphs:
            candidate = glyph["c"]
            if (
                len(candidate) == 1
                and candidate.isascii()
                and (candidate.isalnum() or candidate in "._-")
            ):
                table[ord(char)] = candidate.lower()
                break
    return table


def fold_for_matching(text: str, *, look_alikes_first: bool = False) -> str:
    """The form the deny-list compares: NFKC, case-folded, look-alike letters folded to ASCII.

    Case-folding first reads Cyrillic capital I (U+0406) as ``i``; look-alikes first
    reads Greek capital epsilon (U+0395) as ``e`` (its lower case resembles no ASCII
    letter). The deny-list checks both orders.
    """
    folded = unicodedata.normalize("NFKC", text)
    if look_alikes_first and not folded.isascii():
        folded = folded.translate(_homoglyph_fold())
    folded = folded.casefold()
    if folded.isascii():
        return folded
    folded = folded.translate(_homoglyph_fold())
    # Folding can expose combining marks next to letters (e + U+0301); drop them.
    decomposed = unicodedata.normalize("NFKD", folded)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def matching_forms(path: str) -> list[str]:
    """Every spelling of ``path`` the deny-list must see: literal and as Windows would read it.

    Each form is absolute-or-relative as given, ``/``-separated, case-folded (with
    look-alikes folded in both orders), and has ``.`` segments removed (``..`` is
    kept: the literal check must not be fooled into looking at a different path
    than the one asked for).
    """
    base = strip_drive(to_slashes(path))
    literal = _join_segments(base, lambda s: s)
    windows = _join_segments(base, strip_segment_decorations)
    forms: list[str] = []
    for spelling in dict.fromkeys((literal, windows)):
        for look_alikes_first in (False, True) if not spelling.isascii() else (False,):
            form = fold_for_matching(spelling, look_alikes_first=look_alikes_first)
            if form not in forms:
                forms.append(form)
    return forms


def _join_segments(path: str, transform: Callable[[str], str]) -> str:
    absolute = path.startswith("/")
    segments = [transform(s) for s in path.split("/") if s not in ("", ".")]
    joined = "/".join(segments)
    return "/" + joined if absolute else joined
