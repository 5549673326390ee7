/**
 * The hunks of an edit the agent proposes (the server's `IAiHunk`, numbered
 * unified-diff hunks of one file): applying a chosen subset to a text, mapping
 * a range of changed lines to its hunk, and the decision a selection means.
 *
 * Lines follow the server (`tools/hunks.py`): a file splits at `\n` only
 * (`\r\n` keeps its `\r` in the line); each hunk line is `' '`, `'-'` or `'+'`
 * and the line without its `\n`, followed by {@link NO_NEWLINE} when that
 * line is the file's last and has no newline.
 */

/**
 * The marker after a line without a final newline.
 */
export const NO_NEWLINE = '\\ No newline at end of file';

/**
 * One hunk, as the server describes it (structurally the API's `IAiHunk`).
 */
export interface IHunk {
  index: number;
  old_start: number;
  old_lines: number;
  new_start: number;
  new_lines: number;
  lines: readonly string[];
}

/**
 * A hunk's lines do not fit the text they are applied to (the file changed
 * since the proposal), or the hunk itself is malformed.
 */
export class HunkError extends Error {
  constructor(
    message: string,
    /** The hunk's `index`. */
    readonly hunk: number,
    /** 1-based line of the text where it went wrong (0 when unknown). */
    readonly line = 0
  ) {
    super(message);
    this.name = 'HunkError';
  }
}

/**
 * Lines with their endings, split at `\n` only; the last may lack one.
 */
export function splitLines(text: string): string[] {
  const parts = text.split('\n');
  const lines = parts.slice(0, -1).map(part => part + '\n');
  const last = parts[parts.length - 1];
  if (last) {
    lines.push(last);
  }
  return lines;
}

interface IEntry {
  kind: ' ' | '-' | '+';
  /** The line with its ending. */
  text: string;
}

function entries(hunk: IHunk): IEntry[] {
  const result: IEntry[] = [];
  for (const line of hunk.lines) {
    if (line === NO_NEWLINE) {
      const previous = result[result.length - 1];
      if (!previous || !previous.text.endsWith('\n')) {
        throw new HunkError(
          `Hunk ${hunk.index} has a stray "no newline" marker.`,
          hunk.index
        );
      }
      previous.text = previous.text.slice(0, -1);
      continue;
    }
    const kind = line[0];
    if (kind !== ' ' && kind !== '-' && kind !== '+') {
      throw new HunkError(
        `Hunk ${hunk.index} has a line that is not context, removed or added.`,
        hunk.index
      );
    }
    result.push({ kind, text: line.slice(1) + '\n' });
  }
  const oldCount = result.filter(e => e.kind !== '+').length;
  const newCount = result.filter(e => e.kind !== '-').length;
  if (oldCount !== hunk.old_lines || newCount !== hunk.new_lines) {
    throw new HunkError(
      `Hunk ${hunk.index} does not have the lines its header counts.`,
      hunk.index
    );
  }
  return result;
}

/**
 * The 0-based index of a hunk's first old line (an empty range names the
 * line before it, as in unified diffs).
 */
function oldIndex(hunk: IHunk): number {
  return hunk.old_lines ? hunk.old_start - 1 : hunk.old_start;
}

function sorted(hunks: readonly IHunk[]): IHunk[] {
  return [...hunks].sort((a, b) => oldIndex(a) - oldIndex(b));
}

/**
 * Rewrite `text`, in which exactly the hunks in `present` are applied, so
 * that exactly the hunks in `wanted` are (sets of hunk `index`es).
 *
 * `switchHunks(current, hunks, [], all)` is the proposed file,
 * `switchHunks(current, hunks, [], chosen)` what approving `chosen` writes,
 * and `switchHunks(written, hunks, chosen, [])` the file before it was.
 * Every line a hunk expects is checked: a text that does not fit throws a
 * {@link HunkError} rather than guessing.
 */
