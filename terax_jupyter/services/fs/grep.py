"""GrepSearch: content search streamed file by file, with ripgrep or a pure-Python fallback."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import re
import stat
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from traitlets import Int, Unicode
from traitlets.config import LoggingConfigurable
from wcmatch import glob as wcglob

from terax_jupyter.exceptions import InvalidPattern, InvalidRequest, TeraxError
from terax_jupyter.security import Access, fileio
from terax_jupyter.security.normalize import reject_unusable
from terax_jupyter.security.walk import walk_files
from terax_jupyter.services.fs import ripgrep
from terax_jupyter.services.fs.encoding import decode
from terax_jupyter.services.fs.ignore import PRUNED_DIRECTORIES, IgnoreRules

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

    from terax_jupyter.security import CheckedPath, SecurityLayer

CASE_MODES = ("smart", "sensitive", "insensitive")
MAX_PATTERN_LENGTH = 1000
# The Python fallback reads whole files into memory; it skips larger ones.
FALLBACK_MAX_FILESIZE = 64 * 1024 * 1024
MAX_LINE_CHARS = 400
# A matched line longer than this is remembered by its digest until it is verified.
_KEEP_LINE_BYTES = 4096
# rg reads past a UTF-8 byte-order mark (its offsets start after it) and transcodes UTF-16
# with one to UTF-8 (its offsets are into that text): verifying those means transcoding the
# file the same way, up to this size.
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}
_TRANSCODE_LIMIT = 64 * 1024 * 1024
# Lines that all end within this many bytes of the start are checked with one read.
_ONE_READ = 64 * 1024
# Re-reads run on the event loop for chunks of at most this many files, while one file
# takes less than this (so the loop is never held for more than about 6 ms).
_INLINE_FILES = 32
_INLINE_FILE_SECONDS = 200e-6


@dataclass
class GrepQuery:
    pattern: str
    path: str = ""
    regex: bool = True
    case: str = "smart"
    whole_word: bool = False
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    max_results: int = 2000
    max_per_file: int = 200

    def validate(self) -> None:
        if not self.pattern:
            raise InvalidPattern("The search pattern is empty.")
        if len(self.pattern) > MAX_PATTERN_LENGTH:
            raise InvalidPattern(
                f"The search pattern is longer than {MAX_PATTERN_LENGTH} characters."
            )
        if "\0" in self.pattern:
            raise InvalidPattern("The search pattern contains a NUL byte.")
        if "\n" in self.pattern or "\r" in self.pattern:
            raise InvalidPattern("The search pattern spans lines; search within one line.")
        if self.case not in CASE_MODES:
            raise InvalidRequest(
                f"'case' must be one of {', '.join(CASE_MODES)}.", reason="invalid_parameter"
            )
        for glob in self.include + self.exclude:
            reject_unusable(glob)
            _Glob(glob)


class GrepSearch(LoggingConfigurable):
    """Searches file contents under a workspace folder; results stream as they are found."""

    max_filesize = Int(
        0,
        help="Files larger than this (bytes) are not searched; 0 searches every size with "
        "ripgrep (the Python fallback never reads more than 64 MiB of one file).",
    ).tag(config=True)
    ripgrep_path = Unicode("", help="Path of the rg binary; empty finds the bundled one.").tag(
        config=True
    )

    def __init__(self, security: SecurityLayer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.security = security

    def engine(self) -> str:
        return "ripgrep" if ripgrep.find_ripgrep(self.ripgrep_path) else "python"

    async def search(self, query: GrepQuery) -> AsyncGenerator[dict[str, Any], None]:
        """Yield ``{"type": "file", ...}`` per file with matches, then one ``summary``.

        Validation errors and a bad pattern raise before the first item.
        """
        query.validate()
        top = self.security.paths.check(query.path or self.security.roots.server_root, Access.READ)
        if not stat.S_ISDIR(fileio.stat_path(top).st_mode):
            raise InvalidRequest(f"{query.path} is not a folder.", reason="not_a_directory")
        rg = ripgrep.find_ripgrep(self.ripgrep_path)
        source = self._ripgrep(rg, top, query) if rg else self._python(top, query)
        started = time.perf_counter()
        totals = {"files": 0, "matches": 0}
        truncated = False
        prefix = self._prefix(top)
        try:
            async for found in source:
                remaining = query.max_results - totals["matches"]
                if len(found.matches) > remaining:
                    found.matches = found.matches[:remaining]
                    truncated = True
                totals["files"] += 1
                totals["matches"] += len(found.matches)
                yield {
                    "type": "file",
                    "path": prefix + found.path,
                    "matches": found.matches,
                    "truncated": found.truncated,
                }
                if totals["matches"] >= query.max_results:
                    truncated = True
                    break
        finally:
            await source.aclose()
        yield {
            "type": "summary",
            **totals,
            "truncated": truncated,
            "engine": "ripgrep" if rg else "python",
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        }

    # -- engines ---------------------------------------------------------------------

    async def _ripgrep(
        self, rg: str, top: CheckedPath, query: GrepQuery
    ) -> AsyncGenerator[_FileMatches, None]:
        events = ripgrep.grep(
            rg,
            top.path,
            query.pattern,
            fixed_strings=not query.regex,
            case=query.case,
            whole_word=query.whole_word,
            include=query.include,
            exclude=query.exclude,
            max_filesize=self.max_filesize,
        )
        current: _FileMatches | None = None
        deny = self.security.deny
        # rg lets an include glob override .gitignore for files; the Python engine does not,
        # and neither should any result: ignored stays ignored.
        rules = IgnoreRules(top.root.path) if query.include else None
        # Matches the caller would cut (past max_per_file, or past max_results overall) are
        # counted, never parsed. ``budget`` is what search() will still take.
        budget = query.max_results
        room = seen = 0

        checks = _Checks(top)
        try:
            async for lines in events:
                finished: list[_FileMatches] = []
                for line in lines:
                    kind = ripgrep.event_type(line)
                    if kind == "match":
                        if current is None:
                            continue
                        seen += 1
                        if seen > query.max_per_file:
                            current.truncated = True
                        if seen > room:
                            continue
                        data = _data(line)
                        if data is not None:
                            match, span = _match_from_ripgrep(data)
                            current.matches.append(match)
                            current.spans.append(span)
                    elif kind == "begin":
                        data = _data(line)
                        if data is None:
                            continue
                        relative = _text(data.get("path", {}))
                        if os.sep != "/":
                            relative = relative.replace(os.sep, "/")
                        relative = relative.removeprefix("./")
                        absolute = os.path.join(top.path, relative)
                        # The bulk form of deny.check (same answer): a literal pre-filter
                        # clears an ordinary path without the full per-rule check.
                        skipped = bool(deny.denied_among([absolute])) or (
                            rules is not None and rules.is_ignored(absolute, is_dir=False)
                        )
                        current = None if skipped else _FileMatches(relative)
                        room, seen = min(query.max_per_file, budget), 0
                    elif kind == "end" and current is not None:
                        if current.matches:
                            budget -= len(current.matches)
                            finished.append(current)
                        current = None
                if not finished:
                    continue
                # rg opened each file by its path, and a path can be swapped for a link while
                # rg runs: nothing it reported leaves before it is re-read where it claims to
                # be (``_holds``).
                held = await self._verified(checks, finished)
                for found, holds in zip(finished, held, strict=True):
                    if holds:
                        yield found
                    else:
                        budget += len(found.matches)
        finally:
            checks.close()
            await events.aclose()

    async def _verified(self, checks: _Checks, files: list[_FileMatches]) -> list[bool]:
        """Which of rg's files (one chunk of its output) pass ``_holds``."""
        if len(files) <= checks.inline_files:
            return checks.run(files)
        return await asyncio.to_thread(checks.run, files)

    async def _python(
        self, top: CheckedPath, query: GrepQuery
    ) -> AsyncGenerator[_FileMatches, None]:
        expression = _compile(query)
        include = [_Glob(g) for g in query.include]
        exclude = [_Glob(g) for g in query.exclude]
        results = await asyncio.to_thread(
            self._python_search, top, query, expression, include, exclude
        )
        for found in results:
            yield found

    def _python_search(
        self,
        top: CheckedPath,
        query: GrepQuery,
        expression: re.Pattern[str],
        include: list[_Glob],
        exclude: list[_Glob],
    ) -> list[_FileMatches]:
        # The rules from the workspace root down, as rg reads the .gitignore of parent folders.
        rules = IgnoreRules(top.root.path)

        def skip_directory(path: str, name: str) -> bool:
            if name in PRUNED_DIRECTORIES or rules.is_ignored(path, is_dir=True):
                return True
            # rg prunes a folder an exclude glob names; an include glob never prunes one.
            relative = os.path.relpath(path, top.path).replace(os.sep, "/")
            return any(g.match(relative, is_dir=True) for g in exclude)

        walked = walk_files(
            top,
            self.security.deny,
            skip_directory=skip_directory,
            skip_file=lambda path: rules.is_ignored(path, is_dir=False),
            max_files=500_000,
            time_limit=60.0,
        )
        found: list[_FileMatches] = []
        budget = query.max_results
        for relative in sorted(walked.files):
            if include and not any(g.match(relative) for g in include):
                continue
            if any(g.match(relative) for g in exclude):
                continue
            try:
                # Not following links, as rg does not: a symlinked file is not searched.
                checked = self.security.paths.check(
                    os.path.join(top.path, relative), Access.READ, follow_symlinks=False
                )
                data, _ = fileio.read_bytes(checked, self.max_filesize or FALLBACK_MAX_FILESIZE)
            except (TeraxError, OSError):
                continue
            decoded = decode(data)
            if decoded.binary:
                continue
            matches = _FileMatches(relative)
            for number, line in enumerate(_lines(decoded.content), start=1):
                ranges = [
                    [m.start(), m.end()] for m in expression.finditer(line) if m.end() > m.start()
                ]
                if ranges:
                    if len(matches.matches) >= query.max_per_file:
                        matches.truncated = True
                        break
                    matches.matches.append(_clip(number, line, ranges))
            if matches.matches:
                found.append(matches)
                budget -= len(matches.matches)
                if budget <= 0:
                    break
        return found

    def _prefix(self, top: CheckedPath) -> str:
        shown = self.security.paths.display(top.path)
        return shown + "/" if shown else ""


