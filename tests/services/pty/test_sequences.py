"""The streaming scanner: every sequence kind, every split, caps, garbage and floods."""

from __future__ import annotations

import sys
import tracemalloc
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from terax_jupyter.services.pty.sequences import (
    OSC_CAP,
    QUERY_MAX,
    Sequence,
    SequenceScanner,
    query_safe_end,
    without_queries,
)

if TYPE_CHECKING:
    from collections.abc import Callable

BEL, ST = b"\x07", b"\x1b\\"


def scan(*chunks: bytes) -> list[tuple[int, int, str, str, dict[str, str]]]:
    """Feed chunks in order; sequences with absolute offsets in the joined stream."""
    scanner = SequenceScanner()
    found = []
    offset = 0
    for chunk in chunks:
        for sequence in scanner.feed(chunk):
            found.append(
                (
                    offset + sequence.start,
                    offset + sequence.end,
                    sequence.kind,
                    sequence.value,
                    sequence.params,
                )
            )
        offset += len(chunk)
    return found


def kinds(data: bytes) -> list[tuple[str, str]]:
    return [(kind, value) for _, _, kind, value, _ in scan(data)]


# -- each kind ------------------------------------------------------------------------------------


@pytest.mark.parametrize("end", [BEL, ST], ids=["bel", "st"])
def test_osc_kinds(end: bytes) -> None:
    data = (
        b"\x1b]7;file://host/home/me/my%20dir" + end
        + b"\x1b]7;kitty-shell-cwd://host/tmp/k" + end
        + b"\x1b]0;window title" + end
        + b"\x1b]2;other title" + end
        + b"\x1b]9;build done" + end
        + b"\x1b]777;notify;Claude;needs input" + end
        + b"\x1b]133;A;nonce=abc" + end
        + b"\x1b]133;B;nonce=abc" + end
        + b"\x1b]133;C;nonce=abc;cmdline_url=echo%20hi" + end
        + b"\x1b]133;D;3;nonce=abc" + end
    )  # fmt: skip
    found = scan(data)
    assert [(kind, value) for _, _, kind, value, _ in found] == [
        ("cwd", "/home/me/my dir"),
        ("cwd", "/tmp/k"),
        ("title", "window title"),
        ("title", "other title"),
        ("notify", "build done"),
        ("notify", "Claude: needs input"),
        ("mark", "A"),
        ("mark", "B"),
        ("mark", "C"),
        ("mark", "D"),
    ]
    params = [p for _, _, kind, _, p in found if kind == "mark"]
    assert params == [
        {"nonce": "abc"},
        {"nonce": "abc"},
        {"nonce": "abc", "cmdline_url": "echo%20hi"},
        {"0": "3", "nonce": "abc"},
    ]
    # Offsets cover each sequence exactly, terminator included.
    for start, end_offset, *_ in found:
        assert data[start : start + 2] == b"\x1b]"
        assert data[:end_offset].endswith(end)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\x1b[?1049h", [("alt_screen", "on")]),
        (b"\x1b[?1049l", [("alt_screen", "off")]),
        (b"\x1b[?47h\x1b[?1047l", [("alt_screen", "on"), ("alt_screen", "off")]),
        (b"\x1b[?25;1049h", [("alt_screen", "on")]),
        (b"\x1b[?25h\x1b[?2004h\x1b[?1h", []),
        (b"\x1b[c\x1b[0c", [("query", "da1"), ("query", "da1")]),
        (b"\x1b[>c\x1b[>0c", [("query", "da2"), ("query", "da2")]),
        (b"\x1b[6n\x1b[5n", [("query", "cpr"), ("query", "dsr")]),
        # Replies and look-alikes are not queries.
        (b"\x1b[?1;2c\x1b[24;1R\x1b[0n\x1b[1c\x1b[>1c\x1b[7n", []),
    ],
)
def test_screen_modes_and_queries(data: bytes, expected: list[tuple[str, str]]) -> None:
    assert kinds(data) == expected


