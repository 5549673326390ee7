"""Path-string normalization: what is refused outright, and how a path is spelled for matching."""

from __future__ import annotations

import pytest

from terax_jupyter.exceptions import InvalidPath
from terax_jupyter.security.normalize import (
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    fold_for_matching,
    matching_forms,
    reject_unusable,
    strip_drive,
    strip_segment_decorations,
    to_slashes,
)

# -- reject_unusable ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["", " ", "   ", "\u3000", "\u00a0 "])
def test_empty_and_blank_paths_are_refused(path: str) -> None:
    with pytest.raises(InvalidPath, match="empty"):
        reject_unusable(path)


@pytest.mark.parametrize("value", [None, b"src/app.py", 3, ["a"]])
def test_non_strings_are_refused(value: object) -> None:
    with pytest.raises(InvalidPath, match="must be a string"):
        reject_unusable(value)


@pytest.mark.parametrize(
    "char",
    ["\x00", "\x01", "\x07", "\t", "\n", "\r", "\x1b", "\x1f", "\x7f", "\x80", "\x85", "\x9f"],
)
def test_control_bytes_are_refused_anywhere(char: str) -> None:
    for path in (f"{char}a", f"src/a{char}.py", f"src/app.py{char}"):
        with pytest.raises(InvalidPath, match=f"control character \\(U\\+{ord(char):04X}\\)"):
            reject_unusable(path)


@pytest.mark.parametrize(
    "char",
    [
        "\u200b",  # zero-width space
        "\u200c",  # zero-width non-joiner
        "\u200d",  # zero-width joiner
        "\u2060",  # word joiner
        "\ufeff",  # byte-order mark
        "\u00ad",  # soft hyphen
        "\u202e",  # right-to-left override
        "\u202a",  # left-to-right embedding
        "\u2066",  # left-to-right isolate
        "\u200f",  # right-to-left mark
        "\u061c",  # Arabic letter mark
    ],
)
def test_invisible_and_bidi_characters_are_refused(char: str) -> None:
    with pytest.raises(InvalidPath, match="invisible or unassigned"):
        reject_unusable(f".e{char}nv")


@pytest.mark.parametrize("char", ["\u2028", "\u2029"])
def test_line_and_paragraph_separators_are_refused(char: str) -> None:
    with pytest.raises(InvalidPath, match=f"U\\+{ord(char):04X}"):
        reject_unusable(f"notes{char}.env")


@pytest.mark.parametrize("char", ["\ue000", "\U000f0000", "\u0378", "\ud800"])
def test_private_use_unassigned_and_surrogates_are_refused(char: str) -> None:
    with pytest.raises(InvalidPath):
        reject_unusable(f"src/{char}.txt")


@pytest.mark.parametrize(
    "path", ["src/app.py", "données/résumé.md", "日本語/ノート.txt", "a b/c-d_e.f", "/abs", "C:\\x"]
)
def test_ordinary_paths_pass_unchanged(path: str) -> None:
    assert reject_unusable(path) == path