class _Checks:
    """The re-reads of one grep, and where they run.

    A re-read is a few system calls on a file the page cache holds (rg just read it), so
    a thread hop per chunk of rg's output would cost more than the work (rg's output comes
    in chunks of one or two files). So they run on the event loop for chunks of a few files
    while each file takes a few microseconds, and in a thread otherwise: the first chunk
    is timed in the thread, and a slow filesystem (a network mount) keeps them there.
    The searched folder's descriptor is kept for the whole grep and proven again for each
    chunk; a run never overlaps another, and ``close`` while one runs in a thread leaves
    the closing to that run.
    """

    def __init__(self, top: CheckedPath) -> None:
        self.inline_files = 0
        self._listed = fileio.ListedFiles(top, max_open=64)
        self._lock = threading.Lock()
        self._running = self._closed = False

    def run(self, files: list[_FileMatches]) -> list[bool]:
        with self._lock:
            if self._closed:
                return [False] * len(files)
            self._running = True
        try:
            started = time.perf_counter()
            self._listed.prove_again()
            held = [_holds(self._listed, found) for found in files]
            per_file = (time.perf_counter() - started) / len(files)
            self.inline_files = _INLINE_FILES if per_file < _INLINE_FILE_SECONDS else 0
            return held
        finally:
            with self._lock:
                self._running = False
                if self._closed:
                    self._listed.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if not self._running:
                self._listed.close()