@pytest.mark.parametrize(
    "data",
    [
        b"\x1b]133;E;nonce=abc\x07",  # a letter we do not use
        b"\x1b]7;http://host/not-a-file\x07",
        b"\x1b]7;file://host\x07",  # no path
        b"\x1b]9;4;1;50\x07",  # ConEmu progress, not a notification
        b"\x1b]777;other;x\x07",
        b"\x1b]1337;File=x\x07",
        b"\x1b]0;unterminated by an escape\x1b[0m",
        b"\x1b]52;c;c2VjcmV0\x07",  # clipboard: never acted on
    ],
)
def test_ignored_sequences(data: bytes) -> None:
    assert scan(data) == []


def test_values_are_cleaned() -> None:
    long_title = b"t" * 2000
    found = kinds(b"\x1b]0;a\x01b\x7fc\xff\x07\x1b]2;" + long_title + b"\x07")
    assert found[0] == ("title", "abc\ufffd")
    assert found[1] == ("title", "t" * 512)
    assert kinds(b"\x1b]9;x\x1b[31my\x07") == []  # an ESC inside ends nothing but the OSC
    assert kinds(b"\x1b]777;notify;T;line\x0bbreak\x07") == [("notify", "T: linebreak")]


def test_offsets_are_relative_to_the_chunk_and_negative_when_begun_earlier() -> None:
    scanner = SequenceScanner()
    assert scanner.feed(b"abc\x1b]0;ti") == []
    [title] = scanner.feed(b"tle\x07rest")
    assert (title.start, title.end, title.value) == (-6, 4, "title")
    [query] = scanner.feed(b"xx\x1b[6n")
    assert (query.start, query.end) == (2, 6)


def test_without_queries() -> None:
    data = b"a\x1b[cb\x1b[0c\x1b[>c\x1b[>0c\x1b[6n\x1b[5nc\x1b[31m\x1b[?1;2c\x1b[12;1R\x1b[1c"
    assert without_queries(data) == b"abc\x1b[31m\x1b[?1;2c\x1b[12;1R\x1b[1c"
    plain = b"no escapes at all"
    assert without_queries(plain) is plain


# What vim 9, less, htop and tmux ask a terminal as they start (seen in real captures), and the
# other report requests xterm.js answers: each would come back as typed input after a replay.
REAL_QUERIES = (
    b"\x1b]10;?\x07",  # foreground colour
    b"\x1b]11;?\x1b\\",  # background colour
    b"\x1b]12;?\x07",  # cursor colour
    b"\x1b]4;1;?;2;?\x07",  # palette entries
    b"\x1b]52;c;?\x07",  # the clipboard
    b"\x1b[?2026$p",  # DECRQM, DEC mode (synchronized output)
    b"\x1b[4$p",  # DECRQM, ANSI mode
    b"\x1b[=c",  # DA3
    b"\x1b[=0c",
    b"\x1b[>q",  # XTVERSION
    b"\x1b[>0q",
    b"\x1b[?6n",  # DECXCPR
    b"\x1b[?15n",
    b"\x1b[14t",  # XTWINOPS: text area in pixels
    b"\x1b[14;2t",
    b"\x1b[16t",
    b"\x1b[18t",
    b"\x1b[21t",
    b"\x1b[?4m",  # XTQMODKEYS (what crashed pyte)
    b"\x1b[?u",  # kitty keyboard flags
    b"\x1bP$qm\x1b\\",  # DECRQSS
    b"\x1bP+q544e;636f6c6f7273\x1b\\",  # XTGETTCAP
    "\x9b6n".encode(),  # the C1 forms xterm.js reads too (UTF-8 encoded)
    "\x9b>c".encode(),
    "\x9d11;?\x9c".encode(),
    "\x9d10;?\x07".encode(),
    "\x1b]11;?\x9c".encode(),
    "\x90$qm\x9c".encode(),
)
# Look like them and are not questions: output the replay must keep.
NOT_QUERIES = (
    b"\x1b]11;rgb:0000/0000/0000\x07",  # set the background
    b"\x1b]104\x07",  # reset the palette
    b"\x1b[8;24;80t",  # resize
    b"\x1b[22;0t",  # push the title
    b"\x1b[?2026h",
    b"\x1b[4m",  # underline
    b"\x1b[>4;2m",  # XTMODKEYS set
    b"\x1b[>1u",  # kitty keyboard push
    b"\x1b[2*x",
    b"\x1b[1;5R",
)


