/**
 * Geometry of one row of the commit graph, from the lanes the server laid
 * out: which segments to draw, where the commit's dot sits and how wide the
 * row's graph is. The view turns the result into SVG.
 */

/**
 * An edge of a row as the server sends it: from the row's top at column
 * `from` to its bottom at column `to`.
 */
export interface IGraphEdge {
  from: number;
  to: number;
  kind: 'line' | 'merge' | 'branch';
  color: number;
}

/**
 * The graph part of a history row.
 */
export interface IGraphRow {
  column: number;
  color: number;
  edges: readonly IGraphEdge[];
}

/**
 * Sizes in pixels.
 */
export interface IGraphMetrics {
  laneWidth: number;
  rowHeight: number;
  dotRadius: number;
}

/**
 * A segment to draw: an SVG path in row coordinates.
 */
export interface IGraphSegment {
  d: string;
  color: number;
  kind: IGraphEdge['kind'];
}

/**
 * Everything the view draws for one row.
 */
export interface IRowGeometry {
  segments: IGraphSegment[];
  dot: { cx: number; cy: number; r: number; color: number };
  /** Lanes this row touches (the highest column + 1). */
  lanes: number;
}

/**
 * Neighbourhood facts the edges alone do not carry.
 */
export interface IRowContext {
  /**
   * The row above, `null` for the first row of the history, `undefined`
   * when not known (treated as continuing).
   */
  above?: IGraphRow | null;
  /** How many parents the commit has (0 for a root commit). */
  parents: number;
}

/**
 * The x coordinate of a lane's centre.
 */
export function laneX(column: number, metrics: IGraphMetrics): number {
  return column * metrics.laneWidth + metrics.laneWidth / 2;
}

/**
 * Lanes a row touches: its column and every edge end.
 */
export function rowLanes(row: IGraphRow): number {
  let max = row.column;
  for (const edge of row.edges) {
    max = Math.max(max, edge.from, edge.to);
  }
  return max + 1;
}

const round = (value: number): number => Math.round(value * 100) / 100;

function point(x: number, y: number): string {
  return `${round(x)} ${round(y)}`;
}

/**
 * A path from (x1, y1) to (x2, y2): straight when the lane does not move,
 * else a smooth S whose ends leave and arrive vertically.
 */
export function connector(
  x1: number,
  y1: number,
  x2: number,
  y2: number
): string {
  if (x1 === x2) {
    return `M${point(x1, y1)}L${point(x2, y2)}`;
  }
  const mid = (y1 + y2) / 2;
  return `M${point(x1, y1)}C${point(x1, mid)} ${point(x2, mid)} ${point(x2, y2)}`;
}

/**
 * The segments and the dot of one row.
 *
 * Edges on the commit's own lane are cut at the dot: the half above is drawn
 * only when the row above continues into this lane (not for a branch tip),
 * the half below only when the commit has a parent (not for a root commit).
 * An edge leaving the commit's column starts at the dot (towards a second
 * parent's lane); one arriving at it ends at the dot (a branch that forked
 * here). Other edges pass through from top to bottom.
 */
export function rowGeometry(
  row: IGraphRow,
  context: IRowContext,
  metrics: IGraphMetrics
): IRowGeometry {
  const top = 0;
  const bottom = metrics.rowHeight;
  const middle = metrics.rowHeight / 2;
  const cx = laneX(row.column, metrics);
  const above = context.above;
  const hasAbove =
    above === undefined ||
    (above !== null && above.edges.some(edge => edge.to === row.column));
  const hasBelow = context.parents > 0;
  const segments: IGraphSegment[] = [];
  let drewAbove = false;
  let drewBelow = false;

  for (const edge of row.edges) {
    const x1 = laneX(edge.from, metrics);
    const x2 = laneX(edge.to, metrics);
    const fromDot = edge.from === row.column;
    const toDot = edge.to === row.column;
    const push = (d: string, kind: IGraphEdge['kind'] = edge.kind): void => {
      segments.push({ d, color: edge.color, kind });
    };
    const upper = (): void => {
      if (hasAbove && !drewAbove) {
        push(connector(cx, top, cx, middle), 'line');
        drewAbove = true;
      }
    };
    const lower = (): void => {
      if (hasBelow && !drewBelow) {
        push(connector(cx, middle, cx, bottom), 'line');
        drewBelow = true;
      }
    };
    if (fromDot && toDot) {
      // The commit's own lane: cut at the dot.
      upper();
      lower();
    } else if (fromDot) {
      // Leaves the dot towards another lane (a second parent, or the lane
      // moving over).
      if (edge.kind === 'line') {
        upper();
      }
      push(connector(cx, middle, x2, bottom));
    } else if (toDot) {
      // Arrives at the dot from another lane (a branch that forked here).
      push(connector(x1, top, cx, middle));
      if (edge.kind === 'line') {
        lower();
      }
    } else {
      push(connector(x1, top, x2, bottom));
    }
  }
  // Lanes the edges leave implicit: something arrives from above on the
  // commit's column, or the commit has a parent but no edge leaves its dot.
  if (!drewAbove && above && hasAbove) {
    segments.push({
      d: connector(cx, top, cx, middle),
      color: row.color,
      kind: 'line'
    });
  }
  if (!drewBelow && hasBelow && !row.edges.some(e => e.from === row.column)) {
    segments.push({
      d: connector(cx, middle, cx, bottom),
      color: row.color,
      kind: 'line'
    });
  }

  return {
    segments,
    dot: {
      cx: round(cx),
      cy: round(middle),
      r: metrics.dotRadius,
      color: row.color
    },
    lanes: rowLanes(row)
  };
}

/**
 * The number of lanes to reserve for a set of rows: the widest row, capped
 * so that a history with hundreds of parallel lanes still leaves room for
 * the text (the rest is clipped).
 */
export function graphLanes(
  rows: Iterable<IGraphRow>,
  cap: number,
  minimum = 1
): number {
  let lanes = minimum;
  for (const row of rows) {
    lanes = Math.max(lanes, rowLanes(row));
    if (lanes >= cap) {
      return cap;
    }
  }
  return lanes;
}
