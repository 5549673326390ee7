"""The scrollback ring: absolute offsets, eviction at the capacity, reads of any range."""

from __future__ import annotations

import pytest

from terax_jupyter.services.pty.scrollback import Scrollback


def test_empty() -> None:
    ring = Scrollback(16)
    assert (ring.start, ring.end, len(ring)) == (0, 0, 0)
    assert ring.read() == (b"", 0)
    ring.append(b"")
    assert ring.end == 0


def test_offsets_count_every_byte_ever_produced() -> None:
    ring = Scrollback(10)
    ring.append(b"0123")
    ring.append(b"4567")
    assert ring.read() == (b"01234567", 0)
    ring.append(b"89ab")
    # 12 bytes produced, 10 kept: the head chunk was cut inside.
    assert (ring.start, ring.end, len(ring)) == (2, 12, 10)
    assert ring.read() == (b"23456789ab", 2)
    ring.append(b"cdefghijklmnop")  # one chunk larger than the whole ring
    assert (ring.start, ring.end, len(ring)) == (16, 26, 10)
    assert ring.read() == (b"ghijklmnop", 16)


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (None, None, (b"23456789ab", 2)),
        (5, 8, (b"567", 5)),
        (0, 4, (b"23", 2)),  # what was evicted is gone; the answer says where it begins
        (0, 2, (b"", 2)),
        (11, None, (b"b", 11)),
        (12, None, (b"", 12)),
        (50, 60, (b"", 50)),
        (8, 5, (b"", 8)),
    ],
)
def test_read_ranges(start: int | None, end: int | None, expected: tuple[bytes, int]) -> None:
    ring = Scrollback(10)
    for chunk in (b"0123", b"4567", b"89ab"):
        ring.append(chunk)
    assert ring.read(start, end) == expected


def test_many_small_appends_stay_within_capacity() -> None:
    ring = Scrollback(1000)
    produced = bytearray()
    for index in range(5000):
        chunk = f"{index},".encode()
        ring.append(chunk)
        produced += chunk
        assert len(ring) <= 1000
        if index % 997 == 0:
            data, start = ring.read()
            assert data == produced[start:]
            assert start == len(produced) - len(data) == ring.start
    assert ring.end == len(produced)
    data, start = ring.read(ring.end - 20, ring.end - 10)
    assert data == produced[-20:-10]
    assert start == ring.end - 20
