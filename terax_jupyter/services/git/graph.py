"""Lane layout of the commit graph over a topologically ordered log, resumable page by page.

A lane is a vertical line waiting for one commit (its *target*): a parent some row above
pointed at. Each row takes its commit out of the lanes waiting for it and puts the parents
in: the first parent takes the commit's own column, so a branch keeps its column and colour;
another parent joins a lane already waiting for it, else gets a new lane at the right end.
Lanes that end close their gap (the lanes to their right move left), with one exception: a
root commit leaves a hole in its column for a row, so no lane slides under its dot.

The state between two rows is only the list of lanes (target, colour) and the next colour, so
a page can stop anywhere and the next page continues from a saved ``LayoutState`` exactly as
one long layout would (the tests concatenate pages of many sizes and compare).

Rows are kept compact (a tuple per row, the colours at its top copied in C) and become edge
dictionaries only for the rows a page sends: laying out 50k commits must stay cheap.

Edges, as the API sends them (``row_graph``), go from a column at the row's top to a column
at its bottom; the commit's dot sits in the middle of ``column``:

- ``{from: column, to: c, kind: "line"}``: the commit's own lane, cut at the dot: the upper
  half exists when the row above ends an edge in ``column``, the lower half when the commit
  has a parent (``c`` differs from ``column`` only when a hole to its left closed);
- ``{from: a, to: column, kind: "branch"}``: another lane ending at the dot (two children
  of this commit: the branches forked here);
- ``{from: column, to: b, kind: "merge"}``: from a merge commit to the lane of another parent;
- ``{from: i, to: j, kind: "line"}`` with neither end in ``column``: a lane passing by.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

PALETTE = 16
"""Colours are indices ``0..PALETTE-1``; the UI maps them to its palette."""

_HOLE = -1  # the colour of a hole (a lane that waits for nothing)


class LayoutState(NamedTuple):
    """Everything a layout needs to continue after a row."""

    lanes: tuple[str | None, ...]
    colors: tuple[int, ...]
    next_color: int


class Row(NamedTuple):
    """One commit's row, before it becomes edges (``row_graph``).

    ``top``: the colour of every lane at the row's top (``-1`` for a hole); ``incoming``: the
    top columns whose lane ends at the commit; ``first``: the bottom column of the first
    parent's lane (``-1`` for a root commit); ``merges``: (bottom column, colour) of the other
    parents' lanes; ``bottom``: the bottom column of each top lane, None when unchanged.
    """

    column: int
    color: int
    top: tuple[int, ...]
    incoming: tuple[int, ...]
    first: int
    merges: tuple[tuple[int, int], ...]
    bottom: tuple[int, ...] | None


EMPTY_STATE = LayoutState((), (), 0)


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

    def add(self, oid: str, parents: Sequence[str]) -> Row:
        lanes = self._lanes
        colors = self._colors
        top = tuple(colors)
        waiting = lanes.count(oid)
        bottom: tuple[int, ...] | None = None
        if waiting == 0:
            # A tip: no row above pointed here. Its lane opens at the right end.
            column = len(lanes)
            color = self._new_color()
            incoming: tuple[int, ...] = ()
            if self._holes:
                bottom = self._close(lambda i, target: target is not None)
            first = len(self._lanes) if parents else -1
            if parents:
                self._lanes.append(parents[0])
                self._colors.append(color)
        else:
            column = lanes.index(oid)
            color = colors[column]
            if waiting == 1 and not self._holes:
                incoming = (column,)
            else:
                incoming = tuple(i for i, target in enumerate(lanes) if target == oid)
                # Duplicates of this commit's lane end here; holes right of it close. Holes
                # to its left stay: closing them would slide a lane under the dot.
                bottom = self._close(
                    lambda i, target: i <= column or (target is not None and target != oid)
                )
            if parents:
                self._lanes[column] = parents[0]
                first = column
            else:
                self._lanes[column] = None
                self._colors[column] = _HOLE
                self._holes += 1
                first = -1
        merges: tuple[tuple[int, int], ...] = ()
        if len(parents) > 1:
            merges = self._merge_parents(parents, first)
        return Row(column, color, top, incoming, first, merges, bottom)

    def _close(self, keep: Any) -> tuple[int, ...]:
        """Drop the lanes ``keep(i, target)`` refuses; the bottom column of each top lane."""
        bottom: list[int] = []
        lanes: list[str | None] = []
        colors: list[int] = []
        for i, target in enumerate(self._lanes):
            if keep(i, target):
                bottom.append(len(lanes))
                lanes.append(target)
                colors.append(self._colors[i])
            else:
                bottom.append(-1)
        self._lanes = lanes
        self._colors = colors
        self._holes = lanes.count(None)
        return tuple(bottom)

    def _merge_parents(self, parents: Sequence[str], first: int) -> tuple[tuple[int, int], ...]:
        lanes = self._lanes
        colors = self._colors
        out: list[tuple[int, int]] = []
        seen = {parents[0]}
        for parent in parents[1:]:
            if parent in seen:
                continue
            seen.add(parent)
            at = _find_other(lanes, parent, first)
            if at < 0:
                # No lane waits for this parent yet: it gets its own, at the right end.
                at = len(lanes)
                lanes.append(parent)
                colors.append(self._new_color())
            out.append((at, colors[at]))
        return tuple(out)

    def _new_color(self) -> int:
        color = self._next_color
        self._next_color = (color + 1) % PALETTE
        return color

    def extend(self, commits: Iterable[tuple[str, Sequence[str]]]) -> list[Row]:
        add = self.add
        return [add(oid, parents) for oid, parents in commits]


def _find_other(lanes: list[str | None], target: str, column: int) -> int:
    """The first lane waiting for ``target`` other than ``column`` (the first parent's), or -1."""
    try:
        at = lanes.index(target)
    except ValueError:
        return -1
    if at != column:
        return at
    try:
        return lanes.index(target, column + 1)
    except ValueError:
        return -1


def row_graph(row: Row) -> dict[str, Any]:
    """The ``graph`` object of one commit in the API (see the module docstring)."""
    column, color, top, incoming, first, merges, bottom = row
    edges: list[dict[str, Any]] = []
    append = edges.append
    for i, lane_color in enumerate(top):
        if lane_color < 0 or i == column:
            continue
        if incoming and i in incoming:
            append({"from": i, "to": column, "kind": "branch", "color": lane_color})
        else:
            to = i if bottom is None else bottom[i]
            append({"from": i, "to": to, "kind": "line", "color": lane_color})
    if first >= 0 or incoming:
        own = first if first >= 0 else column
        append({"from": column, "to": own, "kind": "line", "color": color})
    for to, merge_color in merges:
        append({"from": column, "to": to, "kind": "merge", "color": merge_color})
    return {"column": column, "color": color, "edges": edges}


def flat_graph() -> dict[str, Any]:
    """The graph of a commit in a filtered log: no lanes (``"graph": false`` in the reply)."""
    return {"column": 0, "color": 0, "edges": []}
