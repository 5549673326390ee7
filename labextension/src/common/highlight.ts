/**
 * Split text into plain and highlighted segments.
 *
 * The server counts characters as Unicode code points (Python string indices),
 * while JavaScript strings count UTF-16 code units, so every index here is a
 * code-point index and the text is walked with `Array.from` (one entry per
 * code point). Astral characters such as emoji therefore never shift a
 * highlight by one.
 */

/**
 * A run of text that is either all matched or all plain.
 */
export interface ISegment {
  readonly text: string;
  readonly match: boolean;
}

/**
 * A half-open `[start, end)` range of code-point indices.
 */
export type Range = readonly [number, number];

/**
 * Segments of `text` with the code points at `positions` highlighted.
 *
 * Positions may be unsorted or duplicated; those outside the text are ignored.
 */
export function segmentsFromPositions(
  text: string,
  positions: readonly number[]
): ISegment[] {
  const ranges = positions.map((p): Range => [p, p + 1]);
  return segmentsFromRanges(text, ranges);
}

/**
 * Segments of `text` with the code points inside `ranges` highlighted.
 *
 * Ranges are clamped to the text, sorted and merged when they touch or
 * overlap; empty ranges are dropped.
 */
export function segmentsFromRanges(
  text: string,
  ranges: readonly Range[]
): ISegment[] {
  const chars = Array.from(text);
  const merged = normalizeRanges(ranges, chars.length);
  const segments: ISegment[] = [];
  let cursor = 0;
  for (const [start, end] of merged) {
    if (start > cursor) {
      segments.push({
        text: chars.slice(cursor, start).join(''),
        match: false
      });
    }
    segments.push({ text: chars.slice(start, end).join(''), match: true });
    cursor = end;
  }
  if (cursor < chars.length) {
    segments.push({ text: chars.slice(cursor).join(''), match: false });
  }
  return segments;
}

/**
 * Clamp, sort and merge ranges over a text of `length` code points.
 */
export function normalizeRanges(
  ranges: readonly Range[],
  length: number
): Array<[number, number]> {
  const clamped = ranges
    .map(([s, e]): [number, number] => [
      Math.max(0, Math.min(length, Math.floor(s))),
      Math.max(0, Math.min(length, Math.floor(e)))
    ])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged: Array<[number, number]> = [];
  for (const range of clamped) {
    const last = merged[merged.length - 1];
    if (last && range[0] <= last[1]) {
      last[1] = Math.max(last[1], range[1]);
    } else {
      merged.push([range[0], range[1]]);
    }
  }
  return merged;
}

/**
 * Options of {@link previewSegments}.
 */
export interface IPreviewOptions {
  /**
   * How many characters the row shows; a line whose first match would end
   * beyond that is cut before the match (with an ellipsis) so that the
   * match is visible.
   */
  readonly columns?: number;
  /**
   * Whether the text is already a window into a longer line (the server's
   * `offset` is not 0), so it starts with an implied ellipsis.
   */
  readonly clipped?: boolean;
}

/**
 * The ellipsis shown where a preview was cut.
 */
export const ELLIPSIS = '\u2026';

/**
 * Segments of one matching line, shaped for a narrow results list.
 *
 * Leading indentation is dropped, and when the first match would not fit in
 * the row the text before it is cut down to a little context.
 */
export function previewSegments(
  text: string,
  ranges: readonly Range[],
  options: IPreviewOptions = {}
): ISegment[] {
  const columns = options.columns ?? 80;
  const chars = Array.from(text);
  const merged = normalizeRanges(ranges, chars.length);
  let start = 0;
  while (start < chars.length && /\s/.test(chars[start])) {
    start++;
  }
  const [firstStart, firstEnd] = merged[0] ?? [start, start];
  start = Math.min(start, firstStart);
  let cut = options.clipped ?? false;
  const reserved = cut ? 1 : 0;
  if (firstEnd - start + reserved > columns) {
    const context = previewContext(columns, firstEnd - firstStart);
    if (firstStart - start > context) {
      start = firstStart - context;
      cut = true;
    }
  }
  const shifted = merged.map(([s, e]): Range => [s - start, e - start]);
  const segments = segmentsFromRanges(chars.slice(start).join(''), shifted);
  if (cut) {
    return [{ text: ELLIPSIS, match: false }, ...segments];
  }
  return segments;
}

/**
 * The UTF-16 index (what editors and the DOM use) of a code-point index.
 */
export function utf16Index(text: string, codePointIndex: number): number {
  let units = 0;
  let points = 0;
  for (const char of text) {
    if (points >= codePointIndex) {
      break;
    }
    units += char.length;
    points++;
  }
  return units;
}

/**
 * How much of a line to keep before its first match so that the match fits
 * in `columns` characters of a results row (see {@link previewSegments}).
 *
 * Leaves room for the match and the ellipsis, and never keeps fewer than 4
 * or more than 40 characters of context.
 */
export function previewContext(columns: number, matchLength: number): number {
  const room = Math.floor(columns) - Math.max(0, matchLength) - 2;
  return Math.max(4, Math.min(40, room));
}
