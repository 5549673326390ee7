"""Terminal output as text: escapes stripped, or rendered as a terminal of a width shows it."""

from __future__ import annotations

import fcntl
import os
import select
import shutil
import struct
import subprocess
import termios
import time
from typing import Any

import pyte
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from terax_jupyter.services.pty import text


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\x1b[1;31mred\x1b[0m plain\r\n", "red plain\n"),
        (b"\x1b]0;title\x07\x1b]7;file:///x\x1b\\after", "after"),
        (b"\x1bP1$r0m\x1b\\\x1b_apc\x1b\\dcs gone", "dcs gone"),
        (b"\x1b(B\x1b)0\x1b=\x1b>\x1b7\x1b8\x1bc\x1b%Gmodes", "modes"),
        (b"\x1b[?1049h\x1b[2J\x1b[Hscreen\x1b[?1049l", "screen"),
        (b"bell\x07 nul\x00 esc\x1b", "bell nul esc"),
        (b"progress 10%\rprogress 100%\r\n", "progress 100%\n"),
        (b"abcdef\rXY\n", "XYcdef\n"),
        # Erase in line: a progress line redrawn shorter, a prompt redrawn over typed-ahead
        # echo, the whole line, the start of it.
        (b"downloading 100%\r\x1b[Kdone\n", "done\n"),
        (b"^[[9871~PROMPT# \r\x1b[K\rPROMPT# false\n", "PROMPT# false\n"),
        (b"abcdef\rab\x1b[0Kc\n", "abc\n"),
        (b"abcdef\x1b[2Kxy\n", "      xy\n"),
        (b"abcdef\rab\x1b[1K\n", "   def\n"),
        (b"kept\x1b[K\n", "kept\n"),
        ("\ue0b0 glyph\r\x1b[K\ue0b0 again\n".encode(), "\ue0b0 again\n"),
        (b"abc\b\bX\n", "aX\n"),
        (b"\b\bstart\n", "start\n"),
        (b"tab\tkept  \r\n", "tab\tkept\n"),
        ("unicode ✓ 日本語\n".encode(), "unicode ✓ 日本語\n"),
        (b"broken \xff\xfe bytes", "broken \ufffd\ufffd bytes"),
    ],
)
def test_strip(data: bytes, expected: str) -> None:
    assert text.strip(data) == expected


def test_render_applies_cursor_movement_that_strip_cannot() -> None:
    data = b"ab\x1b[1Dc\r\n\x1b[31mred\x1b[0m\r\nxy\x1b[2K\rnew\r\n"
    assert text.strip(data) == "abc\nred\nnew\n"
    assert text.render(data, 80) == "ac\nred\nnew"


def test_render_wraps_at_the_width_and_keeps_scrolled_lines() -> None:
    lines = b"".join(b"line %d\r\n" % i for i in range(300))
    rendered = text.render(b"x" * 25 + b"\r\n" + lines, 10)
    assert rendered.splitlines()[:3] == ["x" * 10, "x" * 10, "x" * 5]
    assert rendered.splitlines()[-1] == "line 299"
    assert len(rendered.splitlines()) == 303


def test_render_wide_characters_and_lf_only_output() -> None:
    assert text.render("日本語 ✓\nnext\n".encode(), 80) == "日本語 ✓\nnext"


def test_render_sparse_cells() -> None:
    data = "日本語 ✓ x\x1b[5Cy\r\n\x1b[3;5Hz".encode()
    assert text.render(data, 80) == "日本語 ✓ x     y\n\n    z"


def test_render_survives_a_wide_character_cut_in_half() -> None:
    # Deleting the first cell of a wide character leaves its second cell alone on the line,
    # which makes pyte's own ``Screen.display`` raise IndexError.
    data = "日\x1b[2D\x1b[1P\r\nnext".encode()
    assert reference_render(data, 10) is None
    assert text.render(data, 10) == "\nnext"


def reference_render(data: bytes, columns: int) -> str | None:
    """pyte's own ``display`` (every cell of every line); None where it raises."""
    value = data.decode("utf-8", "replace").replace("\n", "\r\n")
    screen = pyte.Screen(columns, value.count("\n") + len(value) // columns + 2)
    pyte.Stream(screen).feed(value)
    try:
        lines = [line.rstrip() for line in screen.display]
    except IndexError:
        return None
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


PIECES = [
    "a", "bc ", "日", "✓", "\r", "\n", "\t", "\b", "\x1b[2C", "\x1b[1D", "\x1b[K", "\x1b[2J",
    "\x1b[H", "\x1b[3;7H", "\x1b[31m", "\x1b[0m", "\x1b[1A", "\x1b[2P", "\x1b[3@", "e\u0301",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=80), st.sampled_from([4, 9, 80]))
