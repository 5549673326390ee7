"""The lane layout: every parent edge drawn, no lanes colliding or crossing a dot, lanes given
back when their branch ends (as narrow as git's own graph), pages that continue exactly, and a
compact row format the browser's decoder reads as the server means it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.services.git.graph import (
    HOLE,
    PALETTE,
    GraphLayout,
    LayoutState,
    decode_row,
    decode_rows,
)

from .history_fixtures import (
    git,
    git_graph_columns,
    import_with_refs,
    pull_request_dag,
    random_dag,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    Commit = tuple[str, tuple[str, ...]]

LABEXTENSION = Path(__file__).resolve().parents[3] / "labextension"


def layout(commits: Sequence[Commit]) -> list[list[int]]:
    graph = GraphLayout()
    return [graph.add(oid, parents) for oid, parents in commits]


def paged(commits: Sequence[Commit], size: int) -> tuple[list[list[int]], list[list[int]]]:
    """The same layout one page at a time, each page from the state the previous one left;
    the rows and the lane colours each page says are at its top."""
    state = GraphLayout().state()
    rows: list[list[int]] = []
    tops: list[list[int]] = []
    for start in range(0, len(commits), size):
        graph = GraphLayout(LayoutState(*state))
        tops.append(list(graph.colors))
        rows += [graph.add(oid, parents) for oid, parents in commits[start : start + size]]
        state = graph.state()
    return rows, tops


def row_width(graph: dict[str, Any]) -> int:
    """Columns a decoded row touches."""
    ends = [graph["column"]] + [max(e["from"], e["to"]) for e in graph["edges"]]
    return max(ends) + 1


def put(bottom: dict[int, tuple[str, int]], oid: str, at: int, target: str, color: int) -> None:
    """Record the lane at a row's bottom column; two different lanes there collide."""
    assert at >= 0
    if at in bottom:
        assert bottom[at][0] == target, f"two lanes collide in column {at} under {oid}"
    else:
        bottom[at] = (target, color)


def check_layout(commits: Sequence[Commit], rows: Sequence[Sequence[int]]) -> int:
    """Follow every lane from row to row and prove the drawing says what the history says;
    the widest row's column count.

    ``rows`` are the rows of a whole history from its top, as the API sends them; they are
    decoded with the reference decoder. Each row: every lane at its top is continued by
    exactly one edge or ends in the dot; the lane ending in the dot is the one waiting for
    the commit, and no two lanes ever wait for the same commit; its own lane leads to its
    first parent (a lane joining it below the dot waits for the same parent) and a merge
    edge to each other parent; no two lanes share a column at the row's bottom; no lane
    passes through or across the commit's column; the colours at the bottom are the lanes'.
    At the end no lane is left waiting.
    """
    listed = {oid for oid, _ in commits}
    lanes: dict[int, tuple[str, int]] = {}  # column at the top of the row -> (target, colour)
    colors: list[int] = []
    widest = 0
    for (oid, parents), raw in zip(commits, rows, strict=True):
        assert all(isinstance(n, int) for n in raw), raw
        assert len(raw) >= 3, raw
        row, bottom_colors = decode_row(colors, raw)
        widest = max(widest, row_width(row))
        column = row["column"]
        bottom: dict[int, tuple[str, int]] = {}
        targets = [target for target, _ in lanes.values()]
        assert len(targets) == len(set(targets)), f"two lanes wait for one commit above {oid}"

        waiting = [i for i, (target, _) in lanes.items() if target == oid]
        if waiting:
            assert waiting == [column]
            assert row["color"] == lanes[column][1]
            assert row["above"] is True
        else:
            assert column not in lanes, "a tip's dot sits on another lane"
            assert row["above"] is False
        assert row["color"] in range(PALETTE)
        covered: list[int] = [column] if waiting else []
        own = [e for e in row["edges"] if e["kind"] == "line" and e["from"] == column]
        assert len(own) == (1 if parents else 0)
        merges = [e for e in row["edges"] if e["kind"] == "merge"]
        for edge in row["edges"]:
            start, end, kind = edge["from"], edge["to"], edge["kind"]
            assert edge["color"] in range(PALETTE)
            if kind == "merge":
                assert start == column
                assert parents[1:]
            elif kind == "join":
                # A lane waiting for the first parent too: it ends in the first parent's lane
                # below the dot, coming from the right.
                assert start in lanes
                assert start > column
                assert parents
                assert lanes[start][0] == parents[0]
                assert end == own[0]["to"] == column
                assert edge["color"] == lanes[start][1]
                covered.append(start)
            elif start == column:  # the commit's own lane, from the dot to the first parent
                put(bottom, oid, end, parents[0], edge["color"])
            else:  # a lane passing by
                assert kind == "line"
                assert start in lanes
                assert lanes[start][0] != oid
                assert end != column, f"a lane slides under the dot of {oid}"
                assert (start < column) == (end < column), f"a lane crosses the dot of {oid}"
                assert edge["color"] == lanes[start][1]
                put(bottom, oid, end, lanes[start][0], edge["color"])
                covered.append(start)
        assert sorted(covered) == sorted(lanes), f"lanes at the top of {oid} not continued"
        others = [p for p in dict.fromkeys(parents[1:]) if p != parents[0]]
        assert len(merges) == len(others), f"a merge edge of {oid} is missing"
        for edge, parent in zip(merges, others, strict=True):
            put(bottom, oid, edge["to"], parent, edge["color"])
        assert len(bottom_colors) > max(bottom, default=-1)
        for at, lane_color in enumerate(bottom_colors):
            if at in bottom:
                assert lane_color == bottom[at][1], f"colour of column {at} under {oid}"
            else:
                assert lane_color == HOLE, f"column {at} under {oid} is no lane"
        lanes = bottom
        colors = bottom_colors
    leftover = {target for target, _ in lanes.values()}
    assert not (leftover & listed), "a lane waits for a commit that was already drawn"
    assert not leftover, f"lanes still waiting at the end: {leftover}"
    return widest