@pytest.mark.parametrize("query", REAL_QUERIES)
def test_without_queries_removes_every_report_request(query: bytes) -> None:
    assert without_queries(b"a" + query + b"b") == b"ab"
    assert len(query) <= QUERY_MAX


@pytest.mark.parametrize("sequence", NOT_QUERIES)
def test_without_queries_keeps_what_asks_nothing(sequence: bytes) -> None:
    assert without_queries(b"a" + sequence + b"b") == b"a" + sequence + b"b"


def replay_chunks(data: bytes, size: int) -> list[bytes]:
    """The replay's chunking (PtySession._next_replay_chunk): never past a query's start."""
    chunks, offset = [], 0
    while offset < len(data):
        chunk = data[offset : offset + size]
        if offset + len(chunk) < len(data):
            chunk = chunk[: query_safe_end(chunk)]
        chunks.append(chunk)
        offset += len(chunk)
    return chunks


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(
        st.one_of(
            st.sampled_from(REAL_QUERIES + NOT_QUERIES),
            st.binary(max_size=40).map(lambda b: b.replace(b"\x1b", b"")),
            st.just(b"\x1b"),
        ),
        max_size=60,
    ),
    size=st.integers(min_value=QUERY_MAX + 1, max_value=QUERY_MAX * 3),
)
def test_a_replay_chunk_never_cuts_a_query_in_two(parts: list[bytes], size: int) -> None:
    data = b"".join(parts)
    chunks = replay_chunks(data, size)
    assert b"".join(chunks) == data
    assert b"".join(without_queries(chunk) for chunk in chunks) == without_queries(data)


@pytest.mark.parametrize("query", REAL_QUERIES)
def test_a_chunk_boundary_anywhere_in_a_query_leaves_it_whole(query: bytes) -> None:
    size = QUERY_MAX + 64
    for inside in range(1, len(query)):
        data = b"x" * (size - inside) + query + b"z" * 50
        chunks = replay_chunks(data, size)
        assert (
            b"".join(without_queries(chunk) for chunk in chunks)
            == b"x" * (size - inside) + b"z" * 50
        ), inside


def test_a_query_cut_at_its_terminator_goes_whole_into_the_next_chunk() -> None:
    # The last ESC before the cut is the OSC's ST: cutting there would leave "ESC ] 11 ; ?"
    # in one chunk and "ESC \\" in the next, and neither half would be recognised.
    query = b"\x1b]11;?\x1b\\"
    data = b"x" * 1000 + query + b"y" * (QUERY_MAX - 2)
    assert query_safe_end(data) == 1000


# -- splits ---------------------------------------------------------------------------------------

STREAM = (
    b"plain \xc3\xa9 text\r\n"
    b"\x1b]133;A;nonce=n1\x07$ \x1b]133;B;nonce=n1\x1b\\"
    b"\x1b]133;C;nonce=n1;cmdline_url=ls%20-la\x07"
    b"\x1b[31mred\x1b[0m\x1b[?1049h\x1b[6nscreen\x1b[?1049l"
    b"\x1b]7;file://h/tmp/x%20y\x1b\\\x1b]0;title\x07\x1b]777;notify;A;B\x1b\\"
    b"\x1b[>c\x1b]133;D;0;nonce=n1\x07\x1b[c\x1b[5n\x1b]9;done\x07tail"
)


def test_stream_sample_finds_everything() -> None:
    assert [kind for _, _, kind, _, _ in scan(STREAM)] == [
        "mark", "mark", "mark", "alt_screen", "query", "alt_screen", "cwd", "title", "notify",
        "query", "mark", "query", "query", "notify",
    ]  # fmt: skip


def test_split_at_every_byte_position() -> None:
    whole = scan(STREAM)
    for cut in range(len(STREAM) + 1):
        assert scan(STREAM[:cut], STREAM[cut:]) == whole, cut


def test_split_in_three_at_every_pair_of_positions() -> None:
    whole = scan(STREAM)
    for first in range(len(STREAM) + 1):
        for second in range(first, len(STREAM) + 1):
            parts = (STREAM[:first], STREAM[first:second], STREAM[second:])
            assert scan(*parts) == whole, (first, second)


