/**
 * The commit graph as the server lays it out: the compact rows it sends
 * (a few numbers per commit, however many lanes run beside it), decoded into
 * the segments of each row, where the commit's dot sits and how wide the
 * row is. The view turns the geometry into SVG.
 *
 * The server's reference decoder is `decode_row` in
 * terax_jupyter/services/git/graph.py; a test runs this one against it.
 */

/**
 * A row as the server sends it:
 * `[column, color, first, m, ...merges(m), r, ...removed(r), ...opened]`,
 * the parts after `first` left out when empty.
 */
export type CompactRow = readonly number[];

/**
 * The colour of each lane at the top (or bottom) of a row; `HOLE` for a
 * column no lane runs in.
 */
export type Lanes = readonly number[];

/** The colour of a hole. */
export const HOLE = -1;

/**
 * A segment of a row: from the row's top at column `from` to its bottom at
 * column `to`. `line`: a lane passing by, or the commit's own lane below the
 * dot (from its column); `merge`: from the dot to another parent's lane;
 * `join`: a lane that ends in the first parent's lane below the dot.
 */
export interface IGraphEdge {
  from: number;
  to: number;
  kind: 'line' | 'merge' | 'join';
  color: number;
}

/**
 * One decoded row.
 */
export interface IGraphRow {
  column: number;
  color: number;
  /** A lane comes down into the dot (false for a branch tip). */
  above: boolean;
  edges: IGraphEdge[];
}

/**
 * The parts of a compact row.
 */
export interface IRowParts {
  column: number;
  color: number;
  first: number;
  merges: number[];
  removed: number[];
  opened: number[];
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
 * Split a compact row into its parts.
 */
export function rowParts(row: CompactRow): IRowParts {
  let index = 3;
  const merges = row.length > index ? row[index] : 0;
  const mergeList = row.slice(index + 1, index + 1 + merges);
  index += 1 + merges;
  const removed = row.length > index ? row[index] : 0;
  return {
    column: row[0],
    color: row[1],
    first: row[2],
    merges: mergeList,
    removed: row.slice(index + 1, index + 1 + removed),
    opened: row.slice(index + 1 + removed)
  };
}

/**
 * The lanes at a row's bottom (the next row's top). The lanes that stay keep
 * their order, the removed ones close up, the opened ones follow; the
 * commit's own column goes on as its first parent's lane when `first` is its
 * bottom column, else as a hole. A row that changes nothing gives back `top`
 * itself, so that the rows of a long straight stretch share one array.
 */
export function bottomLanes(top: Lanes, row: CompactRow): Lanes {
  const [column, color, first] = row;
  if (
    row.length <= 3 &&
    first === column &&
    column < top.length &&
    top[column] === color
  ) {
    return top;
  }
  const parts = rowParts(row);
  const gone = new Set(parts.removed);
  const bottom: number[] = [];
  for (let i = 0; i < top.length; i++) {
    if (gone.has(i)) {
      continue;
    }
    if (i === column) {
      bottom.push(first === bottom.length ? color : HOLE);
    } else {
      bottom.push(top[i]);
    }
  }
  bottom.push(...parts.opened);
  return bottom;
}

/**
 * The lanes at the top of each row of a page, from those above its first.
 */
export function pageTops(lanes: Lanes, rows: Iterable<CompactRow>): Lanes[] {
  const tops: Lanes[] = [];
  let top = lanes;
  for (const row of rows) {
    tops.push(top);
    top = bottomLanes(top, row);
  }
  return tops;
}

/**
 * The edges of a row, from the lanes at its top.
 */
export function decodeRow(top: Lanes, row: CompactRow): IGraphRow {
  const parts = rowParts(row);
  const { column, color, first } = parts;
  const gone = new Set(parts.removed);
  const bottom = bottomLanes(top, row);
  const edges: IGraphEdge[] = [];
  let below = 0; // the bottom column of the next lane that stays
  for (let i = 0; i < top.length; i++) {
    const lane = top[i];
    const stays = !gone.has(i);
    if (lane !== HOLE && i !== column) {
      edges.push(
        stays
          ? { from: i, to: below, kind: 'line', color: lane }
          : { from: i, to: first, kind: 'join', color: lane }
      );
    }
    if (stays) {
      below++;
    }
  }
  if (first >= 0) {
    edges.push({ from: column, to: first, kind: 'line', color });
  }
  for (const at of parts.merges) {
    edges.push({ from: column, to: at, kind: 'merge', color: bottom[at] });
  }
  return {
    column,
    color,
    above: column < top.length && top[column] !== HOLE,
    edges
  };
}

/**
 * Every row of a page, decoded.
 */
export function decodePage(
  lanes: Lanes,
  rows: Iterable<CompactRow>
): IGraphRow[] {
  const decoded: IGraphRow[] = [];
  let top = lanes;
  for (const row of rows) {
    decoded.push(decodeRow(top, row));
    top = bottomLanes(top, row);
  }
  return decoded;
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

/**
 * Lanes a compact row touches, from the lanes at its top (without building
 * its edges): its column, the lanes above and below it.
 */
export function compactRowLanes(top: Lanes, row: CompactRow): number {
  let max = row[0];
  for (let i = top.length - 1; i > max; i--) {
    if (top[i] !== HOLE) {
      max = i;
      break;
    }
  }
  const bottom = bottomLanes(top, row);
  for (let i = bottom.length - 1; i > max; i--) {
    if (bottom[i] !== HOLE) {
      max = i;
      break;
    }
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
 * The commit's own lane is cut at the dot: the half above is drawn when a
 * lane comes down into it (not for a branch tip), the half below leaves the
 * dot for the first parent's lane (none for a root commit). Merge edges
 * leave the dot too; every other edge runs from the row's top to its bottom.
 */
export function rowGeometry(
  row: IGraphRow,
  metrics: IGraphMetrics
): IRowGeometry {
  const top = 0;
  const bottom = metrics.rowHeight;
  const middle = metrics.rowHeight / 2;
  const cx = laneX(row.column, metrics);
  const segments: IGraphSegment[] = [];
  if (row.above) {
    segments.push({
      d: connector(cx, top, cx, middle),
      color: row.color,
      kind: 'line'
    });
  }
  for (const edge of row.edges) {
    const x2 = laneX(edge.to, metrics);
    const fromDot = edge.from === row.column && edge.kind !== 'join';
    const d = fromDot
      ? connector(cx, middle, x2, bottom)
      : connector(laneX(edge.from, metrics), top, x2, bottom);
    segments.push({ d, color: edge.color, kind: edge.kind });
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
 * The number of lanes to reserve for a set of rows: the widest, capped so
 * that a history with hundreds of parallel lanes still leaves room for the
 * text (the rest is clipped).
 */
export function graphLanes(
  widths: Iterable<number>,
  cap: number,
  minimum = 1
): number {
  let lanes = minimum;
  for (const width of widths) {
    lanes = Math.max(lanes, width);
    if (lanes >= cap) {
      return cap;
    }
  }
  return lanes;
}
