"""Hunks of a diff, and applying some of them: fixed cases, git's own apply, and properties."""

from __future__ import annotations

import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.ai.tools.hunks import (
    NO_NEWLINE,
    apply_hunks,
    diff_hunks,
    split_lines,
)

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.services.ai.tools.base import Hunk

FAR_APART = "".join(f"line {n}\n" for n in range(1, 21))


def sides(hunk: Hunk) -> tuple[str, str]:
    """The hunk's old and new text, rebuilt exactly from its display lines."""
    old: list[str] = []
    new: list[str] = []
    for position, line in enumerate(hunk.lines):
        if line == NO_NEWLINE:
            continue
        last = position + 1 < len(hunk.lines) and hunk.lines[position + 1] == NO_NEWLINE
        text = line[1:] + ("" if last else "\n")
        if line[0] in " -":
            old.append(text)
        if line[0] in " +":
            new.append(text)
    return "".join(old), "".join(new)


def at(hunk_start: int, length: int) -> int:
    """The 0-based line index a unified-diff range starts at."""
    return hunk_start - 1 if length else hunk_start


def test_split_lines_keeps_endings_and_only_splits_at_newline() -> None:
    assert split_lines("") == []
    assert split_lines("a") == ["a"]
    assert split_lines("a\r\nb\n") == ["a\r\n", "b\n"]
    assert split_lines("a\x0cb\u2028c\n\n") == ["a\x0cb\u2028c\n", "\n"]


def test_identical_texts_have_no_hunks() -> None:
    assert diff_hunks("same\n", "same\n") == ("", [])
    assert diff_hunks("", "") == ("", [])
    assert apply_hunks("same\n", "same\n", set()) == "same\n"


def test_two_distant_changes_are_two_hunks_and_each_applies_alone() -> None:
    new = FAR_APART.replace("line 2\n", "line two\n").replace("line 19\n", "")
    diff, hunks = diff_hunks(FAR_APART, new, path="x.py")
    assert [h.index for h in hunks] == [0, 1]
    assert diff.startswith("--- a/x.py\n+++ b/x.py\n@@ -1,5 +1,5 @@\n")
    assert hunks[0].lines == [
        " line 1",
        "-line 2",
        "+line two",
        " line 3",
        " line 4",
        " line 5",
    ]
    assert (hunks[1].old_start, hunks[1].old_lines, hunks[1].new_lines) == (16, 5, 4)
    assert hunks[1].header == "@@ -16,5 +16,4 @@"
    assert apply_hunks(FAR_APART, new, {0, 1}) == new
    assert apply_hunks(FAR_APART, new, set()) == FAR_APART
    assert apply_hunks(FAR_APART, new, {0}) == FAR_APART.replace("line 2\n", "line two\n")
    assert apply_hunks(FAR_APART, new, {1}) == FAR_APART.replace("line 19\n", "")


def test_context_decides_where_hunks_split() -> None:
    new = FAR_APART.replace("line 5\n", "five\n").replace("line 9\n", "nine\n")
    assert len(diff_hunks(FAR_APART, new)[1]) == 1  # 3 equal lines between: one hunk at 3
    assert len(diff_hunks(FAR_APART, new, context=1)[1]) == 2
    assert apply_hunks(FAR_APART, new, {1}, context=1) == FAR_APART.replace("line 9\n", "nine\n")


def test_missing_trailing_newline_is_marked_and_kept() -> None:
    diff, hunks = diff_hunks("a\nb", "a\nb\n")
    assert hunks[0].lines == [" a", "-b", NO_NEWLINE, "+b"]
    assert diff.endswith("-b\n\\ No newline at end of file\n+b\n")
    assert apply_hunks("a\nb", "a\nb\n", set()) == "a\nb"
    assert apply_hunks("a\nb\n", "a\nc", {0}) == "a\nc"


def test_crlf_lines_stay_crlf() -> None:
    old, new = "one\r\ntwo\r\nthree\r\n", "one\r\n2\r\nthree\r\n"
    _, hunks = diff_hunks(old, new)
    assert hunks[0].lines == [" one\r", "-two\r", "+2\r", " three\r"]
    assert apply_hunks(old, new, {0}) == new