def test_a_path_over_the_byte_limit_is_refused_with_its_size() -> None:
    path = "/" + "a/" * (MAX_PATH_BYTES // 2)
    with pytest.raises(InvalidPath, match=rf"too long \({len(path)} bytes; the limit is 4096\)"):
        reject_unusable(path)


def test_the_path_limit_counts_bytes_not_characters() -> None:
    exactly = "a/" * (MAX_PATH_BYTES // 2 - 1) + "bb"
    assert len(exactly.encode()) == MAX_PATH_BYTES
    assert reject_unusable(exactly) == exactly
    # 1457 characters, but the euro signs are three bytes each in UTF-8.
    euros = "/".join(["€" * 80] * 18)
    assert len(euros) < MAX_PATH_BYTES < len(euros.encode())
    with pytest.raises(InvalidPath, match="too long"):
        reject_unusable(euros)


def test_a_segment_over_name_max_is_refused() -> None:
    assert reject_unusable("src/" + "a" * MAX_SEGMENT_BYTES)
    with pytest.raises(InvalidPath, match="longer than 255 bytes"):
        reject_unusable("src/" + "a" * (MAX_SEGMENT_BYTES + 1) + "/x")
    # Multi-byte: 86 characters of three bytes are 258 bytes.
    with pytest.raises(InvalidPath, match="longer than 255 bytes"):
        reject_unusable("src/" + "語" * 86)


def test_backslashes_separate_segments_for_the_segment_limit() -> None:
    path = "a" * 200 + "\\" + "b" * 200
    assert reject_unusable(path) == path


# -- to_slashes, strip_drive, strip_segment_decorations -------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\\b\\c", "a/b/c"),
        ("a//b///c", "a/b/c"),
        ("\\\\?\\C:\\x\\y", "/C:/x/y"),
        ("\\\\.\\C:\\x", "/C:/x"),
        ("//?/C:/x", "/C:/x"),
        ("\\??\\C:\\x", "/C:/x"),
        ("\\\\?\\UNC\\server\\share\\x", "/server/share/x"),
        ("\\\\server\\share\\x", "/server/share/x"),
        ("/unc/x/y", "/unc/x/y"),
        ("/srv/??/x", "/srv/??/x"),
    ],
)
def test_to_slashes(raw: str, expected: str) -> None:
    assert to_slashes(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("C:/x", "/x"),
        ("/c:/x", "/x"),
        ("z:", "/"),
        ("C:x", "C:x"),
        ("/x/C:/y", "/x/C:/y"),
        ("CC:/x", "CC:/x"),
        ("src/app.py", "src/app.py"),
    ],
)
def test_strip_drive(raw: str, expected: str) -> None:
    assert strip_drive(raw) == expected


@pytest.mark.parametrize(
    ("segment", "expected"),
    [
        (".env::$DATA", ".env"),
        (".env:x", ".env"),
        (".env:x:$DATA", ".env"),
        (".env.", ".env"),
        (".env ", ".env"),
        (".env. . ", ".env"),
        (".ssh.", ".ssh"),
        (".", "."),
        ("..", ".."),
        ("...", "..."),
        ("app.py", "app.py"),
    ],
)
def test_strip_segment_decorations(segment: str, expected: str) -> None:
    assert strip_segment_decorations(segment) == expected


# -- fold_for_matching, matching_forms ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (".ENV", ".env"),
        ("Id_RSA", "id_rsa"),
        ("\uff0e\uff45\uff4e\uff56", ".env"),  # fullwidth
        ("\uff49\uff44\uff3f\uff52\uff53\uff41", "id_rsa"),  # fullwidth, including the low line
        (".\u0435nv", ".env"),  # Cyrillic small ie
        (".\u0455sh", ".ssh"),  # Cyrillic small dze
        (".\u0405SH", ".ssh"),  # Cyrillic capital dze
        ("\u0456d_rsa", "id_rsa"),  # Cyrillic small i
        ("\u0406D_RSA", "id_rsa"),  # Cyrillic capital I, read case-folded first
        (".e\u0301nv", ".env"),  # combining acute accent dropped
        ("\ufb01le", "file"),  # ligature
        ("src/app.py", "src/app.py"),
    ],
)
def test_fold_for_matching(text: str, expected: str) -> None:
    assert fold_for_matching(text) == expected


def test_capital_look_alikes_fold_when_look_alikes_go_first() -> None:
    greek = "/\u0395TC"  # Greek capital epsilon: its lower case resembles no ASCII letter
    assert fold_for_matching(greek) != "/etc"
    assert fold_for_matching(greek, look_alikes_first=True) == "/etc"
    assert "/etc" in matching_forms(greek)


def test_matching_forms_of_a_plain_path_is_one_folded_form() -> None:
    assert matching_forms("/Projects/Src/App.py") == ["/projects/src/app.py"]


def test_matching_forms_drop_dot_segments_and_keep_dot_dot() -> None:
    assert matching_forms("/a/./b//c/../d") == ["/a/b/c/../d"]


def test_matching_forms_include_the_windows_reading() -> None:
    forms = matching_forms("src/.env::$DATA")
    assert forms[0] == "src/.env::$data"
    assert "src/.env" in forms
    assert "/x/.ssh/id" in matching_forms("\\\\?\\C:\\x\\.ssh.\\id")


def test_matching_forms_strip_the_drive() -> None:
    assert matching_forms("C:\\Users\\A\\.aws\\credentials") == ["/users/a/.aws/credentials"]