def test_render_matches_the_emulators_own_display(pieces: list[str], columns: int) -> None:
    data = "".join(pieces).encode()
    expected = reference_render(data, columns)
    rendered = text.render(data, columns)
    if expected is not None:
        assert rendered == expected


def test_render_feeds_only_the_tail_of_huge_output() -> None:
    data = b"".join(b"row %07d\n" % i for i in range(200_000))  # 2.4 MB
    assert len(data) > text.RENDER_LIMIT
    rendered = text.render(data, 80).splitlines()
    assert rendered[-1] == "row 0199999"
    assert 0 < len(rendered) <= text.RENDER_LIMIT // len(b"row 0000000\n") + 1
    # It starts on a line boundary, not inside a line.
    assert rendered[0].startswith("row ")
    assert len(rendered[0]) == 11


@pytest.mark.parametrize(
    ("value", "count", "expected"),
    [
        ("a\nb\nc\n\n  \n", 2, "b\nc"),
        ("a\nb\nc", 5, "a\nb\nc"),
        ("", 3, ""),
        ("only\n", 1, "only"),
    ],
)
def test_last_lines(value: str, count: int, expected: str) -> None:
    assert text.last_lines(value, count) == expected


# -- what real programs send ---------------------------------------------------------------


@pytest.mark.parametrize(
    "sequence",
    [
        "\x1b[?4m",  # vim 9 (pyte 0.8 raised TypeError: every rendered read was a 500)
        "\x1b[?1;2c",  # a DA1 answer echoed back (TypeError too)
        "\x1b[>4;2m",  # modifyOtherKeys
        "\x1b[=5u",  # kitty keyboard protocol (printed as text)
        "\x1b[<u",
        "\x1b[>1u",
        "\x1b[4:3m",  # curly underline (printed as text)
        "\x1b[38:2::255:0:0m",  # a colour with ':' sub-parameters
        "\x1b[58:5:3m",  # underline colour
        "\x1b[?25$p",  # DECRQM
        "\x1b[0%m",  # vim's probe
        "\x1b[2 q",  # cursor shape
    ],
)
def test_render_passes_over_what_changes_no_character(sequence: str) -> None:
    assert text.render(f"a{sequence}b\r\nnext".encode(), 20) == "ab\nnext"


def capture(argv: list[str], keys: bytes, *, home: str) -> bytes:
    """What ``argv`` writes to a real 80x24 terminal until it exits after ``keys``."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {"TERM": "xterm-256color", "HOME": home, "PATH": os.environ["PATH"], "LANG": "C.UTF-8"}
    child = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    output = bytearray()
    started, sent = time.monotonic(), False
    try:
        while time.monotonic() - started < 10:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child is gone and the pty closed
                    break
                if not chunk:
                    break
                output += chunk
            if not sent and time.monotonic() - started > 1.5:
                os.write(master, keys)
                sent = True
            if sent and child.poll() is not None and not ready:
                break
    finally:
        child.kill()
        child.wait()
        os.close(master)
    return bytes(output)


@pytest.mark.parametrize(
    ("argv", "keys", "shown"),
    [
        (["vim", "-u", "DEFAULTS", "-i", "NONE", "-n", "{file}"], b":q\r", "terax line 1"),
        (["less", "{file}"], b"q", "terax line 1"),
    ],
    ids=["vim", "less"],
)
def test_render_follows_real_programs(
    argv: list[str], keys: bytes, shown: str, tmp_path: Any
) -> None:
    program = shutil.which(argv[0])
    assert program is not None, f"{argv[0]} is installed by .ci/run"
    file = tmp_path / "notes.txt"
    file.write_text("".join(f"terax line {n}\n" for n in range(1, 40)))
    data = capture([a.replace("{file}", str(file)) for a in argv], keys, home=str(tmp_path))
    assert len(data) > 200, data
    # The emulator itself follows the whole capture (no fallback to plain text needed)...
    rendered = text._render(data, 80)
    assert shown in rendered
    # ...and so does the public function, with no escape left over as text.
    assert "\x1b" not in text.render(data, 80)


def test_render_falls_back_to_plain_text_when_the_emulator_fails(monkeypatch: Any) -> None:
    def broken(self: Any, data: str) -> None:
        raise TypeError("an emulator bug")

    monkeypatch.setattr(pyte.Stream, "feed", broken)
    assert text.render(b"\x1b[1mbold\x1b[0m text\r\n", 20) == "bold text\n"