def decoded(commits: Sequence[Commit]) -> list[dict[str, Any]]:
    rows = layout(commits)
    check_layout(commits, rows)
    return decode_rows([], rows)


def test_linear_history_is_one_lane() -> None:
    commits = [("c", ("b",)), ("b", ("a",)), ("a", ())]
    rows = layout(commits)
    assert rows == [[0, 0, 0, 0, 0, 0], [0, 0, 0], [0, 0, -1, 0, 1, 0]]
    graphs = decoded(commits)
    assert graphs[0] == {
        "column": 0,
        "color": 0,
        "above": False,
        "edges": [{"from": 0, "to": 0, "kind": "line", "color": 0}],
    }
    # The root keeps only the half above its dot (no edge below; its column closes).
    assert graphs[2] == {"column": 0, "color": 0, "above": True, "edges": []}


def test_merge_and_fork_shapes() -> None:
    #   m        merge of a (main) and f (feature)
    #   | f
    #   a |
    #   |/
    #   b        fork point
    commits = [("m", ("a", "f")), ("f", ("b",)), ("a", ("b",)), ("b", ())]
    graphs = decoded(commits)
    assert graphs[0]["edges"] == [
        {"from": 0, "to": 0, "kind": "line", "color": 0},
        {"from": 0, "to": 1, "kind": "merge", "color": 1},
    ]
    assert graphs[1]["column"] == 1
    # a's first parent b is what f's lane waits for: f's lane joins a's below a's dot, so
    # only one lane comes down into b.
    assert {"from": 1, "to": 0, "kind": "join", "color": 1} in graphs[2]["edges"]
    assert graphs[3]["column"] == 0
    assert graphs[3]["edges"] == []
    assert max(row_width(g) for g in graphs[2:]) == 2


def test_a_branch_joins_the_lane_to_its_left_at_once() -> None:
    #   a        main
    #   | t      a tip whose parent p main already waits for
    #   |/
    #   p
    commits = [("a", ("p",)), ("t", ("p",)), ("p", ())]
    rows = layout(commits)
    graphs = decoded(commits)
    # t's lane leaves its dot for main's lane; t's column is given back at once.
    assert graphs[1]["edges"] == [
        {"from": 0, "to": 0, "kind": "line", "color": 0},
        {"from": 1, "to": 0, "kind": "line", "color": 1},
    ]
    assert rows[1] == [1, 1, 0]  # a tip that opens no lane of its own
    assert row_width(graphs[2]) == 1


