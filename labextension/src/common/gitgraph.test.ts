import { describe, expect, it } from 'vitest';

import {
  bottomLanes,
  compactRowLanes,
  type CompactRow,
  connector,
  decodePage,
  decodeRow,
  graphLanes,
  HOLE,
  type IGraphRow,
  laneX,
  pageTops,
  rowGeometry,
  rowLanes,
  rowParts
} from './gitgraph';

const metrics = { laneWidth: 12, rowHeight: 24, dotRadius: 4 };

// The rows the server lays out for this history (tests/services/git/test_graph.py):
//   m        merge of a (main) and f (feature)
//   | f
//   a |      f's lane joins a's below a's dot (both wait for b)
//   |/
//   b        the root
const FORK: CompactRow[] = [
  [0, 0, 0, 1, 1, 0, 0, 1],
  [1, 1, 1],
  [0, 0, 0, 0, 1, 1],
  [0, 0, -1, 0, 1, 0]
];

describe('rowParts', () => {
  it('splits a row, the empty parts left out', () => {
    expect(rowParts([2, 5, 2])).toEqual({
      column: 2,
      color: 5,
      first: 2,
      merges: [],
      removed: [],
      opened: []
    });
    expect(rowParts([0, 0, 0, 2, 1, 3, 2, 4, 6, 7, 9])).toEqual({
      column: 0,
      color: 0,
      first: 0,
      merges: [1, 3],
      removed: [4, 6],
      opened: [7, 9]
    });
    expect(rowParts([1, 1, 0, 0, 0, 3]).opened).toEqual([3]);
  });
});

describe('decoding', () => {
  it('decodes a merge, a fork that joins and a root', () => {
    const rows = decodePage([], FORK);
    expect(rows[0]).toEqual({
      column: 0,
      color: 0,
      above: false,
      edges: [
        { from: 0, to: 0, kind: 'line', color: 0 },
        { from: 0, to: 1, kind: 'merge', color: 1 }
      ]
    });
    expect(rows[1]).toEqual({
      column: 1,
      color: 1,
      above: true,
      edges: [
        { from: 0, to: 0, kind: 'line', color: 0 },
        { from: 1, to: 1, kind: 'line', color: 1 }
      ]
    });
    expect(rows[2].edges).toEqual([
      { from: 1, to: 0, kind: 'join', color: 1 },
      { from: 0, to: 0, kind: 'line', color: 0 }
    ]);
    expect(rows[3]).toEqual({ column: 0, color: 0, above: true, edges: [] });
  });

  it('keeps the lanes from row to row and shares unchanged ones', () => {
    const tops = pageTops([], FORK);
    expect(tops).toEqual([[], [0, 1], [0, 1], [0]]);
    expect(tops[2]).toBe(tops[1]);
    const straight: Lanes = [3, HOLE, 4];
    expect(bottomLanes(straight, [2, 4, 2])).toBe(straight);
  });

  it('leaves a hole where a branch ended left of other lanes', () => {
    // A root in column 0 while column 1 passes by: the lane does not slide
    // under the dot; the next tip takes the hole.
    const top = [2, 5];
    expect(bottomLanes(top, [0, 2, -1])).toEqual([HOLE, 5]);
    const root = decodeRow(top, [0, 2, -1]);
    expect(root.edges).toEqual([{ from: 1, to: 1, kind: 'line', color: 5 }]);
    const tip = decodeRow([HOLE, 5], [0, 6, 0]);
    expect(tip.above).toBe(false);
    expect(bottomLanes([HOLE, 5], [0, 6, 0])).toEqual([6, 5]);
  });

  it('closes removed lanes up and opens new ones at the right', () => {
    // Column 2 is a hole that closes, column 3 moves to 2; the merge opens a
    // lane of colour 9 at the right end.
    const top = [1, 2, HOLE, 4];
    const row = [1, 2, 1, 1, 3, 1, 2, 9];
    expect(bottomLanes(top, row)).toEqual([1, 2, 4, 9]);
    expect(decodeRow(top, row).edges).toEqual([
      { from: 0, to: 0, kind: 'line', color: 1 },
      { from: 3, to: 2, kind: 'line', color: 4 },
      { from: 1, to: 1, kind: 'line', color: 2 },
      { from: 1, to: 3, kind: 'merge', color: 9 }
    ]);
  });

  it('decodes a page from the lanes above it as the whole does', () => {
    const whole = decodePage([], FORK);
    const tops = pageTops([], FORK);
    expect(decodePage(tops[2], FORK.slice(2))).toEqual(whole.slice(2));
  });

  it('counts the lanes of a compact row as of its edges', () => {
    const tops = pageTops([], FORK);
    FORK.forEach((row, i) => {
      expect(compactRowLanes(tops[i], row)).toBe(
        rowLanes(decodeRow(tops[i], row))
      );
    });
    expect(compactRowLanes([1, HOLE, HOLE], [0, 1, 0])).toBe(1);
  });
});

type Lanes = readonly number[];

describe('laneX and connector', () => {
  it('centres lanes', () => {
    expect(laneX(0, metrics)).toBe(6);
    expect(laneX(2, metrics)).toBe(30);
  });

  it('draws a straight line on one lane and an S between lanes', () => {
    expect(connector(6, 0, 6, 24)).toBe('M6 0L6 24');
    expect(connector(6, 12, 18, 24)).toBe('M6 12C6 18 18 18 18 24');
  });
});

const row = (
  column: number,
  edges: IGraphRow['edges'],
  above = true,
  color = column
): IGraphRow => ({ column, color, above, edges });

describe('rowGeometry', () => {
  it('draws a commit in the middle of a lane with both halves', () => {
    const current = row(0, [{ from: 0, to: 0, kind: 'line', color: 0 }]);
    const geometry = rowGeometry(current, metrics);
    expect(geometry.dot).toEqual({ cx: 6, cy: 12, r: 4, color: 0 });
    expect(geometry.segments.map(s => s.d)).toEqual([
      'M6 0L6 12',
      'M6 12L6 24'
    ]);
    expect(geometry.lanes).toBe(1);
  });

  it('leaves out the half above a branch tip and below a root commit', () => {
    const tip = rowGeometry(
      row(0, [{ from: 0, to: 0, kind: 'line', color: 0 }], false),
      metrics
    );
    expect(tip.segments.map(s => s.d)).toEqual(['M6 12L6 24']);
    const root = rowGeometry(row(0, []), metrics);
    expect(root.segments.map(s => s.d)).toEqual(['M6 0L6 12']);
  });

  it('starts a merge edge at the dot and passes other lanes through', () => {
    const merge = row(0, [
      { from: 2, to: 2, kind: 'line', color: 2 },
      { from: 0, to: 0, kind: 'line', color: 0 },
      { from: 0, to: 1, kind: 'merge', color: 1 }
    ]);
    expect(rowGeometry(merge, metrics).segments).toEqual([
      { d: 'M6 0L6 12', color: 0, kind: 'line' },
      { d: 'M30 0L30 24', color: 2, kind: 'line' },
      { d: 'M6 12L6 24', color: 0, kind: 'line' },
      { d: 'M6 12C6 18 18 18 18 24', color: 1, kind: 'merge' }
    ]);
    expect(rowGeometry(merge, metrics).lanes).toBe(3);
  });

  it('draws a joining lane from the top into the lane below the dot', () => {
    const rows = decodePage([], FORK);
    const geometry = rowGeometry(rows[2], metrics);
    expect(geometry.segments).toContainEqual({
      d: 'M18 0C18 12 6 12 6 24',
      color: 1,
      kind: 'join'
    });
    // Nothing arrives in the dot but its own lane.
    expect(
      geometry.segments.filter(s => s.d.endsWith(' 12')).map(s => s.d)
    ).toEqual(['M6 0L6 12']);
  });

  it('draws a tip that leaves its dot for a lane to its left', () => {
    // A pull request's tip whose parent main already waits for.
    const [above, tip] = decodePage(
      [],
      [
        [0, 0, 0, 0, 0, 0],
        [1, 1, 0]
      ]
    );
    expect(above.edges).toEqual([{ from: 0, to: 0, kind: 'line', color: 0 }]);
    expect(rowGeometry(tip, metrics).segments).toEqual([
      { d: 'M6 0L6 24', color: 0, kind: 'line' },
      { d: 'M18 12C18 18 6 18 6 24', color: 1, kind: 'line' }
    ]);
  });
});

describe('lanes', () => {
  it('counts the widest row and caps it', () => {
    expect(graphLanes([1, 4, 1], 10)).toBe(4);
    expect(graphLanes([1, 4, 1], 3)).toBe(3);
    expect(graphLanes([], 10)).toBe(1);
  });
});