@dataclass
class _FileMatches:
    path: str
    matches: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    # Where rg found each match: (byte offset of the line, its length, its bytes or digest).
    spans: list[tuple[int, int, bytes]] = field(default_factory=list)


def _holds(listed: fileio.ListedFiles, found: _FileMatches) -> bool:
    """Whether the file rg named holds, where rg said, the lines rg reported.

    The file is opened through the verified I/O: every folder below the searched one
    proven to be the folder its canonical path names, the file itself not a link, a
    regular file the hard-link rule allows. So a file rg read through a link swapped in
    for a folder or a file (a protected file, a file outside the roots) is dropped: the
    file at the reported path does not hold those bytes, or cannot be opened that way.
    One open and, for the usual small file, one read.
    """
    spans = found.spans
    end = 3
    for offset, length, _ in spans:
        if offset < 0:
            return False
        end = max(end, offset + length)
    try:
        if end <= _ONE_READ:
            # The usual case: the lines lie near the start of the file; one read from 0.
            block = listed.read_head(found.path, end)
            head = block[:3]
            lines = [block[o : o + n] for o, n, _ in spans]
        else:
            head, *lines = listed.read_ranges(found.path, [(0, 3)] + [(o, n) for o, n, _ in spans])
        if head == _UTF8_BOM:
            lines = listed.read_ranges(found.path, [(o + 3, n) for o, n, _ in spans])
        elif head[:2] in _UTF16_BOMS:
            whole = listed.read_head(found.path, _TRANSCODE_LIMIT + 1)
            if len(whole) > _TRANSCODE_LIMIT:
                return False
            text = whole[2:].decode(_UTF16_BOMS[head[:2]], "replace").encode("utf-8")
            lines = [text[o : o + n] for o, n, _ in spans]
    except (TeraxError, OSError):
        # Not there, not a regular file, a link on the way, a file with other names.
        return False
    for actual, (_, length, expected) in zip(lines, spans, strict=True):
        if not _same_line(actual, expected, length):
            return False
    return True


def _same_line(actual: bytes, expected: bytes, length: int) -> bool:
    if len(actual) != length:
        return False
    if length > _KEEP_LINE_BYTES:
        return hashlib.blake2b(actual, digest_size=16).digest() == expected
    return actual == expected


def _span(offset: Any, raw: bytes) -> tuple[int, int, bytes]:
    position = offset if isinstance(offset, int) and offset >= 0 else -1
    if len(raw) > _KEEP_LINE_BYTES:
        return position, len(raw), hashlib.blake2b(raw, digest_size=16).digest()
    return position, len(raw), raw