def test_merge_joins_a_lane_already_waiting_for_the_parent() -> None:
    # x and y are tips; y merges x's parent p, which x's lane already waits for.
    commits = [("x", ("p",)), ("y", ("q", "p")), ("q", ("p",)), ("p", ())]
    graphs = decoded(commits)
    merge = [e for e in graphs[1]["edges"] if e["kind"] == "merge"]
    assert merge == [{"from": 1, "to": 0, "kind": "merge", "color": 0}]
    assert max(len(g["edges"]) for g in graphs) <= 3


def test_octopus_merge_opens_a_lane_per_parent() -> None:
    commits = [("o", ("a", "b", "c")), ("c", ("r",)), ("b", ("r",)), ("a", ("r",)), ("r", ())]
    graphs = decoded(commits)
    merges = [e["to"] for e in graphs[0]["edges"] if e["kind"] == "merge"]
    assert merges == [1, 2]
    # c and b join a's lane as soon as they are drawn: one lane is left for r.
    assert row_width(graphs[4]) == 1


def test_a_root_leaves_a_hole_so_no_lane_slides_under_its_dot() -> None:
    # Two histories: the root r1 ends lane 0 while lane 1 (x's) passes by.
    commits = [("t", ("r1",)), ("x", ("r2",)), ("r1", ()), ("r2", ())]
    graphs = decoded(commits)
    passing = [e for e in graphs[2]["edges"] if e["from"] == 1]
    assert passing == [{"from": 1, "to": 1, "kind": "line", "color": 1}]
    # The next tip takes the hole: its column is given back.
    more = [*commits[:3], ("z", ("r3",)), ("r2", ()), ("r3", ())]
    graphs = decoded(more)
    assert graphs[3]["column"] == 0
    assert max(row_width(g) for g in graphs) == 2


def test_unknown_parents_keep_their_lanes() -> None:
    # A page of a longer history (or a shallow clone): parents below the page stay lanes.
    rows = layout([("b", ("a",))])
    (graph,) = decode_rows([], rows)
    assert graph["edges"] == [{"from": 0, "to": 0, "kind": "line", "color": 0}]


@pytest.mark.parametrize("seed", range(12))
def test_generated_histories_keep_the_invariants(seed: int) -> None:
    commits = random_dag(600, seed, branches=2 + seed % 7, roots=1 + seed % 3)
    check_layout(commits, layout(commits))


@pytest.mark.parametrize("seed", range(6))
def test_pull_request_histories_keep_the_invariants(seed: int) -> None:
    commits, _ = pull_request_dag(1500, seed, pulls=200)
    check_layout(commits, layout(commits))


@pytest.mark.parametrize("size", [1, 2, 3, 7, 50, 199, 600])
def test_pages_continue_exactly(size: int) -> None:
    commits = random_dag(600, 99, branches=8, roots=2)
    whole = layout(commits)
    rows, tops = paged(commits, size)
    assert rows == whole
    # Each page's lanes at its top are what the rows above leave: a page decodes alone.
    graphs = decode_rows([], whole)
    for number, top in enumerate(tops):
        start = number * size
        alone = decode_rows(top, whole[start : start + size])
        assert alone == graphs[start : start + size]


def test_state_round_trips_and_width() -> None:
    commits = random_dag(300, 5, branches=5)
    graph = GraphLayout()
    for oid, parents in commits[:150]:
        graph.add(oid, parents)
    state = graph.state()
    resumed = GraphLayout(state)
    assert resumed.state() == state
    assert resumed.width == graph.width == len(state.lanes)
    assert resumed.colors == state.colors


def test_colours_stay_in_the_palette_and_branches_keep_theirs() -> None:
    commits = random_dag(2000, 3, branches=12)
    rows = layout(commits)
    check_layout(commits, rows)
    graphs = decode_rows([], rows)
    assert {g["color"] for g in graphs} <= set(range(PALETTE))
    # A first-parent chain keeps its colour: each commit's colour is its first child's.
    by_oid = {oid: g for (oid, _), g in zip(commits, graphs, strict=False)}
    first_child: dict[str, str] = {}
    for oid, parents in commits:
        if parents and parents[0] not in first_child:
            first_child[parents[0]] = oid
    for oid, child in first_child.items():
        if by_oid[child]["column"] == by_oid[oid]["column"]:
            assert by_oid[child]["color"] == by_oid[oid]["color"]


