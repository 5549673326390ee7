"""The quick-open ranking (no I/O): narrowing from recent queries changes no answer."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
from rapidfuzz import fuzz, process
from rapidfuzz.distance import LCSseq

from terax_jupyter.services.fs.fuzzy import CANDIDATES, FileList, rank, ratio_from_lcs

WORDS = ["app", "main", "util", "readme", "thread", "pool", "reader", "index", "test", "core"]


@pytest.fixture(scope="module")
def paths() -> list[str]:
    """Enough paths that short queries have more hits than CANDIDATES."""
    rng = random.Random(7)
    found = set()
    while len(found) < 3000:
        folders = "/".join(rng.sample(WORDS, rng.randint(0, 3)))
        name = "_".join(rng.sample(WORDS, rng.randint(1, 2))) + rng.choice((".py", ".ts", ".md"))
        found.add(f"{folders}/{name}".lstrip("/"))
    return [*sorted(found), "İstanbul/ÇAY.py", "ΟΔΟΣ/ΣΟΦΟΣ.md"]


def ranked(query: str, files: FileList) -> list[tuple[str, float, list[int]]]:
    return [(m.path, m.score, m.positions) for m in rank(query, files, 50)]


def is_subsequence(short: str, long: str) -> bool:
    rest = iter(long)
    return all(char in rest for char in short)


def test_typing_narrows_to_the_same_answers(paths: list[str]) -> None:
    files = FileList.build(paths)
    typed = ["r", "re", "rea", "read", "reade", "reader", "reader.", "reader.p", "rdpy", "x", "mtp"]
    for query in typed:
        # A copy knows no recent queries: it ranks from a scan of every path.
        assert ranked(query, files) == ranked(query, dataclasses.replace(files))
    # Short queries match more paths than the candidates scored, so the preselection counts.
    assert sum(is_subsequence("re", p.lower()) for p in paths) > CANDIDATES


def test_ranking_semantics(paths: list[str]) -> None:
    files = FileList.build(paths)
    results = rank("read", files, 50)
    assert results
    for match in results:
        lower = match.path.lower()
        assert "".join(lower[p] for p in match.positions) == "read"
    in_name = ["read" in m.path.rpartition("/")[2] for m in results]
    assert in_name == sorted(in_name, reverse=True), "file-name matches rank first"
    assert rank("zzz", files, 50) == []
    assert [m.path for m in rank("", files, 3)] == files.paths[:3]


def test_closeness_is_rapidfuzz_ratio(paths: list[str]) -> None:
    names = [p.rpartition("/")[2].lower() for p in paths] + ["a", "ab" * 9, "日本語"]
    lengths = np.array([len(n) for n in names], dtype=np.int32)
    for needle in ("r", "re", "rea", "read", "thread_pool.py", "日本", "qq"):
        common = process.cdist([needle], names, scorer=LCSseq.similarity, dtype=np.int32)
        expected = process.cdist([needle], names, scorer=fuzz.ratio, dtype=np.int32)[0]
        assert np.array_equal(ratio_from_lcs(len(needle), lengths, common[0]), expected)
