"""GrepSearch: content search streamed file by file, with ripgrep or a pure-Python fallback."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import stat
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
    from collections.abc import AsyncIterator

    from terax_jupyter.security import CheckedPath, SecurityLayer

CASE_MODES = ("smart", "sensitive", "insensitive")
MAX_PATTERN_LENGTH = 1000
# The Python fallback reads whole files into memory; it skips larger ones.
FALLBACK_MAX_FILESIZE = 64 * 1024 * 1024
MAX_LINE_CHARS = 400


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

    async def search(self, query: GrepQuery) -> AsyncIterator[dict[str, Any]]:
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
    ) -> AsyncIterator[_FileMatches]:
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
        try:
            async for lines in events:
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
                            current.matches.append(_match_from_ripgrep(data))
                    elif kind == "begin":
                        data = _data(line)
                        if data is None:
                            continue
                        relative = _text(data.get("path", {})).removeprefix("./")
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
                            yield current
                        current = None
        finally:
            await events.aclose()

    async def _python(self, top: CheckedPath, query: GrepQuery) -> AsyncIterator[_FileMatches]:
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


@dataclass
class _FileMatches:
    path: str
    matches: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False


def _data(line: str) -> dict[str, Any] | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    data = event.get("data", {}) if isinstance(event, dict) else None
    return data if isinstance(data, dict) else None


def _match_from_ripgrep(data: dict[str, Any]) -> dict[str, Any]:
    lines = data.get("lines", {})
    submatches = data.get("submatches", [])
    number = int(data.get("line_number") or 0)
    text = lines.get("text")
    if isinstance(text, str) and text.isascii():
        # The common case: rg's byte offsets are character offsets already.
        ranges = [[sub.get("start", 0), sub.get("end", 0)] for sub in submatches]
        return _clip(number, text.rstrip("\r\n"), ranges)
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
    return _clip(number, text, ranges)


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