def test_rows_are_compact() -> None:
    # A row costs a few numbers however many lanes pass it: no object per edge.
    commits, _ = pull_request_dag(1500, 1, pulls=200)
    rows = layout(commits)
    widest = check_layout(commits, rows)
    assert widest >= 10
    assert sum(len(row) <= 3 for row in rows) > len(rows) / 2
    assert len(json.dumps(rows)) < 20 * len(rows)  # an object per edge took 50 bytes each


# -- against git's own graph on real repositories ------------------------------------------------


def log_of(root: Path, *revisions: str) -> list[Commit]:
    text = git(root, "log", "--topo-order", "--format=%H %P", *revisions)
    return [(line.split()[0], tuple(line.split()[1:])) for line in text.splitlines()]


@pytest.mark.parametrize("seed", range(4))
def test_as_narrow_as_gits_graph_with_many_pull_request_refs(tmp_path: Path, seed: int) -> None:
    # A mirror of a hosted project: hundreds of refs/pull/* whose lanes end soon after they
    # start. The graph must be about as wide as git's, which gives such columns back; a
    # layout that keeps each lane until the commit it waits for is drawn is half again wider.
    dag, refs = pull_request_dag(1500, seed, pulls=180)
    root = tmp_path / "mirror"
    import_with_refs(root, dag, refs)
    commits = log_of(root, "--all")
    assert len(commits) == len(dag)
    widest = check_layout(commits, layout(commits))
    columns = git_graph_columns(root, "--all")
    assert columns >= 15
    assert widest <= columns + 1, f"{widest} columns where git needs {columns}"


def test_as_narrow_as_gits_graph_with_branches_that_end(tmp_path: Path) -> None:
    # Feature branches merged back and left, octopus merges, main merged into features.
    dag = random_dag(1200, 11, branches=10, roots=2)
    children = {p for _, parents in dag for p in parents}
    tips = [oid for oid, _ in dag if oid not in children]
    refs = {f"refs/heads/tip{n}": tip for n, tip in enumerate(tips)}
    refs["refs/heads/main"] = tips[0]
    root = tmp_path / "branches"
    import_with_refs(root, dag, refs)
    commits = log_of(root, "--all")
    widest = check_layout(commits, layout(commits))
    assert widest <= git_graph_columns(root, "--all") + 1


# -- the browser's decoder reads the rows as the server means them -----------------------------

DECODE = """
import { decodePage, rowGeometry } from './gitgraph.mjs';
import { readFileSync } from 'node:fs';
const page = JSON.parse(readFileSync(process.argv[2], 'utf-8'));
const metrics = { laneWidth: 14, rowHeight: 28, dotRadius: 4 };
const out = [];
for (const row of decodePage(page.lanes, page.rows)) {
  rowGeometry(row, metrics);  // draws every decoded row without throwing
  out.push({ column: row.column, color: row.color, above: row.above, edges: row.edges });
}
console.log(JSON.stringify(out));
"""


def test_the_browser_decodes_the_rows_as_the_server_means_them(tmp_path: Path) -> None:
    # The built decoder (labextension/lib/common/gitgraph.js, what the History panel runs)
    # against the reference decoder, on pages of a history with every shape, from the top
    # and from the middle (a page drawn from its own lane colours).
    node = shutil.which("node")
    built = LABEXTENSION / "lib" / "common" / "gitgraph.js"
    assert node, "node is needed to run the browser's decoder"
    assert built.exists(), "build the labextension first (jlpm build)"
    shutil.copy(built, tmp_path / "gitgraph.mjs")
    (tmp_path / "decode.mjs").write_text(DECODE)
    commits, _ = pull_request_dag(900, 5, pulls=120)
    # A second history beside it (other ids): roots, holes, octopus merges.
    commits += [
        ("f" + oid[1:], tuple("f" + p[1:] for p in parents))
        for oid, parents in random_dag(600, 4, branches=9, roots=3)
    ]
    rows, tops = paged(commits, 300)
    assert len(tops) == 5
    assert any(tops[1:])
    for number, top in enumerate(tops):
        page = rows[number * 300 : (number + 1) * 300]
        (tmp_path / "page.json").write_text(json.dumps({"lanes": top, "rows": page}))
        result = subprocess.run(
            [node, str(tmp_path / "decode.mjs"), str(tmp_path / "page.json")],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
        )
        assert json.loads(result.stdout) == decode_rows(top, page), f"page {number}"