def test_empty_files_and_insertions_at_both_ends() -> None:
    _, created = diff_hunks("", "a\nb\n")
    assert (created[0].old_start, created[0].old_lines, created[0].new_start) == (0, 0, 1)
    assert created[0].header == "@@ -0,0 +1,2 @@"
    _, emptied = diff_hunks("a\n", "")
    assert emptied[0].header == "@@ -1,1 +0,0 @@"
    assert apply_hunks("a\n", "", {0}) == ""
    old = FAR_APART
    new = "first\n" + old + "last\n"
    _, hunks = diff_hunks(old, new)
    assert len(hunks) == 2
    assert apply_hunks(old, new, {0}) == "first\n" + old
    assert apply_hunks(old, new, {1}) == old + "last\n"


def test_unknown_hunk_numbers_are_refused() -> None:
    with pytest.raises(InvalidRequest) as raised:
        apply_hunks("a\n", "b\n", {0, 3, -1})
    assert raised.value.reason == "invalid_hunk"
    assert "-1, 3" in raised.value.message


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize(
    ("old", "new"),
    [
        (FAR_APART, FAR_APART.replace("line 3\n", "x\ny\n").replace("line 18\n", "")),
        ("a\nb", "a\nb\nc"),
        ("a\nb\n", "z\na\nb"),
        ("", "new\nfile\n"),
        ("x\r\ny\r\n", "x\r\nY\r\n"),
    ],
)
def test_git_apply_accepts_the_diff_and_gets_the_new_text(
    tmp_path: Path, old: str, new: str
) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(old.encode())
    diff, _ = diff_hunks(old, new, path="f.txt")
    (tmp_path / "change.patch").write_bytes(diff.encode())
    subprocess.run(
        ["git", "apply", "--unsafe-paths", "--whitespace=nowarn", "change.patch"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    assert target.read_bytes() == new.encode()


# -- properties ----------------------------------------------------------------------------

LINE = st.sampled_from(["a", "b", "c", "", "d e", "  indented"])
ENDING = st.sampled_from(["\n", "\n", "\r\n"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.tuples(LINE, ENDING), max_size=30))
    text = "".join(line + ending for line, ending in lines)
    if text and draw(st.booleans()):
        text = text[: -len(lines[-1][1])]  # no newline at the end
    return text


PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(old=texts(), new=texts(), context=st.integers(0, 3))
def test_all_hunks_give_new_and_none_give_old(old: str, new: str, context: int) -> None:
    _, hunks = diff_hunks(old, new, context=context)
    assert (not hunks) == (old == new)
    assert apply_hunks(old, new, range(len(hunks)), context=context) == new
    assert apply_hunks(old, new, set(), context=context) == old


@PROPERTY
@given(old=texts(), new=texts(), context=st.integers(0, 3))
def test_each_hunk_alone_changes_exactly_its_own_lines(old: str, new: str, context: int) -> None:
    _, hunks = diff_hunks(old, new, context=context)
    old_lines = split_lines(old)
    for hunk in hunks:
        result = apply_hunks(old, new, {hunk.index}, context=context)
        hunk_old, hunk_new = sides(hunk)
        start = at(hunk.old_start, hunk.old_lines)
        before = "".join(old_lines[:start])
        after = "".join(old_lines[start + hunk.old_lines :])
        # The hunk describes the old lines it covers, and applying it replaces exactly those.
        assert "".join(old_lines[start : start + hunk.old_lines]) == hunk_old
        assert result == before + hunk_new + after
        # The result differs from old, by the hunk's own change in length.
        assert result != old
        assert len(split_lines(result)) - len(old_lines) == hunk.new_lines - hunk.old_lines
        assert diff_hunks(old, result)[1]


@PROPERTY
@given(old=texts(), new=texts(), chosen=st.sets(st.integers(0, 10)))
def test_any_subset_is_old_with_those_hunks_replaced(old: str, new: str, chosen: set[int]) -> None:
    _, hunks = diff_hunks(old, new)
    chosen = {i for i in chosen if i < len(hunks)}
    result = apply_hunks(old, new, chosen)
    old_lines = split_lines(old)
    expected: list[str] = []
    position = 0
    for hunk in hunks:
        if hunk.index not in chosen:
            continue
        start = at(hunk.old_start, hunk.old_lines)
        expected.append("".join(old_lines[position:start]))
        expected.append(sides(hunk)[1])
        position = start + hunk.old_lines
    expected.append("".join(old_lines[position:]))
    assert result == "".join(expected)
