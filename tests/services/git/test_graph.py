"""The lane layout: every parent edge drawn, no lanes colliding, pages that continue exactly."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.services.git.graph import (
    PALETTE,
    GraphLayout,
    LayoutState,
    flat_graph,
    row_graph,
)

from .history_fixtures import random_dag

if TYPE_CHECKING:
    from collections.abc import Sequence

    Commit = tuple[str, tuple[str, ...]]


def layout(commits: Sequence[Commit]) -> list[dict[str, Any]]:
    graph = GraphLayout()
    return [row_graph(graph.add(oid, parents)) for oid, parents in commits]


def paged(commits: Sequence[Commit], size: int) -> list[dict[str, Any]]:
    """The same layout, one page at a time, each page from the state the previous one left."""
    state = GraphLayout().state()
    rows: list[dict[str, Any]] = []
    for start in range(0, len(commits), size):
        graph = GraphLayout(LayoutState(*state))
        rows += [
            row_graph(graph.add(oid, parents)) for oid, parents in commits[start : start + size]
        ]
        state = graph.state()
    return rows


def put(bottom: dict[int, tuple[str, int]], oid: str, at: int, target: str, color: int) -> None:
    """Record the lane at a row's bottom column; two different lanes there collide."""
    assert at >= 0
    if at in bottom:
        assert bottom[at][0] == target, f"two lanes collide in column {at} under {oid}"
    else:
        bottom[at] = (target, color)


def check_layout(commits: Sequence[Commit], rows: Sequence[dict[str, Any]]) -> None:
    """Follow every lane from row to row and prove the drawing says what the history says.

    Each row: every lane at its top is continued by exactly one edge; the lanes ending at the
    commit are the ones waiting for it; its own lane leads to its first parent and a merge
    edge to each other parent; no two lanes share a column at the row's bottom; no lane
    passes through the commit's column. At the end no lane is left waiting.
    """
    listed = {oid for oid, _ in commits}
    lanes: dict[int, tuple[str, int]] = {}  # column at the top of the row -> (target, colour)
    for (oid, parents), row in zip(commits, rows, strict=True):
        column = row["column"]
        bottom: dict[int, tuple[str, int]] = {}

        waiting = {i for i, (target, _) in lanes.items() if target == oid}
        if waiting:
            assert column == min(waiting)
            assert row["color"] == lanes[column][1]
        else:
            assert column not in lanes, "a tip's dot sits on another lane"
        covered: list[int] = []
        own = [e for e in row["edges"] if e["kind"] == "line" and e["from"] == column]
        assert len(own) == (1 if waiting or parents else 0)
        for edge in row["edges"]:
            start, end, kind = edge["from"], edge["to"], edge["kind"]
            assert edge["color"] in range(PALETTE)
            if kind == "branch":
                assert end == column
                assert start != column
                assert lanes[start][0] == oid
                assert edge["color"] == lanes[start][1]
                covered.append(start)
            elif kind == "merge":
                assert start == column
                assert parents[1:]
                assert end != column
            elif start == column:  # the commit's own lane
                if column in lanes:
                    covered.append(column)
                if parents:
                    put(bottom, oid, end, parents[0], edge["color"])
                else:
                    assert end == column  # only the half above the dot
            else:  # a lane passing by
                assert start in lanes
                assert lanes[start][0] != oid
                assert end != column, "a lane slides under the dot"
                assert edge["color"] == lanes[start][1]
                put(bottom, oid, end, lanes[start][0], edge["color"])
                covered.append(start)
        assert sorted(covered) == sorted(lanes), f"lanes at the top of {oid} not continued"
        merges = [e for e in row["edges"] if e["kind"] == "merge"]
        joined = [bottom[e["to"]][0] for e in merges if e["to"] in bottom]
        others = [p for p in dict.fromkeys(parents[1:]) if p != parents[0]]
        opened = [p for p in others if p not in joined]
        assert sorted(joined + opened) == sorted(others), f"a merge edge of {oid} is missing"
        fresh = [e for e in merges if e["to"] not in bottom]
        assert len(fresh) == len(opened)
        for edge, target in zip(fresh, opened, strict=True):
            put(bottom, oid, edge["to"], target, edge["color"])
        lanes = bottom
    leftover = {target for target, _ in lanes.values()}
    assert not (leftover & listed), "a lane waits for a commit that was already drawn"
    assert not leftover, f"lanes still waiting at the end: {leftover}"


def test_linear_history_is_one_lane() -> None:
    commits = [("c", ("b",)), ("b", ("a",)), ("a", ())]
    rows = layout(commits)
    check_layout(commits, rows)
    assert rows[0] == {
        "column": 0,
        "color": 0,
        "edges": [{"from": 0, "to": 0, "kind": "line", "color": 0}],
    }
    assert [r["column"] for r in rows] == [0, 0, 0]
    # The root keeps only the half above its dot.
    assert rows[2]["edges"] == [{"from": 0, "to": 0, "kind": "line", "color": 0}]


