"""notebook_edit on real .ipynb files through the real security layer: the change set, its
review units, stale and concurrent changes, checkpoints, and once through the agent API."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import nbformat
import pytest

from terax_jupyter.exceptions import (
    Conflict,
    InvalidRequest,
    OutsideWorkspace,
    PathDenied,
    Unsupported,
)
from terax_jupyter.notebook_view.cells import source_hash
from terax_jupyter.services.ai.tools.base import Proposal
from terax_jupyter.services.ai.tools.notebook_edits import NotebookEdit
from terax_jupyter.testing import model_stub as turns
from tests.services.ai.test_agent_api import new_session, run, tool_results

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.services.ai.tools.base import ToolContext, ToolResult
    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api

LONG = "".join(f"line{n} = {n}\n" for n in range(1, 31))


def _book() -> nbformat.NotebookNode:
    book = nbformat.v4.new_notebook()
    title = nbformat.v4.new_markdown_cell("# Sales")
    load = nbformat.v4.new_code_cell("import pandas as pd\ndf = pd.read_csv('sales.csv')")
    load.execution_count = 1
    load.outputs = [nbformat.v4.new_output("stream", name="stdout", text="loaded\n")]
    long = nbformat.v4.new_code_cell(LONG)
    end = nbformat.v4.new_code_cell("print('done')")
    for cell, cell_id in zip(
        (title, load, long, end), ("title", "load", "long", "end"), strict=True
    ):
        cell.id = cell_id
    book.cells = [title, load, long, end]
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    return book


def _write(path: Path, book: Any = None) -> str:
    path.write_text(nbformat.writes(book if book is not None else _book()))
    return path.read_text()


def _cells(path: Path) -> list[dict[str, Any]]:
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    return [dict(cell) for cell in book.cells]


def _sources(path: Path) -> dict[str, str]:
    return {cell["id"]: cell["source"] for cell in _cells(path)}


def h(source: str) -> str:
    return source_hash(source)[:12]


async def _propose(context: ToolContext, ops: list[dict[str, Any]], path: str = "nb.ipynb"):
    return await NotebookEdit().propose({"path": path, "ops": ops}, context)


async def _apply(
    context: ToolContext, proposal: Proposal, hunks: list[int] | None = None
) -> ToolResult:
    # Through JSON, as a pending approval is stored.
    stored = Proposal.from_json(json.loads(json.dumps(proposal.to_json())))
    return await NotebookEdit().apply(stored, context, hunks=hunks)


async def test_a_change_set_applies_every_operation_and_keeps_a_checkpoint(
    context: ToolContext, ws: Path
) -> None:
    original = _write(ws / "nb.ipynb")
    ops = [
        {
            "op": "replace",
            "id": "load",
            "expected_hash": h("import pandas as pd\ndf = pd.read_csv('sales.csv')"),
            "old_string": "sales.csv",
            "new_string": "sales-2026.csv",
        },
        {"op": "insert", "after": "load", "cell_type": "markdown", "source": "## Totals"},
        {"op": "insert", "after": "load", "cell_type": "code", "source": "df.sum()"},
        {"op": "set_type", "id": "end", "expected_hash": h("print('done')"), "cell_type": "raw"},
        {"op": "move", "id": "title", "expected_hash": h("# Sales"), "after": "end"},
    ]
    proposal = await _propose(context, ops)
    assert proposal.kind == "notebook"
    assert proposal.summary == (
        "Edit notebook nb.ipynb: 1 edited, 2 inserted, 1 retyped, 1 moved cells"
    )
    # One unit per hunk of the replaced cell, one per other operation, numbered throughout.
    assert [hunk.index for hunk in proposal.hunks] == [0, 1, 2, 3, 4]
    assert [cell["units"] for cell in proposal.payload["cells"]] == [[0], [1], [2], [3], [4]]
    assert "+df = pd.read_csv('sales-2026.csv')" in proposal.hunks[0].lines
    assert proposal.hunks[1].lines == ["+## Totals", "\\ No newline at end of file"]
    assert (ws / "nb.ipynb").read_text() == original  # nothing written before approval

    result = await _apply(context, proposal)
    assert not result.is_error, result.content
    assert result.data["written"] is True
    cells = _cells(ws / "nb.ipynb")
    assert [cell["source"] for cell in cells] == [
        "import pandas as pd\ndf = pd.read_csv('sales-2026.csv')",
        "## Totals",
        "df.sum()",  # inserts after the same cell keep their order
        LONG,
        "print('done')",
        "# Sales",
    ]
    assert cells[0]["id"] == "load"
    assert cells[0]["outputs"][0]["text"] == "loaded\n"  # a replace keeps the outputs
    inserted = {cell["id"] for cell in cells} - {"title", "load", "long", "end"}
    assert len(inserted) == 2
    assert (cells[4]["id"], cells[4]["cell_type"]) == ("end", "raw")
    checkpoint = ws / ".ipynb_checkpoints" / "nb-checkpoint.ipynb"
    assert checkpoint.read_text() == original
    # Jupyter's own layout: sources split in lines, keys sorted, indent 1.
    written = (ws / "nb.ipynb").read_text()
    assert written == nbformat.writes(nbformat.read(ws / "nb.ipynb", 4)) + "\n"


async def test_a_stale_hash_is_refused_before_anything_is_shown(
    context: ToolContext, ws: Path
) -> None:
    original = _write(ws / "nb.ipynb")
    stale = {"op": "replace", "id": "end", "expected_hash": h("print('old')"), "source": "x"}
    with pytest.raises(Conflict, match="changed since you read it") as raised:
        await _propose(context, [stale])
    assert raised.value.reason == "stale_cell"
    with pytest.raises(
        Conflict, match="Operation 2 of 2: Cell gone is not in the notebook"
    ) as gone:
        await _propose(
            context,
            [
                {"op": "insert", "after": None, "cell_type": "code", "source": "1"},
                {"op": "delete", "id": "gone", "expected_hash": h("x")},
            ],
        )
    assert gone.value.reason == "cell_missing"
    assert (ws / "nb.ipynb").read_text() == original
    assert not (ws / ".ipynb_checkpoints").exists()


async def test_a_cell_the_user_changed_after_the_proposal_refuses_the_batch(
    context: ToolContext, ws: Path
) -> None:
    _write(ws / "nb.ipynb")
    proposal = await _propose(
        context,
        [
            {"op": "replace", "id": "end", "expected_hash": h("print('done')"), "source": "x"},
            {"op": "delete", "id": "title", "expected_hash": h("# Sales")},
        ],
    )
    # The user saves a change to another cell: the change set still applies, theirs is kept.
    book = _book()
    book.cells[2].source = "kept = True"
    _write(ws / "nb.ipynb", book)
    result = await _apply(context, proposal)
    assert _sources(ws / "nb.ipynb") == {
        "load": book.cells[1].source,
        "long": "kept = True",
        "end": "x",
    }
    assert result.data["written"] is True
    # Now they change a cell the change set replaces: refused whole, nothing written.
    proposal = await _propose(
        context,
        [
            {"op": "insert", "after": "end", "cell_type": "code", "source": "new"},
            {"op": "replace", "id": "long", "expected_hash": h("kept = True"), "source": "y"},
        ],
    )
    before = (ws / "nb.ipynb").read_text().replace("kept = True", "kept = False")
    (ws / "nb.ipynb").write_text(before)
    with pytest.raises(Conflict, match="Cell long changed since you read it"):
        await _apply(context, proposal)
    assert (ws / "nb.ipynb").read_text() == before


async def test_only_the_accepted_hunks_and_cells_are_applied(
    context: ToolContext, ws: Path
) -> None:
    _write(ws / "nb.ipynb")
    new_long = LONG.replace("line2 = 2", "line2 = 'two'").replace("line29 = 29", "line29 = 0")
    proposal = await _propose(
        context,
        [
            {"op": "replace", "id": "long", "expected_hash": h(LONG), "source": new_long},
            {"op": "insert", "after": "end", "cell_type": "code", "source": "first()"},
            {"op": "insert", "after": "end", "cell_type": "code", "source": "second()"},
            {"op": "clear_outputs", "id": "load", "expected_hash": h(_book().cells[1].source)},
        ],
    )
    [long, first, second, clear] = proposal.payload["cells"]
    assert long["units"] == [0, 1]  # two hunks far apart in one cell
    assert proposal.hunks[0].header.endswith("cell long")
    assert (first["units"], second["units"], clear["units"]) == ([2], [3], [4])
    # Keep the second hunk of the cell and the second insert (anchored on the first).
    result = await _apply(context, proposal, hunks=[1, 3])
    assert "3 of 5 proposed changes were rejected" in result.content
    cells = _cells(ws / "nb.ipynb")
    assert cells[2]["source"] == LONG.replace("line29 = 29", "line29 = 0")
    assert [cell["source"] for cell in cells[3:]] == ["print('done')", "second()"]
    assert cells[1]["outputs"]  # the clear was rejected
    nothing = await _apply(
        context,
        await _propose(context, [{"op": "delete", "id": "title", "expected_hash": h("# Sales")}]),
        hunks=[],
    )
    assert "Nothing was accepted" in nothing.content
    assert _cells(ws / "nb.ipynb")[0]["id"] == "title"


async def test_a_change_the_open_notebook_already_took_writes_nothing(
    context: ToolContext, ws: Path
) -> None:
    _write(ws / "nb.ipynb")
    proposal = await _propose(
        context,
        [
            {"op": "replace", "id": "end", "expected_hash": h("print('done')"), "source": "x"},
            {
                "op": "set_type",
                "id": "end",
                "expected_hash": h("print('done')"),
                "cell_type": "markdown",
            },
        ],
    )
    # Lab applied the change set to its model and saved it (with its own layout).
    book = _book()
    book.cells[3] = nbformat.v4.new_markdown_cell("x")
    book.cells[3].id = "end"
    saved = json.dumps(book, indent=2)
    (ws / "nb.ipynb").write_text(saved)
    result = await _apply(context, proposal)
    assert result.data["written"] is False
    assert "already has these changes" in result.content
    assert (ws / "nb.ipynb").read_text() == saved
    assert not (ws / ".ipynb_checkpoints").exists()


async def test_find_and_replace_and_malformed_operations_are_refused_clearly(
    context: ToolContext, ws: Path
) -> None:
    original = _write(ws / "nb.ipynb")
    expected = h(LONG)
    cases: list[tuple[dict[str, Any], str]] = [
        (
            {
                "op": "replace",
                "id": "long",
                "expected_hash": expected,
                "old_string": "nope",
                "new_string": "x",
            },
            "was not found in cell long",
        ),
        (
            {
                "op": "replace",
                "id": "long",
                "expected_hash": expected,
                "old_string": "line",
                "new_string": "x",
            },
            "occurs 30 times in cell long",
        ),
        (
            {
                "op": "replace",
                "id": "long",
                "expected_hash": expected,
                "old_string": "line1 ",
                "new_string": "x",
                "source": "y",
            },
            "not both",
        ),
        (
            {"op": "replace", "id": "long", "expected_hash": expected, "source": LONG},
            "would not change cell long",
        ),
        (
            {"op": "set_type", "id": "long", "expected_hash": expected, "cell_type": "code"},
            "would not change cell long",
        ),
        ({"op": "clear_outputs", "id": "title", "expected_hash": h("# Sales")}, "no outputs"),
        (
            {"op": "replace", "id": "~0:1234abcd", "expected_hash": expected, "source": "x"},
            "fallback id",
        ),
        (
            {"op": "replace", "id": "long", "expected_hash": "abc", "source": "x"},
            "changed since you read it",
        ),
    ]
    for op, message in cases:
        with pytest.raises((InvalidRequest, Conflict), match=message):
            await _propose(context, [op])
    assert (ws / "nb.ipynb").read_text() == original


async def test_paths_go_through_the_security_layer(
    context: ToolContext, ws: Path, tmp_path: Path
) -> None:
    (ws / "notes.txt").write_text("text")
    _write(ws / ".env.ipynb")
    _write(tmp_path / "outside.ipynb")
    op = {"op": "delete", "id": "title", "expected_hash": h("# Sales")}
    with pytest.raises(Unsupported, match="not a notebook"):
        await _propose(context, [op], path="notes.txt")
    with pytest.raises(PathDenied):
        await _propose(context, [op], path=".env.ipynb")
    with pytest.raises(OutsideWorkspace):
        await _propose(context, [op], path="../outside.ipynb")
    with pytest.raises(OutsideWorkspace):
        await _propose(context, [op], path=str(tmp_path / "outside.ipynb"))


async def test_the_agent_edits_a_notebook_after_approval_of_some_cells(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    _write(jp_root_dir / "nb.ipynb")
    model_stub.script(
        [
            turns.tool_call(
                "notebook_edit",
                {
                    "path": "nb.ipynb",
                    "ops": [
                        {
                            "op": "replace",
                            "id": "end",
                            "expected_hash": h("print('done')"),
                            "source": "print('finished')",
                        },
                        {"op": "delete", "id": "title", "expected_hash": h("# Sales")},
                    ],
                },
            ),
            turns.text("Edited."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Tidy the notebook")
    approval = (await events.until("approval_requested"))["approval"]
    assert approval["proposal"]["kind"] == "notebook"
    assert [cell["op"] for cell in approval["proposal"]["payload"]["cells"]] == [
        "replace",
        "delete",
    ]
    decided = await terax_api(
        f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve", "hunks": [0]}
    )
    assert decided["status"] == "partially_approved"
    await events.until("finish")
    assert _sources(jp_root_dir / "nb.ipynb")["end"] == "print('finished')"
    assert "title" in _sources(jp_root_dir / "nb.ipynb")
    [result] = tool_results(model_stub, 1)
    assert "1 of 2 proposed changes were rejected" in result["content"]


async def test_two_edits_of_one_cell_are_one_diff(context: ToolContext, ws: Path) -> None:
    _write(ws / "nb.ipynb")
    expected = h(LONG)
    proposal = await _propose(
        context,
        [
            {
                "op": "replace",
                "id": "long",
                "expected_hash": expected,
                "old_string": "line1 = 1\n",
                "new_string": "line1 = 'one'\n",
            },
            {
                "op": "replace",
                "id": "long",
                "expected_hash": expected,
                "old_string": "line30 = 30",
                "new_string": "line30 = 'thirty'",
            },
        ],
    )
    [cell] = proposal.payload["cells"]
    assert cell["units"] == [0, 1]
    await _apply(context, proposal)
    assert _sources(ws / "nb.ipynb")["long"] == LONG.replace(
        "line1 = 1\n", "line1 = 'one'\n"
    ).replace("line30 = 30", "line30 = 'thirty'")