export function switchHunks(
  text: string,
  hunks: readonly IHunk[],
  present: Iterable<number>,
  wanted: Iterable<number>
): string {
  const have = new Set(present);
  const want = new Set(wanted);
  const lines = splitLines(text);
  const out: string[] = [];
  let position = 0;
  // Line numbers are those of the original file; each applied hunk before
  // this one moved the rest of the text by its change in length.
  let shift = 0;
  for (const hunk of sorted(hunks)) {
    const body = entries(hunk);
    const start = oldIndex(hunk) + shift;
    if (start < position || start > lines.length) {
      throw new HunkError(
        `Hunk ${hunk.index} starts outside the text or overlaps the one before.`,
        hunk.index,
        start + 1
      );
    }
    out.push(...lines.slice(position, start));
    position = start;
    const applied = have.has(hunk.index);
    for (const entry of body) {
      const inText = entry.kind === ' ' || (entry.kind === '-') !== applied;
      const inResult =
        entry.kind === ' ' || (entry.kind === '+') === want.has(hunk.index);
      if (inText) {
        if (lines[position] !== entry.text) {
          throw new HunkError(
            `Line ${position + 1} is not what hunk ${hunk.index} expects.`,
            hunk.index,
            position + 1
          );
        }
        position += 1;
      }
      if (inResult) {
        out.push(entry.text);
      }
    }
    if (applied) {
      shift += hunk.new_lines - hunk.old_lines;
    }
  }
  out.push(...lines.slice(position));
  return out.join('');
}

/**
 * The proposed text: `current` with every hunk applied.
 */
export function applyAll(current: string, hunks: readonly IHunk[]): string {
  return switchHunks(
    current,
    hunks,
    [],
    hunks.map(h => h.index)
  );
}

/**
 * The index of the hunk a changed range of old lines belongs to: the one
 * whose old range holds it (most overlap), else the nearest; -1 without
 * hunks.
 *
 * `first`/`last` are 1-based and inclusive; `last < first` is an insertion
 * before line `first`.
 */
export function hunkForLines(
  hunks: readonly IHunk[],
  first: number,
  last: number
): number {
  let best = -1;
  let bestOverlap = -1;
  let bestDistance = Infinity;
  for (const hunk of hunks) {
    // The old lines the hunk covers; an empty range sits after old_start.
    const start = hunk.old_lines ? hunk.old_start : hunk.old_start + 1;
    const end = start + hunk.old_lines - 1;
    let overlap = -1;
    let distance = 0;
    if (last < first) {
      // An insertion point, between lines first - 1 and first.
      if (first >= start && first <= end + 1) {
        overlap = 0;
      } else {
        distance = first < start ? start - first : first - end - 1;
      }
    } else {
      const shared = Math.min(last, end) - Math.max(first, start) + 1;
      if (shared > 0) {
        overlap = shared;
      } else {
        distance = last < start ? start - last : first - end;
      }
    }
    if (
      overlap > bestOverlap ||
      (overlap === bestOverlap && distance < bestDistance)
    ) {
      best = hunk.index;
      bestOverlap = overlap;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * The old lines a hunk changes, without its context: 1-based and inclusive;
 * `last < first` when it only adds lines (inserted before line `first`).
 */
export function changedLines(hunk: IHunk): { first: number; last: number } {
  let line = hunk.old_lines ? hunk.old_start : hunk.old_start + 1;
  let first = 0;
  let last = 0;
  let insertion = 0;
  for (const entry of hunk.lines) {
    if (entry === NO_NEWLINE) {
      continue;
    }
    if (entry[0] === '-') {
      first = first || line;
      last = line;
    } else if (entry[0] === '+') {
      insertion = insertion || line;
    }
    if (entry[0] !== '+') {
      line += 1;
    }
  }
  return first ? { first, last } : { first: insertion, last: insertion - 1 };
}

/**
 * Lines added and removed by a hunk.
 */
export function hunkCounts(hunk: IHunk): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of hunk.lines) {
    if (line === NO_NEWLINE) {
      continue;
    }
    if (line[0] === '+') {
      added += 1;
    } else if (line[0] === '-') {
      removed += 1;
    }
  }
  return { added, removed };
}

/**
 * The answer to an approval for the accepted hunks of `total`: all of them
 * approve the change as proposed, none deny it, some approve only those.
 */
export type HunkDecision =
  | { decision: 'approve' }
  | { decision: 'approve'; hunks: number[] }
  | { decision: 'deny' };

/**
 * The decision a selection of hunks means.
 */
export function decisionFor(
  total: number,
  accepted: Iterable<number>
): HunkDecision {
  const chosen = [...new Set(accepted)]
    .filter(i => Number.isInteger(i) && i >= 0 && i < total)
    .sort((a, b) => a - b);
  if (total === 0 || chosen.length === total) {
    return { decision: 'approve' };
  }
  if (chosen.length === 0) {
    return { decision: 'deny' };
  }
  return { decision: 'approve', hunks: chosen };
}
