import { describe, expect, it } from 'vitest';

import {
  changedLines,
  hunkStats,
  type ISelectableHunk,
  LineSelection
} from './selection';

const hunks: ISelectableHunk[] = [
  {
    index: 0,
    lines: [
      { kind: 'context' },
      { kind: 'delete' },
      { kind: 'add' },
      { kind: 'add' },
      { kind: 'context' }
    ]
  },
  {
    index: 1,
    lines: [{ kind: 'context' }, { kind: 'add' }, { kind: 'delete' }]
  }
];

describe('LineSelection', () => {
  it('toggles changed lines and ignores context lines', () => {
    let selection = LineSelection.empty.toggle(hunks, { hunk: 0, line: 2 });
    expect(selection.size).toBe(1);
    expect(selection.has({ hunk: 0, line: 2 })).toBe(true);
    expect(selection.anchor).toEqual({ hunk: 0, line: 2 });
    expect(selection.toggle(hunks, { hunk: 0, line: 0 })).toBe(selection);
    selection = selection.toggle(hunks, { hunk: 0, line: 2 });
    expect(selection.size).toBe(0);
  });

  it('extends from the anchor across hunks, skipping context', () => {
    const selection = LineSelection.empty
      .toggle(hunks, { hunk: 0, line: 3 })
      .extend(hunks, { hunk: 1, line: 1 });
    expect(selection.refs()).toEqual([
      { hunk: 0, line: 3 },
      { hunk: 1, line: 1 }
    ]);
    const backwards = LineSelection.empty
      .toggle(hunks, { hunk: 0, line: 3 })
      .extend(hunks, { hunk: 0, line: 1 });
    expect(backwards.refs()).toEqual([
      { hunk: 0, line: 1 },
      { hunk: 0, line: 2 },
      { hunk: 0, line: 3 }
    ]);
  });

  it('treats a shift-click without an anchor as a click', () => {
    const selection = LineSelection.empty.extend(hunks, { hunk: 1, line: 2 });
    expect(selection.refs()).toEqual([{ hunk: 1, line: 2 }]);
  });

  it('builds the API selection, one entry per hunk, lines in order', () => {
    const selection = LineSelection.empty
      .toggle(hunks, { hunk: 1, line: 2 })
      .toggle(hunks, { hunk: 0, line: 2 })
      .toggle(hunks, { hunk: 0, line: 1 });
    expect(selection.toPayload(hunks)).toEqual([
      { hunk: 0, lines: [1, 2] },
      { hunk: 1, lines: [2] }
    ]);
  });

  it('sends a fully selected hunk whole when asked', () => {
    const selection = LineSelection.empty.toggleHunk(hunks, 1);
    expect(selection.toPayload(hunks, true)).toEqual([{ hunk: 1 }]);
    expect(selection.toPayload(hunks)).toEqual([{ hunk: 1, lines: [1, 2] }]);
    expect(selection.toggleHunk(hunks, 1).size).toBe(0);
  });

  it('drops lines that no longer exist', () => {
    const selection = LineSelection.empty
      .toggle(hunks, { hunk: 1, line: 1 })
      .toggle(hunks, { hunk: 0, line: 3 });
    const restricted = selection.restrict([hunks[0]]);
    expect(restricted.refs()).toEqual([{ hunk: 0, line: 3 }]);
    expect(restricted.anchor).toEqual({ hunk: 0, line: 3 });
    expect(selection.restrict([]).anchor).toBeNull();
    expect(restricted.touches(0)).toBe(true);
    expect(restricted.touches(1)).toBe(false);
  });
});

describe('changedLines and hunkStats', () => {
  it('lists changes in order and counts them', () => {
    expect(changedLines(hunks)).toHaveLength(5);
    expect(hunkStats(hunks[0])).toEqual({ additions: 2, deletions: 1 });
  });
});
