"""Fuzzy ranking of file paths for a quick-open query (no I/O).

Two stages. rapidfuzz scores every path in C (``process.cdist``): the query
must be a subsequence of the path (LCS equal to its length); whether it is
also a subsequence of the file name and how close the name is to the query
pick a few hundred candidates. Those get an fzf-style score in Python that
rewards matches at word starts, runs of consecutive characters and matches in
the file name, and yields the matched positions for highlighting.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import LCSseq

MAX_QUERY_LENGTH = 200
CANDIDATES = 300
_BOUNDARY = "/_-. "


@dataclass(frozen=True)
class FileList:
    """Paths prepared for matching: sorted shortest first, lower-cased, with their names."""

    paths: list[str]
    lower: list[str]
    names: list[str]
    lengths: np.ndarray

    @classmethod
    def build(cls, paths: list[str]) -> FileList:
        ordered = sorted(paths, key=lambda p: (len(p), p))
        lower = [p.lower() for p in ordered]
        names = [p.rpartition("/")[2] for p in lower]
        return cls(ordered, lower, names, np.fromiter(map(len, ordered), dtype=np.int32, count=len(ordered)))

    def __len__(self) -> int:
        return len(self.paths)


@dataclass(frozen=True)
class Match:
    path: str
    score: float
    positions: list[int]


def rank(query: str, files: FileList, limit: int) -> list[Match]:
    """The best ``limit`` matches for ``query``, best first."""
    needle = "".join(query.lower().split())[:MAX_QUERY_LENGTH]
    if not needle:
        return [Match(p, 0.0, []) for p in files.paths[:limit]]
    if not len(files):
        return []
    candidates = _candidates(needle, files)
    matches = []
    for index in candidates:
        scored = score_path(needle, files.paths[int(index)])
        if scored is not None:
            matches.append(Match(files.paths[int(index)], *scored))
    matches.sort(key=lambda m: (-m.score, len(m.path), m.path))
    return matches[:limit]


def _candidates(needle: str, files: FileList) -> np.ndarray:
    width = len(needle)
    in_path = process.cdist([needle], files.lower, scorer=LCSseq.similarity, score_cutoff=width, dtype=np.int32)[0]
    hits = np.flatnonzero(in_path)
    if hits.size <= CANDIDATES:
        return hits
    names = files.names
    in_name = process.cdist([needle], names, scorer=LCSseq.similarity, score_cutoff=width, dtype=np.int32)[0]
    closeness = process.cdist([needle], names, scorer=fuzz.ratio, dtype=np.int32)[0]
    key = (in_name[hits] > 0) * 10_000 + closeness[hits] * 20 - files.lengths[hits]
    best = np.argpartition(-key, CANDIDATES)[:CANDIDATES]
    return hits[best]  # type: ignore[no-any-return]


def score_path(needle: str, path: str) -> tuple[float, list[int]] | None:
    """fzf-style score and matched positions of ``needle`` (lower-case) in ``path``, or None."""
    lower = path.lower()
    if len(lower) != len(path):
        # Lower-casing changed the length (rare letters such as U+0130): match on one string.
        path = lower
    name_start = lower.rfind("/") + 1
    positions = _tight_match(needle, lower, name_start)
    in_name = positions is not None
    if positions is None:
        positions = _tight_match(needle, lower, 0)
        if positions is None:
            return None
    score = 2000.0 if in_name else 1000.0
    previous = -2
    for position in positions:
        score += 16
        if position == previous + 1:
            score += 18
        if position == 0 or lower[position - 1] in _BOUNDARY:
            score += 14 if position != name_start else 30
        elif path[position].isupper() and path[position - 1].islower():
            score += 12
        if previous >= 0 and position > previous + 1:
            score -= min(position - previous - 1, 12)
        previous = position
    score -= len(path) * 0.25
    return score, positions


def _tight_match(needle: str, text: str, start: int) -> list[int] | None:
    """Leftmost end, then the tightest start for it (fzf v1), as positions of each character."""
    index = start
    for char in needle:
        index = text.find(char, index)
        if index == -1:
            return None
        index += 1
    end = index - 1
    positions = []
    cursor = end
    for char in reversed(needle):
        cursor = text.rfind(char, start, cursor + 1)
        positions.append(cursor)
        cursor -= 1
    positions.reverse()
    return positions
