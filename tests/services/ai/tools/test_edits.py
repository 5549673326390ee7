"""The file-changing tools: propose (nothing written), apply (hunks, conflicts), real files."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import (
    AlreadyExists,
    Conflict,
    InvalidRequest,
    NotFound,
    OutsideWorkspace,
    PathDenied,
    ReadOnlyMode,
    Unsupported,
)
from terax_jupyter.services.ai.tools.base import Hunk, Proposal
from terax_jupyter.services.ai.tools.edits import CreateDirectory, Edit, MultiEdit, WriteFile
from terax_jupyter.services.ai.tools.files import ReadFile

from .tool_context import make_context

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.ai.tools.base import ToolContext

TWENTY = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "x.py").write_text(TWENTY)
    return root


async def read(context: ToolContext, path: str) -> None:
    await ReadFile().run({"path": path}, context)


async def roundtrip(proposal: Proposal) -> Proposal:
    """What the runtime does with a pending approval: store it as JSON, load it back."""
    return Proposal.from_json(proposal.to_json())


# -- read before edit ------------------------------------------------------------------------


async def test_edit_needs_a_read_and_refuses_a_file_changed_since(
    context: ToolContext, ws: Path
) -> None:
    arguments = {"path": "x.py", "old_string": "line 2\n", "new_string": "two\n"}
    with pytest.raises(Conflict) as raised:
        await Edit().propose(arguments, context)
    assert raised.value.reason == "not_read"
    assert raised.value.message == "Read x.py with read_file before editing it."
    await read(context, "x.py")
    (ws / "x.py").write_text(TWENTY + "line 21\n")
    with pytest.raises(Conflict) as raised:
        await Edit().propose(arguments, context)
    assert raised.value.reason == "changed_since_read"
    assert raised.value.message == "x.py changed on disk since you read it; read it again."
    await read(context, "x.py")
    proposal = await Edit().propose(arguments, context)
    assert proposal.kind == "edit"
    assert (ws / "x.py").read_text() == TWENTY + "line 21\n"  # proposing writes nothing


async def test_read_through_an_absolute_path_counts_for_a_relative_edit(
    context: ToolContext, ws: Path
) -> None:
    await read(context, str(ws / "x.py"))
    proposal = await Edit().propose(
        {"path": "./x.py", "old_string": "line 1\n", "new_string": "one\n"}, context
    )
    assert proposal.path == "x.py"


# -- propose and apply -----------------------------------------------------------------------


async def test_edit_proposal_then_apply_then_a_second_edit_without_rereading(
    context: ToolContext, ws: Path
) -> None:
    await read(context, "x.py")
    proposal = await Edit().propose(
        {"path": "x.py", "old_string": "line 3", "new_string": "line three"}, context
    )
    assert proposal.summary == "Edit x.py (+1 -1)"
    assert proposal.diff is not None
    assert proposal.diff.startswith("--- a/x.py\n+++ b/x.py\n@@ -1,6 +1,6 @@\n")
    assert "-line 3\n+line three\n" in proposal.diff
    assert [h.index for h in proposal.hunks] == [0]
    assert proposal.payload["base_etag"] == context.reads.etag("x.py")
    result = await Edit().apply(await roundtrip(proposal), context)
    assert result.content == "Applied 1 of 1 hunks to x.py."
    assert result.data == {"path": "x.py", "hunks_applied": 1, "hunks_total": 1}
    assert (ws / "x.py").read_text() == TWENTY.replace("line 3\n", "line three\n")
    current = await context.files.read("x.py")
    assert context.reads.etag("x.py") == current["etag"]
    # The ledger knows the version just written: the next edit needs no new read.
    second = await Edit().propose(
        {"path": "x.py", "old_string": "line 4\n", "new_string": ""}, context
    )
    await Edit().apply(second, context)
    assert "line 4\n" not in (ws / "x.py").read_text()


async def test_apply_keeps_only_the_approved_hunks(context: ToolContext, ws: Path) -> None:
    await read(context, "x.py")
    proposal = await MultiEdit().propose(
        {
            "path": "x.py",
            "edits": [
                {"old_string": "line 2\n", "new_string": "two\n"},
                {"old_string": "line 18\n", "new_string": "eighteen\n"},
            ],
        },
        context,
    )
    assert len(proposal.hunks) == 2
    result = await MultiEdit().apply(await roundtrip(proposal), context, hunks=[1])
    assert result.content.startswith("Applied 1 of 2 hunks to x.py. Hunks 0 were rejected")
    assert result.data == {"path": "x.py", "hunks_applied": 1, "hunks_total": 2}
    assert (ws / "x.py").read_text() == TWENTY.replace("line 18\n", "eighteen\n")


async def test_apply_with_no_hunks_writes_nothing(context: ToolContext, ws: Path) -> None:
    await read(context, "x.py")
    before = (ws / "x.py").stat().st_mtime_ns
    proposal = await Edit().propose(
        {"path": "x.py", "old_string": "line 1\n", "new_string": ""}, context
    )
    result = await Edit().apply(proposal, context, hunks=[])
    assert result.content == "No hunks were approved; x.py was not changed."
    assert result.data["hunks_applied"] == 0
    assert (ws / "x.py").read_text() == TWENTY
    assert (ws / "x.py").stat().st_mtime_ns == before
    with pytest.raises(InvalidRequest) as raised:
        await Edit().apply(proposal, context, hunks=[0, 4])
    assert raised.value.reason == "invalid_hunk"
    with pytest.raises(InvalidRequest):
        await Edit().apply(proposal, context, hunks=["0"])  # type: ignore[list-item]
    assert (ws / "x.py").read_text() == TWENTY


async def test_apply_refuses_a_file_changed_since_the_proposal(
    context: ToolContext, ws: Path
) -> None:
    await read(context, "x.py")
    proposal = await Edit().propose(
        {"path": "x.py", "old_string": "line 5\n", "new_string": "five\n"}, context
    )
    (ws / "x.py").write_text(TWENTY + "someone else\n")
    with pytest.raises(Conflict) as raised:
        await Edit().apply(proposal, context)
    assert raised.value.reason == "changed_since_proposed"
    assert (ws / "x.py").read_text() == TWENTY + "someone else\n"
    (ws / "x.py").unlink()
    with pytest.raises(Conflict) as raised:
        await Edit().apply(proposal, context)
    assert raised.value.reason == "changed_since_proposed"
    assert not (ws / "x.py").exists()


async def test_apply_recomputes_from_the_arguments_not_the_shown_diff(
    context: ToolContext, ws: Path
) -> None:
    await read(context, "x.py")
    proposal = await Edit().propose(
        {"path": "x.py", "old_string": "line 7\n", "new_string": "seven\n"}, context
    )
    proposal.diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-line 1\n+pwned\n"
    proposal.hunks = [Hunk(0, "@@ -1,1 +1,1 @@", 1, 1, 1, 1, ["-line 1", "+pwned"])]
    await Edit().apply(proposal, context)
    assert (ws / "x.py").read_text() == TWENTY.replace("line 7\n", "seven\n")


async def test_apply_rechecks_the_path(
    terax_security: Callable[..., SecurityLayer], context: ToolContext, ws: Path
) -> None:
    (ws / "notes.txt").write_text("a\n")
    await read(context, "notes.txt")
    proposal = await Edit().propose(
        {"path": "notes.txt", "old_string": "a", "new_string": "b"}, context
    )
    proposal.payload["path"] = ".env"
    with pytest.raises(PathDenied):
        await Edit().apply(proposal, context)
    read_only = make_context(terax_security(ws, read_only=True))
    read_only.reads = context.reads
    proposal.payload["path"] = "notes.txt"
    with pytest.raises(ReadOnlyMode):
        await Edit().apply(proposal, read_only)
    assert (ws / "notes.txt").read_text() == "a\n"


# -- matching rules --------------------------------------------------------------------------


async def test_edit_matching_rules(context: ToolContext, ws: Path) -> None:
    (ws / "dup.txt").write_text("same\nother\nsame\n")
    await read(context, "dup.txt")
    cases = [
        ({"old_string": "same", "new_string": "diff"}, "ambiguous_match", "occurs 2 times"),
        ({"old_string": "absent", "new_string": "x"}, "no_match", "was not found"),
        ({"old_string": "same", "new_string": "same"}, "no_change", "are the same"),
        ({"old_string": "", "new_string": "x"}, "invalid_argument", "write_file"),
        ({"old_string": 3, "new_string": "x"}, "invalid_argument", "must be a string"),
    ]
    for arguments, reason, words in cases:
        with pytest.raises(InvalidRequest) as raised:
            await Edit().propose({"path": "dup.txt", **arguments}, context)
        assert raised.value.reason == reason
        assert words in raised.value.message
    proposal = await Edit().propose(
        {"path": "dup.txt", "old_string": "same", "new_string": "diff", "replace_all": True},
        context,
    )
    await Edit().apply(proposal, context)
    assert (ws / "dup.txt").read_text() == "diff\nother\ndiff\n"


async def test_edit_keeps_crlf_line_endings(context: ToolContext, ws: Path) -> None:
    (ws / "dos.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    await read(context, "dos.txt")
    proposal = await Edit().propose(
        {"path": "dos.txt", "old_string": "alpha\nbeta\n", "new_string": "alpha\nB1\nB2\n"},
        context,
    )
    await Edit().apply(proposal, context)
    assert (ws / "dos.txt").read_bytes() == b"alpha\r\nB1\r\nB2\r\ngamma\r\n"


async def test_edit_keeps_a_missing_final_newline_and_the_encoding(
    context: ToolContext, ws: Path
) -> None:
    (ws / "bom.txt").write_bytes("\ufeffcafé\nend".encode())
    await read(context, "bom.txt")
    proposal = await Edit().propose(
        {"path": "bom.txt", "old_string": "café", "new_string": "thé"}, context
    )
    await Edit().apply(proposal, context)
    assert (ws / "bom.txt").read_bytes() == "\ufeffthé\nend".encode()


async def test_edit_refuses_binary_missing_and_protected_files(
    context: ToolContext, ws: Path, tmp_path: Path
) -> None:
    (ws / "blob.bin").write_bytes(b"\x00abc")
    with pytest.raises(Unsupported):
        await Edit().propose({"path": "blob.bin", "old_string": "a", "new_string": "b"}, context)
    with pytest.raises(NotFound):
        await Edit().propose({"path": "gone.py", "old_string": "a", "new_string": "b"}, context)
    with pytest.raises(PathDenied):
        await Edit().propose({"path": ".env", "old_string": "a", "new_string": "b"}, context)
    with pytest.raises(OutsideWorkspace):
        await Edit().propose({"path": "../x", "old_string": "a", "new_string": "b"}, context)


async def test_multi_edit_is_ordered_and_all_or_nothing(context: ToolContext, ws: Path) -> None:
    await read(context, "x.py")
    # The second edit matches text only the first one creates.
    proposal = await MultiEdit().propose(
        {
            "path": "x.py",
            "edits": [
                {"old_string": "line 10\n", "new_string": "ten\n"},
                {"old_string": "ten\n", "new_string": "TEN\n"},
            ],
        },
        context,
    )
    await MultiEdit().apply(await roundtrip(proposal), context)
    assert (ws / "x.py").read_text() == TWENTY.replace("line 10\n", "TEN\n")
    with pytest.raises(InvalidRequest) as raised:
        await MultiEdit().propose(
            {
                "path": "x.py",
                "edits": [
                    {"old_string": "line 1\n", "new_string": "one\n"},
                    {"old_string": "not there", "new_string": "x"},
                ],
            },
            context,
        )
    assert raised.value.message.startswith("Edit 2 of 2: old_string was not found")
    assert raised.value.reason == "no_match"
    for edits in ([], "nope", [{"old_string": "a"}], ["text"]):
        with pytest.raises(InvalidRequest):
            await MultiEdit().propose({"path": "x.py", "edits": edits}, context)
    assert (ws / "x.py").read_text() == TWENTY.replace("line 10\n", "TEN\n")


# -- write_file ------------------------------------------------------------------------------


async def test_write_file_creates_a_new_file_in_new_folders(context: ToolContext, ws: Path) -> None:
    proposal = await WriteFile().propose(
        {"path": "pkg/sub/new.py", "content": "a = 1\nb = 2\n"}, context
    )
    assert proposal.kind == "write"
    assert proposal.summary == "Create pkg/sub/new.py (2 lines)"
    assert proposal.payload["base_etag"] is None
    assert "@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n" in (proposal.diff or "")
    assert not (ws / "pkg").exists()
    result = await WriteFile().apply(await roundtrip(proposal), context)
    assert result.content == "Created pkg/sub/new.py (2 lines)."
    assert (ws / "pkg" / "sub" / "new.py").read_text() == "a = 1\nb = 2\n"
    assert context.reads.etag("pkg/sub/new.py") is not None


async def test_write_file_refuses_a_file_created_since_the_proposal(
    context: ToolContext, ws: Path
) -> None:
    proposal = await WriteFile().propose({"path": "new.txt", "content": "mine\n"}, context)
    (ws / "new.txt").write_text("theirs\n")
    with pytest.raises(Conflict) as raised:
        await WriteFile().apply(proposal, context)
    assert raised.value.reason == "changed_since_proposed"
    assert (ws / "new.txt").read_text() == "theirs\n"


async def test_write_file_over_an_existing_file(context: ToolContext, ws: Path) -> None:
    (ws / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    with pytest.raises(Conflict) as raised:
        await WriteFile().propose({"path": "dos.txt", "content": "x\n"}, context)
    assert raised.value.reason == "not_read"
    await read(context, "dos.txt")
    with pytest.raises(InvalidRequest) as raised:
        await WriteFile().propose({"path": "dos.txt", "content": "one\ntwo\n"}, context)
    assert raised.value.reason == "no_change"
    proposal = await WriteFile().propose({"path": "dos.txt", "content": "one\n2\n"}, context)
    assert proposal.summary == "Edit dos.txt (+1 -1)"
    await WriteFile().apply(proposal, context)
    assert (ws / "dos.txt").read_bytes() == b"one\r\n2\r\n"


async def test_write_file_refusals_come_before_any_approval(
    terax_security: Callable[..., SecurityLayer], context: ToolContext, ws: Path
) -> None:
    with pytest.raises(PathDenied):
        await WriteFile().propose({"path": ".env.local", "content": "A=1\n"}, context)
    with pytest.raises(PathDenied):
        await WriteFile().propose({"path": "sub/.ssh/config", "content": "x"}, context)
    with pytest.raises(OutsideWorkspace):
        await WriteFile().propose({"path": "../escape.txt", "content": "x"}, context)
    read_only = make_context(terax_security(ws, read_only=True))
    with pytest.raises(ReadOnlyMode):
        await WriteFile().propose({"path": "new.txt", "content": "x"}, read_only)
    with pytest.raises(InvalidRequest):
        await WriteFile().propose({"path": "new.txt"}, context)
    assert sorted(os.listdir(ws)) == ["x.py"]


# -- create_directory ------------------------------------------------------------------------


async def test_create_directory(context: ToolContext, ws: Path) -> None:
    proposal = await CreateDirectory().propose({"path": "a/b/c"}, context)
    assert (proposal.kind, proposal.summary, proposal.path) == (
        "directory",
        "Create folder a/b/c",
        "a/b/c",
    )
    assert not (ws / "a").exists()
    result = await CreateDirectory().apply(await roundtrip(proposal), context)
    assert result.content == "Created folder a/b/c."
    assert (ws / "a" / "b" / "c").is_dir()
    with pytest.raises(AlreadyExists):
        await CreateDirectory().apply(proposal, context)
    with pytest.raises(AlreadyExists, match="a file"):
        await CreateDirectory().propose({"path": "x.py"}, context)
    with pytest.raises(AlreadyExists):
        await CreateDirectory().propose({"path": "."}, context)
    with pytest.raises(PathDenied):
        await CreateDirectory().propose({"path": "project/.git/hooks"}, context)


def test_mutating_tools_declare_it() -> None:
    for tool in (WriteFile(), Edit(), MultiEdit(), CreateDirectory()):
        assert tool.mutating
        parameters = tool.spec().parameters
        assert parameters["additionalProperties"] is False
        assert set(parameters["required"]) <= set(parameters["properties"])
