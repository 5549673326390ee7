"""notebook_create through the test server's security layer, files and kernel specs: a valid
empty notebook for an installed kernel, and every refusal leaves the disk as it was."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import nbformat
import pytest

from terax_jupyter.exceptions import (
    AlreadyExists,
    Conflict,
    InvalidRequest,
    OutsideWorkspace,
    PathDenied,
)
from terax_jupyter.services.ai.tools.base import Proposal
from terax_jupyter.services.ai.tools.notebook_create import NotebookCreate
from terax_jupyter.services.ai.tools.notebook_edits import NotebookEdit

from .tool_context import server_context

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.services.ai.tools.base import ToolContext, ToolResult


@pytest.fixture
def context(jp_serverapp: Any) -> ToolContext:
    return server_context(jp_serverapp)


def _tree(root: Path) -> list[Path]:
    return sorted(root.rglob("*"))


async def _apply(context: ToolContext, tool: Any, proposal: Proposal) -> ToolResult:
    # Through JSON, as a pending approval is stored.
    stored = Proposal.from_json(json.loads(json.dumps(proposal.to_json())))
    return await tool.apply(stored, context)


async def test_a_new_notebook_names_its_kernel_and_takes_cells(
    context: ToolContext, jp_root_dir: Path
) -> None:
    proposal = await NotebookCreate().propose({"path": "work/new.ipynb"}, context)
    assert proposal.summary == "Create notebook work/new.ipynb (Python 3 (ipykernel))"
    assert not (jp_root_dir / "work").exists()  # nothing before approval

    result = await _apply(context, NotebookCreate(), proposal)
    assert not result.is_error, result.content
    assert "work/new.ipynb" in result.content
    book = nbformat.read(jp_root_dir / "work" / "new.ipynb", as_version=4)
    nbformat.validate(book)
    assert book.cells == []
    assert book.metadata["kernelspec"]["name"] == "python3"
    assert book.metadata["kernelspec"]["language"] == "python"

    # The model goes on with notebook_edit: an insert at the top of the empty notebook.
    insert = {"op": "insert", "after": None, "cell_type": "code", "source": "print(1)"}
    edit = await NotebookEdit().propose({"path": "work/new.ipynb", "ops": [insert]}, context)
    assert not (await _apply(context, NotebookEdit(), edit)).is_error
    cells = nbformat.read(jp_root_dir / "work" / "new.ipynb", as_version=4).cells
    assert [cell.source for cell in cells] == ["print(1)"]


async def test_an_existing_file_is_never_replaced(context: ToolContext, jp_root_dir: Path) -> None:
    (jp_root_dir / "mine.ipynb").write_text("the user's notebook")
    with pytest.raises(AlreadyExists, match="already exists"):
        await NotebookCreate().propose({"path": "mine.ipynb"}, context)

    # Created by someone else between the approval card and the click: refused at apply.
    proposal = await NotebookCreate().propose({"path": "race.ipynb"}, context)
    (jp_root_dir / "race.ipynb").write_text("written meanwhile")
    with pytest.raises(Conflict, match="was created since"):
        await _apply(context, NotebookCreate(), proposal)
    assert (jp_root_dir / "mine.ipynb").read_text() == "the user's notebook"
    assert (jp_root_dir / "race.ipynb").read_text() == "written meanwhile"


@pytest.mark.parametrize(
    ("arguments", "error", "match"),
    [
        ({"path": "x.ipynb", "kernel": "no-such-kernel"}, InvalidRequest, "python3"),
        ({"path": "notes.txt"}, InvalidRequest, "ends in .ipynb"),
        ({"path": ".git/hooks.ipynb"}, PathDenied, None),
        ({"path": "../outside.ipynb"}, OutsideWorkspace, None),
    ],
)
async def test_refusals_write_nothing(
    context: ToolContext,
    jp_root_dir: Path,
    arguments: dict[str, Any],
    error: type[Exception],
    match: str | None,
) -> None:
    before = _tree(jp_root_dir)
    with pytest.raises(error, match=match):
        await NotebookCreate().propose(arguments, context)
    assert _tree(jp_root_dir) == before
    assert not (jp_root_dir.parent / "outside.ipynb").exists()
