"""The read-only file tools on real files through the real security layer and fs services."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import (
    InvalidPattern,
    InvalidRequest,
    NotFound,
    OutsideWorkspace,
    PathDenied,
    Unsupported,
)
from terax_jupyter.services.ai.tools.files import (
    MAX_OUTPUT_BYTES,
    Glob,
    Grep,
    ListDirectory,
    ReadFile,
)

from .tool_context import Ledger

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.services.ai.tools.base import ToolContext

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace root: a small project with a protected file in it."""
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    print('Hello')\n\nmain()\n")
    (root / "src" / "pkg" / "util.py").write_text("HELLO = 'hello'\nhello_world = 1\n")
    (root / "README.md").write_text("# Demo\nhello readme\n")
    (root / ".env").write_text("API_TOKEN=never-read-me\nhello = 'env'\n")
    return root


def ledger(context: ToolContext) -> dict[str, str]:
    assert isinstance(context.reads, Ledger)
    return context.reads.etags


# -- read_file -----------------------------------------------------------------------------


async def test_read_file_numbers_lines_and_records_the_read(context: ToolContext, ws: Path) -> None:
    result = await ReadFile().run({"path": "src/app.py"}, context)
    assert result.content == (
        "    1\tdef main():\n    2\t    print('Hello')\n    3\t\n    4\tmain()"
    )
    current = await context.files.read("src/app.py")
    assert ledger(context) == {"src/app.py": current["etag"]}
    assert result.data["total_lines"] == 4
    assert not result.data["truncated"]


async def test_read_file_by_absolute_path_records_the_display_path(
    context: ToolContext, ws: Path
) -> None:
    await ReadFile().run({"path": str(ws / "src" / "pkg" / "util.py")}, context)
    assert list(ledger(context)) == ["src/pkg/util.py"]


async def test_read_file_offset_limit_and_the_hint_to_read_more(
    context: ToolContext, ws: Path
) -> None:
    (ws / "long.txt").write_text("".join(f"row {n}\n" for n in range(1, 2501)))
    first = await ReadFile().run({"path": "long.txt"}, context)
    lines = first.content.splitlines()
    assert lines[0] == "    1\trow 1"
    assert lines[1999] == " 2000\trow 2000"
    assert lines[-1] == "[Showing lines 1-2000 of 2500. Read more with offset=2001.]"
    rest = await ReadFile().run({"path": "long.txt", "offset": 2001}, context)
    assert rest.content.splitlines()[0] == " 2001\trow 2001"
    assert rest.content.splitlines()[-1] == " 2500\trow 2500"
    assert not rest.data["truncated"]
    window = await ReadFile().run({"path": "long.txt", "offset": 10, "limit": 2}, context)
    assert window.content.splitlines() == [
        "   10\trow 10",
        "   11\trow 11",
        "[Showing lines 10-11 of 2500. Read more with offset=12.]",
    ]
    with pytest.raises(InvalidRequest, match="past the end"):
        await ReadFile().run({"path": "long.txt", "offset": 2501}, context)
    for bad in ({"offset": 0}, {"limit": 2001}, {"offset": "3"}, {"limit": True}):
        with pytest.raises(InvalidRequest):
            await ReadFile().run({"path": "long.txt", **bad}, context)


async def test_read_file_caps_bytes_and_long_lines(context: ToolContext, ws: Path) -> None:
    (ws / "wide.txt").write_text(("x" * 1500 + "\n") * 100 + "y" * 5000 + "\n")
    result = await ReadFile().run({"path": "wide.txt"}, context)
    assert len(result.content.encode()) <= MAX_OUTPUT_BYTES + 200
    assert result.data["truncated"]
    end = result.data["end_line"]
    assert 30 < end < 100
    assert result.content.endswith(f"Read more with offset={end + 1}.]")
    last = await ReadFile().run({"path": "wide.txt", "offset": 101}, context)
    assert last.content == "  101\t" + "y" * 2000 + " [... line cut at 2000 characters]"