def test_byte_by_byte() -> None:
    assert scan(*(STREAM[i : i + 1] for i in range(len(STREAM)))) == scan(STREAM)


def test_st_split_between_its_two_bytes() -> None:
    assert kinds(b"\x1b]0;title\x1b") == []
    assert [s[2:4] for s in scan(b"\x1b]0;title\x1b", b"\\")] == [("title", "title")]
    assert [s[2:4] for s in scan(b"x\x1b]7;file:///a\x1b", b"\\y")] == [("cwd", "/a")]


TOKENS = [
    b"\x1b", b"]", b"[", b"?", b">", b"0", b"1049", b"47", b"h", b"l", b"c", b"6n", b"5n",
    b"7;file:///p", b"133;", b"A", b"D;0;nonce=x", b"0;t", b"777;notify;a;b", b"9;m", b";",
    b"\x07", b"\\", b"\x9c", b"\x00", b"\xff\xfe", b"text", b"\r\n", "é".encode(),
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    parts=st.lists(st.sampled_from(TOKENS) | st.binary(max_size=6), max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=4),
)
def test_any_input_any_split_same_result(parts: list[bytes], cuts: list[int]) -> None:
    data = b"".join(parts)
    points = sorted({min(cut, len(data)) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=False)]
    assert scan(*chunks) == scan(data)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_garbage_never_raises(data: bytes) -> None:
    scanner = SequenceScanner()
    for sequence in scanner.feed(data) + scanner.feed(data[::-1]):
        assert isinstance(sequence, Sequence)


# -- caps and floods ------------------------------------------------------------------------------


def test_osc_at_the_cap_is_kept_and_over_it_dropped() -> None:
    at_cap = b"\x1b]0;" + b"x" * (OSC_CAP - 2) + BEL
    assert kinds(at_cap) == [("title", "x" * 512)]
    half = len(at_cap) // 2
    assert [s[2] for s in scan(at_cap[:half], at_cap[half:])] == ["title"]
    over = b"\x1b]0;" + b"x" * (OSC_CAP - 1) + BEL
    assert kinds(over) == []
    assert scan(over[:100], over[100:5000], over[5000:]) == []


def test_unterminated_osc_is_dropped_without_growing_memory() -> None:
    scanner = SequenceScanner()
    chunk = b"y" * 65536  # the same object every time: only the scanner could grow
    assert scanner.feed(b"\x1b]0;" + chunk) == []
    tracemalloc.start()
    try:
        scanner.feed(chunk)
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(300):  # about 20 MiB of OSC body
            assert scanner.feed(chunk) == []
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024
    assert peak - before < 4 * len(chunk)
    # The rest of the dropped OSC ends with a BEL; what follows is scanned normally.
    assert [s.kind for s in scanner.feed(b"yy\x07after\x1b]0;next\x07")] == ["title"]


def test_unterminated_osc_split_in_small_pieces_is_bounded() -> None:
    scanner = SequenceScanner()
    scanner.feed(b"\x1b]7;file:///")
    for _ in range(5000):
        assert scanner.feed(b"abcdefgh") == []
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(5000):
            scanner.feed(b"abcdefgh")
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 32 * 1024
    assert [s.kind for s in scanner.feed(b"\x07\x1b[6n")] == ["query"]


def python_lines(call: Callable[[], Any]) -> int:
    """How many Python lines run during ``call()`` (C code, such as a regex scan, runs none)."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize(
    "unit",
    [b"plain output line 0123456789\r\n", b"\x1b[1;31mcolour\x1b[0m \xe2\x9c\x93\r\n"],
    ids=["text", "sgr"],
)
def test_flood_without_our_sequences_costs_no_python_work_per_byte(unit: bytes) -> None:
    small = unit * 4
    large = unit * (16 * 1024 * 1024 // len(unit))
    scanner = SequenceScanner()
    small_lines = python_lines(lambda: scanner.feed(small))
    large_lines = python_lines(lambda: scanner.feed(large))
    assert large_lines <= small_lines + 5, (small_lines, large_lines)
    assert scanner.feed(b"\x1b]0;t\x07") != []