def _data(line: str) -> dict[str, Any] | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    data = event.get("data", {}) if isinstance(event, dict) else None
    return data if isinstance(data, dict) else None


def _match_from_ripgrep(data: dict[str, Any]) -> tuple[dict[str, Any], tuple[int, int, bytes]]:
    """The match as sent to the client, and where rg saw it (for ``_holds``)."""
    lines = data.get("lines", {})
    submatches = data.get("submatches", [])
    number = int(data.get("line_number") or 0)
    offset = data.get("absolute_offset")
    text = lines.get("text")
    if isinstance(text, str) and text.isascii():
        # The common case: rg's byte offsets are character offsets already.
        ranges = [[sub.get("start", 0), sub.get("end", 0)] for sub in submatches]
        return _clip(number, text.rstrip("\r\n"), ranges), _span(offset, text.encode("ascii"))
    raw = _bytes(lines)
    text = raw.decode("utf-8", "replace").rstrip("\r\n")
    ranges = []
    for sub in submatches:
        start, end = sub.get("start", 0), sub.get("end", 0)
        if raw.isascii():
            ranges.append([start, end])
        else:
            ranges.append(
                [
                    len(raw[:start].decode("utf-8", "replace")),
                    len(raw[:end].decode("utf-8", "replace")),
                ]
            )
    return _clip(number, text, ranges), _span(offset, raw)


def _clip(number: int, text: str, ranges: list[list[int]]) -> dict[str, Any]:
    """Keep long lines readable: a window around the first match, ranges shifted to fit."""
    offset = 0
    if len(text) > MAX_LINE_CHARS:
        first = ranges[0][0] if ranges else 0
        offset = max(0, min(first - 60, len(text) - MAX_LINE_CHARS))
        text = text[offset : offset + MAX_LINE_CHARS]
        ranges = [
            [max(0, s - offset), min(MAX_LINE_CHARS, e - offset)]
            for s, e in ranges
            if e - offset > 0 and s - offset < MAX_LINE_CHARS
        ]
    return {"line": number, "text": text, "ranges": ranges, "offset": offset}


def _text(value: dict[str, Any]) -> str:
    if "text" in value:
        return str(value["text"])
    return os.fsdecode(base64.b64decode(value.get("bytes", "")))


def _bytes(value: dict[str, Any]) -> bytes:
    if "text" in value:
        return str(value["text"]).encode("utf-8")
    return base64.b64decode(value.get("bytes", ""))


def _lines(text: str) -> list[str]:
    """Lines as rg sees them: split at newlines only (not form feeds or U+2028), CR dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _has_uppercase(pattern: str, *, regex: bool) -> bool:
    """rg's smart case: an upper-case literal makes a search case-sensitive; an escape does not."""
    if regex:
        pattern = _ESCAPE.sub("", pattern)
    return any(ch.isupper() for ch in pattern)


_ESCAPE = re.compile(r"\\(?:[pP]\{[^}]*\}|.)", re.DOTALL)


def _compile(query: GrepQuery) -> re.Pattern[str]:
    source = query.pattern if query.regex else re.escape(query.pattern)
    if query.whole_word:
        # rg's -w: no word character right before or right after the match (unlike \b,
        # which for "foo(" would demand a word character after the parenthesis).
        source = rf"(?<!\w)(?:{source})(?!\w)"
    flags = 0
    if query.case == "insensitive" or (
        query.case == "smart" and not _has_uppercase(query.pattern, regex=query.regex)
    ):
        flags |= re.IGNORECASE
    try:
        return re.compile(source, flags)
    except re.error as error:
        raise InvalidPattern(f"The search pattern is not valid: {error}.") from None


class _Glob:
    """An include or exclude glob read the way rg reads ``--glob`` (gitignore rules).

    A glob without a ``/`` matches a name at any depth; one with a ``/`` is anchored at the
    searched folder; a trailing ``/`` matches folders only. Braces expand to several globs.
    """

    def __init__(self, glob: str) -> None:
        self.directory_only = glob.endswith("/")
        body = glob.rstrip("/")
        pattern = body.lstrip("/") if "/" in body else f"**/{body}"
        try:
            expressions = wcglob.translate(pattern, flags=_GLOB_FLAGS)[0]
            self._regexes = [re.compile(e) for e in expressions]
        except Exception as error:
            # wcmatch signals a brace expansion over its limit with its own exception class.
            raise InvalidPattern(f"The glob '{glob}' is not valid: {error}.") from None

    def match(self, relative: str, *, is_dir: bool = False) -> bool:
        if self.directory_only and not is_dir:
            return False
        return any(regex.match(relative) for regex in self._regexes)


_GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB
