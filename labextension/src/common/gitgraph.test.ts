import { describe, expect, it } from 'vitest';

import {
  connector,
  graphLanes,
  type IGraphRow,
  laneX,
  rowGeometry,
  rowLanes
} from './gitgraph';

const metrics = { laneWidth: 12, rowHeight: 24, dotRadius: 4 };

const row = (
  column: number,
  edges: IGraphRow['edges'],
  color = column
): IGraphRow => ({ column, color, edges });

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

describe('rowGeometry', () => {
  it('draws a commit in the middle of a lane with both halves', () => {
    const above = row(0, [{ from: 0, to: 0, kind: 'line', color: 0 }]);
    const current = row(0, [{ from: 0, to: 0, kind: 'line', color: 0 }]);
    const geometry = rowGeometry(current, { above, parents: 1 }, metrics);
    expect(geometry.dot).toEqual({ cx: 6, cy: 12, r: 4, color: 0 });
    expect(geometry.segments.map(s => s.d)).toEqual([
      'M6 0L6 12',
      'M6 12L6 24'
    ]);
    expect(geometry.lanes).toBe(1);
  });

  it('leaves out the half above a branch tip and below a root commit', () => {
    const tip = rowGeometry(
      row(0, [{ from: 0, to: 0, kind: 'line', color: 0 }]),
      { above: null, parents: 1 },
      metrics
    );
    expect(tip.segments.map(s => s.d)).toEqual(['M6 12L6 24']);

    const root = rowGeometry(
      row(0, [{ from: 0, to: 0, kind: 'line', color: 0 }]),
      {
        above: row(0, [{ from: 0, to: 0, kind: 'line', color: 0 }]),
        parents: 0
      },
      metrics
    );
    expect(root.segments.map(s => s.d)).toEqual(['M6 0L6 12']);
  });

  it('starts a merge edge at the dot and passes other lanes through', () => {
    const merge = row(0, [
      { from: 0, to: 0, kind: 'line', color: 0 },
      { from: 0, to: 1, kind: 'merge', color: 1 },
      { from: 2, to: 2, kind: 'line', color: 2 }
    ]);
    const geometry = rowGeometry(
      merge,
      { above: undefined, parents: 2 },
      metrics
    );
    expect(geometry.segments).toEqual([
      { d: 'M6 0L6 12', color: 0, kind: 'line' },
      { d: 'M6 12L6 24', color: 0, kind: 'line' },
      { d: 'M6 12C6 18 18 18 18 24', color: 1, kind: 'merge' },
      { d: 'M30 0L30 24', color: 2, kind: 'line' }
    ]);
    expect(geometry.lanes).toBe(3);
  });

  it('ends a branch edge at the dot where the branch forked', () => {
    const fork = row(0, [
      { from: 0, to: 0, kind: 'line', color: 0 },
      { from: 1, to: 0, kind: 'branch', color: 1 }
    ]);
    const above = row(1, [
      { from: 0, to: 0, kind: 'line', color: 0 },
      { from: 1, to: 1, kind: 'line', color: 1 }
    ]);
    const geometry = rowGeometry(fork, { above, parents: 1 }, metrics);
    expect(geometry.segments).toContainEqual({
      d: 'M18 0C18 6 6 6 6 12',
      color: 1,
      kind: 'branch'
    });
  });

  it('shifts a passing lane between columns with a curve', () => {
    const geometry = rowGeometry(
      row(0, [
        { from: 0, to: 0, kind: 'line', color: 0 },
        { from: 2, to: 1, kind: 'line', color: 3 }
      ]),
      { above: undefined, parents: 1 },
      metrics
    );
    expect(geometry.segments[2]).toEqual({
      d: 'M30 0C30 12 18 12 18 24',
      color: 3,
      kind: 'line'
    });
  });

  it('draws the lanes the edges leave implicit', () => {
    const above = row(0, [{ from: 0, to: 0, kind: 'line', color: 5 }]);
    const geometry = rowGeometry(row(0, [], 5), { above, parents: 1 }, metrics);
    expect(geometry.segments.map(s => s.d)).toEqual([
      'M6 0L6 12',
      'M6 12L6 24'
    ]);
  });
});

describe('lanes', () => {
  it('counts the widest row and caps it', () => {
    const rows = [
      row(0, []),
      row(1, [{ from: 3, to: 2, kind: 'line', color: 0 }]),
      row(0, [])
    ];
    expect(rowLanes(rows[1])).toBe(4);
    expect(graphLanes(rows, 10)).toBe(4);
    expect(graphLanes(rows, 3)).toBe(3);
    expect(graphLanes([], 10)).toBe(1);
  });
});