async def test_read_file_shows_crlf_lines_without_cr(context: ToolContext, ws: Path) -> None:
    (ws / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await ReadFile().run({"path": "dos.txt"}, context)
    assert result.content == "    1\tone\n    2\ttwo"


async def test_read_file_empty_binary_missing_denied_outside(
    context: ToolContext, ws: Path, tmp_path: Path
) -> None:
    (ws / "empty.txt").write_text("")
    assert (await ReadFile().run({"path": "empty.txt"}, context)).content == "empty.txt is empty."
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(Unsupported, match="binary"):
        await ReadFile().run({"path": "blob.bin"}, context)
    with pytest.raises(NotFound):
        await ReadFile().run({"path": "nope.txt"}, context)
    with pytest.raises(PathDenied):
        await ReadFile().run({"path": ".env"}, context)
    (tmp_path / "outside.txt").write_text("outside\n")
    with pytest.raises(OutsideWorkspace):
        await ReadFile().run({"path": "../outside.txt"}, context)
    with pytest.raises(Unsupported):
        await ReadFile().run({"path": "src"}, context)
    with pytest.raises(InvalidRequest, match="'path' is required"):
        await ReadFile().run({}, context)
    # Only the files actually shown count as read.
    assert list(ledger(context)) == ["empty.txt"]


async def test_read_file_redacts_known_and_key_shaped_secrets(
    context: ToolContext, ws: Path
) -> None:
    context.security.redactor.add_secret("my-very-own-password")
    (ws / "config.py").write_text(f"KEY = '{SECRET}'\nPASSWORD = 'my-very-own-password'\n")
    result = await ReadFile().run({"path": "config.py"}, context)
    assert SECRET not in result.content
    assert "my-very-own-password" not in result.content
    assert "[REDACTED]" in result.content


# -- list_directory ------------------------------------------------------------------------


async def test_list_directory_folders_first_sizes_and_protected(
    context: ToolContext, ws: Path
) -> None:
    result = await ListDirectory().run({}, context)
    lines = result.content.splitlines()
    assert lines[0] == "./ (3 entries)"
    assert lines[1] == "src/"
    assert ".env (protected)" in lines
    assert "README.md  20 B" in lines
    assert "never-read-me" not in result.content
    sub = await ListDirectory().run({"path": "src"}, context)
    assert sub.content.splitlines() == ["src/ (2 entries)", "pkg/", "app.py  39 B"]


async def test_list_directory_caps_entries_and_refuses_files(
    context: ToolContext, ws: Path
) -> None:
    many = ws / "many"
    many.mkdir()
    for n in range(510):
        (many / f"f{n:03}.txt").write_text("")
    result = await ListDirectory().run({"path": "many"}, context)
    assert result.content.splitlines()[-1] == "[... and 10 more entries]"
    assert result.data == {"path": "many", "entries": 510, "truncated": True}
    with pytest.raises(InvalidRequest, match="not a folder"):
        await ListDirectory().run({"path": "README.md"}, context)
    with pytest.raises(PathDenied):
        await ListDirectory().run({"path": "/etc"}, context)
    (ws / "hollow").mkdir()
    assert (await ListDirectory().run({"path": "hollow"}, context)).content.endswith("(empty)")


# -- grep ----------------------------------------------------------------------------------


async def test_grep_lists_path_line_text_and_skips_protected(
    context: ToolContext, ws: Path
) -> None:
    result = await Grep().run({"pattern": "hello"}, context)
    assert result.content.splitlines() == [
        "README.md:2:hello readme",
        "src/pkg/util.py:1:HELLO = 'hello'",
        "src/pkg/util.py:2:hello_world = 1",
        "[3 matches in 2 files]",
    ]
    assert result.data == {"matches": 3, "files": 2, "truncated": False}


async def test_grep_case_regex_glob_and_one_file(context: ToolContext, ws: Path) -> None:
    insensitive = await Grep().run({"pattern": "hello", "case_insensitive": True}, context)
    assert "src/app.py:2:    print('Hello')" in insensitive.content
    assert insensitive.data["matches"] == 4
    literal = await Grep().run({"pattern": "main()", "regex": False}, context)
    assert literal.content.splitlines()[:2] == ["src/app.py:1:def main():", "src/app.py:4:main()"]
    regex = await Grep().run({"pattern": r"^main\(\)$"}, context)
    assert regex.content.splitlines()[0] == "src/app.py:4:main()"
    only_py = await Grep().run({"pattern": "hello", "glob": "*.py"}, context)
    assert "README" not in only_py.content
    assert only_py.data["matches"] == 2
    one_file = await Grep().run({"pattern": "hello", "path": "src/pkg/util.py"}, context)
    assert one_file.data == {"matches": 2, "files": 1, "truncated": False}
    (ws / "src" / "pkg" / "deeper").mkdir()
    (ws / "src" / "pkg" / "deeper" / "util.py").write_text("hello again\n")
    again = await Grep().run({"pattern": "hello", "path": "src/pkg/util.py"}, context)
    assert again.data["matches"] == 2  # the named file only, not a namesake further down


async def test_grep_caps_results_and_reports_no_match_and_bad_patterns(
    context: ToolContext, ws: Path
) -> None:
    (ws / "many.txt").write_text("needle\n" * 50)
    capped = await Grep().run({"pattern": "needle", "max_results": 5}, context)
    assert capped.content.count("many.txt:") == 5
    assert capped.content.endswith("more exist: narrow the search or raise max_results]")
    assert capped.data["truncated"]
    none = await Grep().run({"pattern": "zebra"}, context)
    assert none.content == "No matches for 'zebra' in .."
    with pytest.raises(InvalidPattern):
        await Grep().run({"pattern": "(unclosed"}, context)
    with pytest.raises(InvalidRequest):
        await Grep().run({"pattern": "x", "max_results": 0}, context)
    with pytest.raises(PathDenied):
        await Grep().run({"pattern": "hello", "path": ".env"}, context)


# -- glob ----------------------------------------------------------------------------------


async def test_glob_finds_files_but_not_protected_ones(context: ToolContext, ws: Path) -> None:
    result = await Glob().run({"pattern": "**/*.py"}, context)
    assert result.content.splitlines() == ["src/app.py", "src/pkg/util.py"]
    everything = await Glob().run({"pattern": "**/*"}, context)
    assert ".env" not in everything.content.split()
    under = await Glob().run({"pattern": "*.py", "path": "src/pkg"}, context)
    assert under.content == "src/pkg/util.py"
    none = await Glob().run({"pattern": "*.rs"}, context)
    assert none.content == "No files match '*.rs' in .."
    with pytest.raises(InvalidPattern):
        await Glob().run({"pattern": "  "}, context)
    with pytest.raises(PathDenied):
        await Glob().run({"pattern": "*", "path": "/proc"}, context)


def test_schemas_are_closed_objects() -> None:
    for tool in (ReadFile(), ListDirectory(), Grep(), Glob()):
        spec = tool.spec()
        assert spec.parameters["type"] == "object"
        assert spec.parameters["additionalProperties"] is False
        assert set(spec.parameters["required"]) <= set(spec.parameters["properties"])
        assert not tool.mutating


async def test_read_file_hides_a_private_key_block_and_keeps_line_numbers(
    context: ToolContext, ws: Path
) -> None:
    (ws / "deploy.yaml").write_text(
        "name: web\nkey: |\n  -----BEGIN OPENSSH PRIVATE KEY-----\n  b3BlbnNzaC1rZXktdjEAAAAA\n"
        "  QyNTUxOQAAACBbody\n  -----END OPENSSH PRIVATE KEY-----\nport: 8080\n"
    )
    result = await ReadFile().run({"path": "deploy.yaml"}, context)
    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in result.content
    assert "QyNTUxOQAAACBbody" not in result.content
    assert result.content.splitlines()[-1] == "    7\tport: 8080"
