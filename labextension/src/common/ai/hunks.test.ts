import { describe, expect, it } from 'vitest';

import {
  applyAll,
  changedLines,
  decisionFor,
  HunkError,
  hunkCounts,
  hunkForLines,
  type IHunk,
  NO_NEWLINE,
  splitLines,
  switchHunks
} from './hunks';

// Hunks below are what the server's `diff_hunks` (difflib, 3 lines of
// context) gives for these texts.

const numbered = (count: number, name = 'l'): string[] =>
  Array.from({ length: count }, (_, n) => `${name}${n}\n`);

/** 40 lines; hunk 0 changes l0, 1 deletes l10, 2 changes l20, 3 changes l39. */
const FOUR_OLD = numbered(40).join('');
const FOUR: IHunk[] = [
  {
    index: 0,
    old_start: 1,
    old_lines: 4,
    new_start: 1,
    new_lines: 4,
    lines: ['-l0', '+L0', ' l1', ' l2', ' l3']
  },
  {
    index: 1,
    old_start: 8,
    old_lines: 7,
    new_start: 8,
    new_lines: 6,
    lines: [' l7', ' l8', ' l9', '-l10', ' l11', ' l12', ' l13']
  },
  {
    index: 2,
    old_start: 18,
    old_lines: 7,
    new_start: 17,
    new_lines: 7,
    lines: [' l17', ' l18', ' l19', '-l20', '+L20', ' l21', ' l22', ' l23']
  },
  {
    index: 3,
    old_start: 37,
    old_lines: 4,
    new_start: 36,
    new_lines: 4,
    lines: [' l36', ' l37', ' l38', '-l39', '+L39']
  }
];

/** The text with exactly the hunks of `chosen` applied. */
function fourWith(chosen: number[]): string {
  const on = new Set(chosen);
  const changed: Record<number, number> = { 0: 0, 20: 2, 39: 3 };
  return numbered(40)
    .map((line, n) => {
      if (n === 10) {
        return on.has(1) ? '' : line;
      }
      return n in changed && on.has(changed[n]) ? `L${n}\n` : line;
    })
    .join('');
}

function subsets(count: number): number[][] {
  const all: number[][] = [];
  for (let mask = 0; mask < 1 << count; mask++) {
    all.push([...Array(count).keys()].filter(i => mask & (1 << i)));
  }
  return all;
}

describe('splitLines', () => {
  it('splits at \\n only and keeps the endings', () => {
    expect(splitLines('a\r\nb\rc\nd')).toEqual(['a\r\n', 'b\rc\n', 'd']);
    expect(splitLines('a\n')).toEqual(['a\n']);
    expect(splitLines('')).toEqual([]);
    expect(splitLines('\n\n')).toEqual(['\n', '\n']);
  });
});

describe('switchHunks', () => {
  it('applies every subset of hunks as the server does', () => {
    for (const chosen of subsets(4)) {
      expect(switchHunks(FOUR_OLD, FOUR, [], chosen)).toBe(fourWith(chosen));
    }
    expect(applyAll(FOUR_OLD, FOUR)).toBe(fourWith([0, 1, 2, 3]));
  });

  it('takes hunks out of a text that has some of them', () => {
    for (const present of subsets(4)) {
      const text = fourWith(present);
      expect(switchHunks(text, FOUR, present, [])).toBe(FOUR_OLD);
      for (const wanted of [[], [1], [0, 3], [0, 1, 2, 3]]) {
        expect(switchHunks(text, FOUR, present, wanted)).toBe(fourWith(wanted));
      }
    }
  });

  it('does not depend on the order the hunks are listed in', () => {
    const reversed = [...FOUR].reverse();
    expect(switchHunks(FOUR_OLD, reversed, [], [1, 3])).toBe(fourWith([1, 3]));
  });

  it('handles a last line without a newline', () => {
    const added: IHunk = {
      index: 0,
      old_start: 1,
      old_lines: 3,
      new_start: 1,
      new_lines: 3,
      lines: [' a', '-b', '-c', NO_NEWLINE, '+B', '+c']
    };
    expect(applyAll('a\nb\nc', [added])).toBe('a\nB\nc\n');
    expect(switchHunks('a\nB\nc\n', [added], [0], [])).toBe('a\nb\nc');

    const kept: IHunk = {
      index: 0,
      old_start: 1,
      old_lines: 3,
      new_start: 1,
      new_lines: 3,
      lines: [' a', ' b', '-c', NO_NEWLINE, '+C', NO_NEWLINE]
    };
    expect(applyAll('a\nb\nc', [kept])).toBe('a\nb\nC');
    // The line must really lack its newline.
    expect(() => applyAll('a\nb\nc\n', [kept])).toThrow(HunkError);
  });

  it('creates, empties and appends to files', () => {
    const created: IHunk = {
      index: 0,
      old_start: 0,
      old_lines: 0,
      new_start: 1,
      new_lines: 2,
      lines: ['+one', '+two']
    };
    expect(applyAll('', [created])).toBe('one\ntwo\n');
    expect(switchHunks('one\ntwo\n', [created], [0], [])).toBe('');

    const emptied: IHunk = {
      index: 0,
      old_start: 1,
      old_lines: 2,
      new_start: 0,
      new_lines: 0,
      lines: ['-one', '-two']
    };
    expect(applyAll('one\ntwo\n', [emptied])).toBe('');

    const appended: IHunk = {
      index: 0,
      old_start: 8,
      old_lines: 3,
      new_start: 8,
      new_lines: 4,
      lines: [' l7', ' l8', ' l9', '+tail']
    };
    const ten = numbered(10).join('');
    expect(applyAll(ten, [appended])).toBe(ten + 'tail\n');
  });

  it('keeps the carriage returns of CRLF files', () => {
    const crlf: IHunk = {
      index: 0,
      old_start: 1,
      old_lines: 3,
      new_start: 1,
      new_lines: 3,
      lines: [' x\r', '-y\r', '+Y\r', ' z\r']
    };
    expect(applyAll('x\r\ny\r\nz\r\n', [crlf])).toBe('x\r\nY\r\nz\r\n');
  });

  it('refuses a text the hunks do not fit', () => {
    const changed = FOUR_OLD.replace('l21\n', 'changed\n');
    let error: unknown;
    try {
      applyAll(changed, FOUR);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HunkError);
    expect((error as HunkError).hunk).toBe(2);
    expect((error as HunkError).line).toBe(22);
    // Every hunk is checked, also one that stays as it is.
    expect(() => switchHunks(changed, FOUR, [], [0, 1, 3])).toThrow(HunkError);
    expect(() => applyAll('l0\n', FOUR)).toThrow(HunkError);
  });

  it('refuses malformed hunks', () => {
    const miscounted = { ...FOUR[0], old_lines: 5 };
    expect(() => applyAll(FOUR_OLD, [miscounted])).toThrow(/header counts/);
    const stray = { ...FOUR[0], lines: [NO_NEWLINE, ...FOUR[0].lines] };
    expect(() => applyAll(FOUR_OLD, [stray])).toThrow(/marker/);
    const odd = { ...FOUR[0], lines: ['?l0', '+L0', ' l1', ' l2', ' l3'] };
    expect(() => applyAll(FOUR_OLD, [odd])).toThrow(HunkError);
    const overlapping = [FOUR[1], { ...FOUR[2], index: 5, old_start: 12 }];
    expect(() => applyAll(FOUR_OLD, overlapping)).toThrow(/overlaps/);
  });
});