def test_merge_and_fork_shapes() -> None:
    #   m        merge of a (main) and f (feature)
    #   | f
    #   a |
    #   |/
    #   b        fork point
    commits = [("m", ("a", "f")), ("f", ("b",)), ("a", ("b",)), ("b", ())]
    rows = layout(commits)
    check_layout(commits, rows)
    assert rows[0]["edges"] == [
        {"from": 0, "to": 0, "kind": "line", "color": 0},
        {"from": 0, "to": 1, "kind": "merge", "color": 1},
    ]
    assert rows[1]["column"] == 1
    assert rows[3]["column"] == 0
    assert {"from": 1, "to": 0, "kind": "branch", "color": 1} in rows[3]["edges"]


def test_merge_joins_a_lane_already_waiting_for_the_parent() -> None:
    # x and y are tips; y merges x's parent p, which x's lane already waits for.
    commits = [("x", ("p",)), ("y", ("q", "p")), ("q", ("p",)), ("p", ())]
    rows = layout(commits)
    check_layout(commits, rows)
    merge = [e for e in rows[1]["edges"] if e["kind"] == "merge"]
    assert merge == [{"from": 1, "to": 0, "kind": "merge", "color": 0}]
    assert max(len(r["edges"]) for r in rows) <= 3


def test_octopus_merge_opens_a_lane_per_parent() -> None:
    commits = [("o", ("a", "b", "c")), ("c", ("r",)), ("b", ("r",)), ("a", ("r",)), ("r", ())]
    rows = layout(commits)
    check_layout(commits, rows)
    merges = [e["to"] for e in rows[0]["edges"] if e["kind"] == "merge"]
    assert merges == [1, 2]
    branches = [e["from"] for e in rows[4]["edges"] if e["kind"] == "branch"]
    assert sorted(branches) == [1, 2]


def test_a_root_leaves_a_hole_so_no_lane_slides_under_its_dot() -> None:
    # Two histories: the root r1 ends lane 0 while lane 1 (x's) passes by.
    commits = [("t", ("r1",)), ("x", ("r2",)), ("r1", ()), ("r2", ())]
    rows = layout(commits)
    check_layout(commits, rows)
    passing = [e for e in rows[2]["edges"] if e["from"] == 1]
    assert passing == [{"from": 1, "to": 1, "kind": "line", "color": 1}]
    # The next tip closes the hole again.
    more = [*commits[:3], ("z", ("r2",)), ("r2", ())]
    check_layout(more, layout(more))


def test_unknown_parents_keep_their_lanes() -> None:
    # A page of a longer history (or a shallow clone): parents below the page stay lanes.
    rows = layout([("b", ("a",))])
    assert rows[0]["edges"] == [{"from": 0, "to": 0, "kind": "line", "color": 0}]


def test_flat_graph() -> None:
    assert flat_graph() == {"column": 0, "color": 0, "edges": []}
    assert flat_graph() is not flat_graph()


@pytest.mark.parametrize("seed", range(12))
def test_generated_histories_keep_the_invariants(seed: int) -> None:
    commits = random_dag(600, seed, branches=2 + seed % 7, roots=1 + seed % 3)
    check_layout(commits, layout(commits))


@pytest.mark.parametrize("size", [1, 2, 3, 7, 50, 199, 600])
def test_pages_continue_exactly(size: int) -> None:
    commits = random_dag(600, 99, branches=8, roots=2)
    whole = layout(commits)
    assert paged(commits, size) == whole


def test_state_round_trips_and_width() -> None:
    commits = random_dag(300, 5, branches=5)
    graph = GraphLayout()
    for oid, parents in commits[:150]:
        graph.add(oid, parents)
    state = graph.state()
    resumed = GraphLayout(state)
    assert resumed.state() == state
    assert resumed.width == graph.width == len(state.lanes)


def test_colours_stay_in_the_palette_and_branches_keep_theirs() -> None:
    commits = random_dag(2000, 3, branches=12)
    rows = layout(commits)
    check_layout(commits, rows)
    assert {r["color"] for r in rows} <= set(range(PALETTE))
    # A first-parent chain keeps its colour: each commit's colour is its first child's.
    by_oid = {oid: row for (oid, _), row in zip(commits, rows, strict=False)}
    first_child: dict[str, str] = {}
    for oid, parents in commits:
        if parents and parents[0] not in first_child:
            first_child[parents[0]] = oid
    for oid, child in first_child.items():
        if by_oid[child]["column"] == by_oid[oid]["column"]:
            assert by_oid[child]["color"] == by_oid[oid]["color"]
