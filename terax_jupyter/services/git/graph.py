"""Lane layout of the commit graph over a topologically ordered log, resumable page by page.

A lane is a vertical line waiting for one commit (its *target*): a parent some row above
pointed at. No two lanes wait for the same commit: as in ``git log --graph``, a branch whose
parent another lane already waits for joins that lane at once, and its own lane ends there.
That is what keeps the graph of a history with thousands of pull-request refs as narrow as
git's own (each ends where it forked, rather than running beside the main line down to the
commit it forked from).

Each row takes its commit's lane (a tip, waited for by no lane, takes the leftmost hole or a
new lane at the right end) and gives it to the first parent, so a branch keeps its column and
colour. The first parent already waited for elsewhere: a lane to the left takes the branch
over (its column becomes a hole), a lane to the right joins this one below the dot. Another
parent joins the lane waiting for it, else gets a new lane at the right end.

Lanes close up to the left, but never across a commit's column: a lane passing a commit keeps
its side of the dot. So lanes left of the dot pass straight down, holes (the column of a
branch that ended) wait until a row to their right can close them, and only lanes to the
right of the dot move left.

The state between two rows is only the list of lanes (target, colour) and the next colour, so
a page can stop anywhere and the next page continues from a saved ``LayoutState`` exactly as
one long layout would (the tests concatenate pages of many sizes and compare).

A row is sent as a short array of integers (``row_graph`` documents it; the client replays
the rows from the lane colours at the page's top). Passing lanes are implied, so a row costs
a few numbers however many lanes run beside it: the pull-request history that took 31 MiB as
an object per edge takes about a hundred KiB.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

PALETTE = 16
"""Colours are indices ``0..PALETTE-1``; the UI maps them to its palette."""

HOLE = -1
"""The colour of a hole: a column no lane runs in (yet)."""


class LayoutState(NamedTuple):
    """Everything a layout needs to continue after a row."""

    lanes: tuple[str | None, ...]
    colors: tuple[int, ...]
    next_color: int


EMPTY_STATE = LayoutState((), (), 0)

Row = list[int]
"""``[column, color, first, m, *merges, r, *removed, *opened]``, trailing empty parts left out.

- ``column``, ``color``: the commit's dot;
- ``first``: the bottom column its first parent's lane leaves the dot for (-1: a root);
- ``merges``: the bottom columns of its other parents' lanes (a merge edge from the dot each);
- ``removed``: top columns that do not go on as their own lane. The commit's column (its lane
  ends in the dot) and holes vanish; any other lane joins the ``first`` lane at the bottom
  (two branches that wait for the same parent become one);
- ``opened``: the colours of the lanes that open at the bottom's right end.