describe('hunkForLines', () => {
  it('finds the hunk whose old lines hold a changed range', () => {
    expect(hunkForLines(FOUR, 1, 1)).toBe(0);
    expect(hunkForLines(FOUR, 11, 11)).toBe(1);
    expect(hunkForLines(FOUR, 21, 21)).toBe(2);
    expect(hunkForLines(FOUR, 40, 40)).toBe(3);
  });

  it('places insertion points between the lines of a hunk', () => {
    // An insertion before line 11 (after l9) is inside hunk 1 (lines 8-14).
    expect(hunkForLines(FOUR, 11, 10)).toBe(1);
    // Right after the last line of hunk 1.
    expect(hunkForLines(FOUR, 15, 14)).toBe(1);
    const created: IHunk = {
      index: 0,
      old_start: 0,
      old_lines: 0,
      new_start: 1,
      new_lines: 1,
      lines: ['+x']
    };
    expect(hunkForLines([created], 1, 0)).toBe(0);
  });

  it('falls back to the most overlapping, then the nearest hunk', () => {
    expect(hunkForLines(FOUR, 13, 19)).toBe(1);
    expect(hunkForLines(FOUR, 14, 20)).toBe(2);
    expect(hunkForLines(FOUR, 15, 15)).toBe(1);
    expect(hunkForLines(FOUR, 17, 17)).toBe(2);
    expect(hunkForLines(FOUR, 30, 30)).toBe(2);
    expect(hunkForLines(FOUR, 34, 34)).toBe(3);
    expect(hunkForLines([], 1, 1)).toBe(-1);
  });
});

describe('changedLines', () => {
  it('gives the old lines a hunk changes, without context', () => {
    expect(changedLines(FOUR[0])).toEqual({ first: 1, last: 1 });
    expect(changedLines(FOUR[1])).toEqual({ first: 11, last: 11 });
    expect(changedLines(FOUR[3])).toEqual({ first: 40, last: 40 });
    const replaced = {
      ...FOUR[0],
      old_lines: 5,
      new_lines: 4,
      lines: [' l0', '-l1', '-l2', '+L', ' l3', ' l4']
    };
    expect(changedLines(replaced)).toEqual({ first: 2, last: 3 });
  });

  it('places an insertion before the line that follows it', () => {
    const appended: IHunk = {
      index: 0,
      old_start: 8,
      old_lines: 3,
      new_start: 8,
      new_lines: 4,
      lines: [' l7', ' l8', ' l9', '+tail']
    };
    expect(changedLines(appended)).toEqual({ first: 11, last: 10 });
    const created: IHunk = {
      index: 0,
      old_start: 0,
      old_lines: 0,
      new_start: 1,
      new_lines: 1,
      lines: ['+x']
    };
    expect(changedLines(created)).toEqual({ first: 1, last: 0 });
  });
});

describe('hunkCounts', () => {
  it('counts added and removed lines, not markers', () => {
    expect(hunkCounts(FOUR[1])).toEqual({ added: 0, removed: 1 });
    expect(
      hunkCounts({
        ...FOUR[0],
        lines: [' a', '-b', '-c', NO_NEWLINE, '+B', '+c']
      })
    ).toEqual({ added: 2, removed: 2 });
  });
});

describe('decisionFor', () => {
  it('approves all, some or none of the hunks', () => {
    expect(decisionFor(2, [0, 1])).toEqual({ decision: 'approve' });
    expect(decisionFor(2, [1, 1])).toEqual({ decision: 'approve', hunks: [1] });
    expect(decisionFor(3, [2, 0])).toEqual({
      decision: 'approve',
      hunks: [0, 2]
    });
    expect(decisionFor(2, [])).toEqual({ decision: 'deny' });
    expect(decisionFor(2, [5, -1])).toEqual({ decision: 'deny' });
    // A change without hunks (a new empty file) is approved whole.
    expect(decisionFor(0, [])).toEqual({ decision: 'approve' });
  });
});
