"""Fuzzy ranking of file paths for a quick-open query (no I/O).

Two stages. rapidfuzz scores every path in C (``process.cdist``): the query
must be a subsequence of the path (LCS equal to its length); whether it is
also a subsequence of the file name and how close the name is to the query
pick a few hundred candidates. Those get an fzf-style score in Python that
rewards matches at word starts, runs of consecutive characters and matches in
the file name, and yields the matched positions for highlighting.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import LCSseq

MAX_QUERY_LENGTH = 200
CANDIDATES = 300
RECENT_QUERIES = 8
_BOUNDARY = "/_-. "


@dataclass(frozen=True)
class FileList:
    """Paths prepared for matching: sorted shortest first, lower-cased, with their names.

    ``lower`` and ``names`` are object arrays so that a subset (the paths an earlier query
    left) is one fancy index away. The hits of recent queries are kept: a query that holds
    an earlier one as a subsequence can only match among that query's hits, which is what
    typing a query one character at a time produces.
    """

    paths: list[str]
    lower: np.ndarray
    names: np.ndarray
    lengths: np.ndarray
    name_lengths: np.ndarray
    _recent: deque[tuple[str, np.ndarray]] = field(
        init=False, default_factory=lambda: deque(maxlen=RECENT_QUERIES), compare=False, repr=False
    )
    _lock: threading.Lock = field(
        init=False, default_factory=threading.Lock, compare=False, repr=False
    )

    @classmethod
    def build(cls, paths: list[str]) -> FileList:
        # Two C-level sorts (stable) give the (length, path) order without a key tuple per path.
        ordered = sorted(paths)
        ordered.sort(key=len)
        # NUL never occurs in a path, and lower-casing never makes or removes one.
        lower = "\0".join(ordered).lower().split("\0") if ordered else []
        names = [p.rpartition("/")[2] for p in lower]
        return cls(
            ordered,
            _object_array(lower),
            _object_array(names),
            np.fromiter(map(len, ordered), dtype=np.int32, count=len(ordered)),
            np.fromiter(map(len, names), dtype=np.int32, count=len(names)),
        )

    def __len__(self) -> int:
        return len(self.paths)

    def pool_for(self, needle: str) -> np.ndarray | None:
        """The fewest indices sure to hold every path ``needle`` matches, or None for all."""
        with self._lock:
            recent = list(self._recent)
        pools = [hits for earlier, hits in recent if _is_subsequence(earlier, needle)]
        return min(pools, key=len) if pools else None

    def remember(self, needle: str, hits: np.ndarray) -> None:
        with self._lock:
            self._recent.append((needle, hits))


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
    hits = _hits(needle, files)
    if hits.size <= CANDIDATES:
        return hits
    common = _cdist(needle, files.names[hits], LCSseq.similarity)
    closeness = ratio_from_lcs(len(needle), files.name_lengths[hits], common)
    key = (common == len(needle)) * 10_000 + closeness * 20 - files.lengths[hits]
    best = np.argpartition(-key, CANDIDATES)[:CANDIDATES]
    return hits[best]


def _hits(needle: str, files: FileList) -> np.ndarray:
    """Indices (ascending) of the paths that hold ``needle`` as a subsequence."""
    pool = files.pool_for(needle)
    if pool is None:
        hits = np.flatnonzero(_cdist(needle, files.lower, LCSseq.similarity, cutoff=len(needle)))
    else:
        found = _cdist(needle, files.lower[pool], LCSseq.similarity, cutoff=len(needle))
        hits = pool[np.flatnonzero(found)]
    files.remember(needle, hits)
    return hits


def ratio_from_lcs(width: int, lengths: np.ndarray, common: np.ndarray) -> np.ndarray:
    """``fuzz.ratio`` of a ``width``-long needle and strings of ``lengths``, from their LCS.

    The ratio is defined as 100 * 2 * LCS / total length; computed in rapidfuzz's order and
    rounded half up as its integer ``cdist`` rounds, it is the same number without a second
    pass over the strings.
    """
    total = width + lengths
    return np.floor(100 * (1 - (total - 2 * common) / total) + 0.5).astype(np.int32)


def _cdist(needle: str, choices: np.ndarray, scorer: Any, cutoff: int | None = None) -> np.ndarray:
    scores = process.cdist([needle], choices, scorer=scorer, score_cutoff=cutoff, dtype=np.int32)
    return scores[0]


def _object_array(strings: list[str]) -> np.ndarray:
    array = np.empty(len(strings), dtype=object)
    array[:] = strings
    return array


def _is_subsequence(short: str, long: str) -> bool:
    rest = iter(long)
    return all(char in rest for char in short)


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
