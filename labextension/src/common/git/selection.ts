/**
 * The lines a user selected in a file diff (click, shift-click), and the
 * selection payload the git API takes for staging, unstaging or discarding.
 */

/**
 * The part of a diff line the selection needs.
 */
export interface ISelectableLine {
  kind: 'context' | 'add' | 'delete';
}

/**
 * The part of a hunk the selection needs.
 */
export interface ISelectableHunk {
  index: number;
  lines: readonly ISelectableLine[];
}

/**
 * A line of the diff: a hunk's `index` and the line's position in it.
 */
export interface ILineRef {
  hunk: number;
  line: number;
}

/**
 * One entry of the API's `selection`: a whole hunk (no `lines`) or some of
 * its changed lines.
 */
export interface ISelectionEntry {
  hunk: number;
  lines?: number[];
}

const key = (ref: ILineRef): string => `${ref.hunk}:${ref.line}`;

/**
 * Whether a line can be selected: only added and deleted lines are changes.
 */
export function isSelectable(
  hunks: readonly ISelectableHunk[],
  ref: ILineRef
): boolean {
  const hunk = hunks.find(h => h.index === ref.hunk);
  const line = hunk?.lines[ref.line];
  return !!line && line.kind !== 'context';
}

/**
 * An immutable set of selected changed lines with the anchor of the last
 * plain click (where a shift-click range starts).
 */
export class LineSelection {
  private constructor(
    private readonly _keys: ReadonlySet<string>,
    readonly anchor: ILineRef | null
  ) {}

  /**
   * Nothing selected.
   */
  static readonly empty = new LineSelection(new Set(), null);

  /**
   * How many lines are selected.
   */
  get size(): number {
    return this._keys.size;
  }

  /**
   * Whether a line is selected.
   */
  has(ref: ILineRef): boolean {
    return this._keys.has(key(ref));
  }

  /**
   * Whether any line of a hunk is selected.
   */
  touches(hunk: number): boolean {
    for (const k of this._keys) {
      if (k.startsWith(`${hunk}:`)) {
        return true;
      }
    }
    return false;
  }

  /**
   * A plain click: toggle one changed line and make it the anchor.
   */
  toggle(hunks: readonly ISelectableHunk[], ref: ILineRef): LineSelection {
    if (!isSelectable(hunks, ref)) {
      return this;
    }
    const keys = new Set(this._keys);
    if (keys.has(key(ref))) {
      keys.delete(key(ref));
    } else {
      keys.add(key(ref));
    }
    return new LineSelection(keys, ref);
  }

  /**
   * A shift-click: select every changed line from the anchor to `ref`
   * (across hunks, in diff order), keeping what was selected before. Without
   * an anchor it is a plain click.
   */
  extend(hunks: readonly ISelectableHunk[], ref: ILineRef): LineSelection {
    if (!this.anchor || !isSelectable(hunks, ref)) {
      return this.toggle(hunks, ref);
    }
    const order = changedLines(hunks);
    const from = order.findIndex(r => key(r) === key(this.anchor!));
    const to = order.findIndex(r => key(r) === key(ref));
    if (from < 0 || to < 0) {
      return this.toggle(hunks, ref);
    }
    const keys = new Set(this._keys);
    const [start, end] = from <= to ? [from, to] : [to, from];
    for (let i = start; i <= end; i++) {
      keys.add(key(order[i]));
    }
    return new LineSelection(keys, this.anchor);
  }

  /**
   * Select every changed line of one hunk (or deselect it when all are).
   */
  toggleHunk(hunks: readonly ISelectableHunk[], index: number): LineSelection {
    const refs = changedLines(hunks).filter(r => r.hunk === index);
    const keys = new Set(this._keys);
    const all = refs.length > 0 && refs.every(r => keys.has(key(r)));
    for (const ref of refs) {
      if (all) {
        keys.delete(key(ref));
      } else {
        keys.add(key(ref));
      }
    }
    return new LineSelection(keys, refs[0] ?? this.anchor);
  }

  /**
   * Keep only lines that still exist and are changes (after the diff was
   * reloaded with the same fingerprint this is a no-op).
   */
  restrict(hunks: readonly ISelectableHunk[]): LineSelection {
    const keys = new Set<string>();
    for (const ref of changedLines(hunks)) {
      if (this._keys.has(key(ref))) {
        keys.add(key(ref));
      }
    }
    const anchor =
      this.anchor && isSelectable(hunks, this.anchor) ? this.anchor : null;
    return new LineSelection(keys, anchor);
  }

  /**
   * The selected lines in diff order.
   */
  refs(): ILineRef[] {
    return [...this._keys]
      .map(k => {
        const [hunk, line] = k.split(':').map(Number);
        return { hunk, line };
      })
      .sort((a, b) => a.hunk - b.hunk || a.line - b.line);
  }

  /**
   * The API's `selection`: one entry per touched hunk with its line indices
   * in order. A hunk whose changed lines are all selected is sent whole
   * (`lines` left out) when `wholeHunks` is set.
   */
  toPayload(
    hunks: readonly ISelectableHunk[],
    wholeHunks = false
  ): ISelectionEntry[] {
    const byHunk = new Map<number, number[]>();
    for (const ref of this.refs()) {
      if (!isSelectable(hunks, ref)) {
        continue;
      }
      const lines = byHunk.get(ref.hunk) ?? [];
      lines.push(ref.line);
      byHunk.set(ref.hunk, lines);
    }
    const entries: ISelectionEntry[] = [];
    for (const [hunk, lines] of byHunk) {
      const total = changedLines(hunks).filter(r => r.hunk === hunk).length;
      entries.push(
        wholeHunks && lines.length === total ? { hunk } : { hunk, lines }
      );
    }
    return entries;
  }
}

/**
 * Every changed line of the diff, in order.
 */
export function changedLines(hunks: readonly ISelectableHunk[]): ILineRef[] {
  const refs: ILineRef[] = [];
  for (const hunk of hunks) {
    hunk.lines.forEach((line, index) => {
      if (line.kind !== 'context') {
        refs.push({ hunk: hunk.index, line: index });
      }
    });
  }
  return refs;
}

/**
 * How many added and deleted lines a hunk has.
 */
export function hunkStats(hunk: ISelectableHunk): {
  additions: number;
  deletions: number;
} {
  let additions = 0;
  let deletions = 0;
  for (const line of hunk.lines) {
    if (line.kind === 'add') {
      additions++;
    } else if (line.kind === 'delete') {
      deletions++;
    }
  }
  return { additions, deletions };
}