The top lanes that stay keep their order at the bottom (removed ones close up), followed by
the opened ones. The commit's own column stays, when not removed, as its first parent's lane
if ``first`` is its bottom column, else as a hole.
"""


class GraphLayout:
    """Places commits one row at a time; ``state()`` lets another layout resume after it."""

    __slots__ = ("_colors", "_holes", "_lanes", "_next_color")

    def __init__(self, state: LayoutState = EMPTY_STATE) -> None:
        self._lanes: list[str | None] = list(state.lanes)
        self._colors: list[int] = list(state.colors)
        self._next_color = state.next_color
        self._holes = self._lanes.count(None)

    def state(self) -> LayoutState:
        return LayoutState(tuple(self._lanes), tuple(self._colors), self._next_color)

    @property
    def width(self) -> int:
        return len(self._lanes)

    @property
    def colors(self) -> tuple[int, ...]:
        """The colour of each lane (``HOLE`` for a hole) below the last row: the top of the
        next one, which is what a page sends so that it can be drawn on its own."""
        return tuple(self._colors)

    def add(self, oid: str, parents: Sequence[str]) -> Row:
        lanes = self._lanes
        colors = self._colors
        if len(parents) == 1 and not self._holes:
            # Most rows: a commit on its branch's lane whose parent nobody else waits for.
            try:
                column = lanes.index(oid)
            except ValueError:
                column = -1
            if column >= 0 and parents[0] not in lanes:
                lanes[column] = parents[0]
                return [column, colors[column], column]
        width = len(lanes)
        try:
            column = lanes.index(oid)
        except ValueError:
            column = -1
        if column >= 0:
            color = colors[column]
            tip = False
        else:
            # A tip: no row above pointed here. It takes the leftmost hole, else a new lane.
            column = lanes.index(None) if self._holes else width
            color = self._new_color()
            tip = True
        first_parent = parents[0] if parents else None
        other = -1  # the lane already waiting for the first parent
        if first_parent is not None:
            try:
                other = lanes.index(first_parent)
            except ValueError:
                other = -1
        joined = -1  # a lane to the right that joins this one below the dot
        if first_parent is None or (other >= 0 and (tip or other < column)):
            own = None  # a root, or the lane at ``other`` takes the branch over
        else:
            own = first_parent
            if other >= 0:
                joined = other
        if column < width:
            if lanes[column] is None:
                self._holes -= 1
            lanes[column] = own
            if own is None:
                colors[column] = HOLE
                self._holes += 1
            else:
                colors[column] = color
        elif own is not None:
            lanes.append(own)
            colors.append(color)

        removed: list[int] = []
        if self._holes or joined >= 0:
            removed = self._removable(column, joined)
        for i in reversed(removed):  # a few per row at most; each a memmove in C
            if lanes[i] is None:
                self._holes -= 1
            del lanes[i]
            del colors[i]

        if own is not None:
            first = column
        elif other >= 0:
            first = other
        else:
            first = -1
        if removed and first >= 0:
            first -= bisect_left(removed, first)  # its bottom column: removed ones close up
        opened: list[int] = []
        if own is not None and column >= width:
            opened.append(color)
        merges: list[int] = []
        if len(parents) > 1:
            seen = {first_parent}
            for parent in parents[1:]:
                if parent in seen:
                    continue
                seen.add(parent)
                try:
                    at = lanes.index(parent)
                except ValueError:
                    # No lane waits for this parent yet: it gets its own, at the right end.
                    at = len(lanes)
                    lanes.append(parent)
                    new = self._new_color()
                    colors.append(new)
                    opened.append(new)
                merges.append(at)
        row = [column, color, first]
        if merges or removed or opened:
            row.append(len(merges))
            row += merges
            if removed or opened:
                row.append(len(removed))
                row += removed
                row += opened
        return row

    def _removable(self, column: int, joined: int) -> list[int]:
        """The top columns that close in this row, ascending: holes right of the commit (a
        lane there may move left without crossing the dot), the lane joining this one, and
        the commit's own column when it became a hole with nothing right of it left."""
        lanes = self._lanes
        removed: list[int] = []
        if self._holes:
            start = column + 1
            index = lanes.index
            while True:  # list.index scans in C: most rows have no hole to their right
                try:
                    start = index(None, start) + 1
                except ValueError:
                    break
                removed.append(start - 1)
        if joined >= 0:
            insort(removed, joined)
        if (
            column < len(lanes)
            and lanes[column] is None
            and len(removed) == len(lanes) - column - 1
        ):
            removed.insert(0, column)
        return removed

    def _new_color(self) -> int:
        color = self._next_color
        self._next_color = (color + 1) % PALETTE
        return color

    def extend(self, commits: Iterable[tuple[str, Sequence[str]]]) -> list[Row]:
        add = self.add
        return [add(oid, parents) for oid, parents in commits]


def row_graph(row: Row) -> list[int]:
    """The ``graph`` of one commit in the API: the row as it is (see ``Row``)."""
    return row


def decode_row(top: Sequence[int], row: Sequence[int]) -> tuple[dict[str, Any], list[int]]:
    """The edges of a row and the lane colours at its bottom (the next row's top).

    The reference decoder (labextension/src/common/gitgraph.ts does the same): edges go from
    a column at the row's top to one at its bottom; ``kind`` is ``line`` (a lane passing by,
    and the commit's own lane below the dot, from ``column``), ``merge`` (from the dot to
    another parent's lane) or ``join`` (a lane that ends in the first parent's lane below
    the dot). ``above``: whether a lane comes down into the dot.
    """
    column, color, first = row[0], row[1], row[2]
    index = 3
    count = row[index] if len(row) > index else 0
    merges = list(row[index + 1 : index + 1 + count])
    index += 1 + count
    count = row[index] if len(row) > index else 0
    removed = list(row[index + 1 : index + 1 + count])
    opened = list(row[index + 1 + count :])
    gone = set(removed)
    bottom_colors: list[int] = []
    moved: dict[int, int] = {}
    for i, lane in enumerate(top):
        if i in gone:
            continue
        moved[i] = len(bottom_colors)
        bottom_colors.append(lane)
    if column in moved:
        bottom_colors[moved[column]] = color if first == moved[column] else HOLE
    bottom_colors += opened
    edges: list[dict[str, Any]] = []
    for i, lane in enumerate(top):
        if lane == HOLE or i == column:
            continue
        if i in gone:
            edges.append({"from": i, "to": first, "kind": "join", "color": lane})
        else:
            edges.append({"from": i, "to": moved[i], "kind": "line", "color": lane})
    if first >= 0:
        edges.append({"from": column, "to": first, "kind": "line", "color": color})
    for at in merges:
        edges.append({"from": column, "to": at, "kind": "merge", "color": bottom_colors[at]})
    above = column < len(top) and top[column] != HOLE
    graph = {"column": column, "color": color, "above": above, "edges": edges}
    return graph, bottom_colors


def decode_rows(top: Sequence[int], rows: Iterable[Sequence[int]]) -> list[dict[str, Any]]:
    """``decode_row`` over consecutive rows, from the lane colours at the first one's top."""
    lanes = list(top)
    graphs: list[dict[str, Any]] = []
    for row in rows:
        graph, lanes = decode_row(lanes, row)
        graphs.append(graph)
    return graphs
