import { describe, expect, it } from 'vitest';

import {
  ELLIPSIS,
  normalizeRanges,
  previewContext,
  previewSegments,
  segmentsFromPositions,
  segmentsFromRanges,
  utf16Index
} from './highlight';

describe('segmentsFromPositions', () => {
  it('highlights single characters and merges neighbours', () => {
    expect(segmentsFromPositions('src/app.py', [4, 5, 6])).toEqual([
      { text: 'src/', match: false },
      { text: 'app', match: true },
      { text: '.py', match: false }
    ]);
  });

  it('accepts unsorted and duplicated positions', () => {
    expect(segmentsFromPositions('abcd', [3, 0, 0])).toEqual([
      { text: 'a', match: true },
      { text: 'bc', match: false },
      { text: 'd', match: true }
    ]);
  });

  it('ignores positions outside the text', () => {
    expect(segmentsFromPositions('ab', [-1, 5])).toEqual([
      { text: 'ab', match: false }
    ]);
  });

  it('returns no segments for empty text', () => {
    expect(segmentsFromPositions('', [0])).toEqual([]);
  });

  it('counts code points, not UTF-16 units', () => {
    // The emoji is one code point but two UTF-16 units.
    expect(segmentsFromPositions('\u{1F600}ab', [1])).toEqual([
      { text: '\u{1F600}', match: false },
      { text: 'a', match: true },
      { text: 'b', match: false }
    ]);
  });
});

describe('segmentsFromRanges', () => {
  it('highlights ranges and keeps the rest plain', () => {
    expect(
      segmentsFromRanges('let needle = needle;', [
        [4, 10],
        [13, 19]
      ])
    ).toEqual([
      { text: 'let ', match: false },
      { text: 'needle', match: true },
      { text: ' = ', match: false },
      { text: 'needle', match: true },
      { text: ';', match: false }
    ]);
  });

  it('merges overlapping and touching ranges', () => {
    expect(
      segmentsFromRanges('abcdef', [
        [1, 3],
        [2, 4],
        [4, 5]
      ])
    ).toEqual([
      { text: 'a', match: false },
      { text: 'bcde', match: true },
      { text: 'f', match: false }
    ]);
  });

  it('covers the whole text when one range does', () => {
    expect(segmentsFromRanges('abc', [[0, 3]])).toEqual([
      { text: 'abc', match: true }
    ]);
  });

  it('handles multi-byte characters before a match', () => {
    expect(segmentsFromRanges('héllo wörld', [[6, 11]])).toEqual([
      { text: 'héllo ', match: false },
      { text: 'wörld', match: true }
    ]);
  });
});

describe('normalizeRanges', () => {
  it('clamps, drops empty ranges and sorts', () => {
    expect(
      normalizeRanges(
        [
          [8, 20],
          [3, 3],
          [-4, 2]
        ],
        10
      )
    ).toEqual([
      [0, 2],
      [8, 10]
    ]);
  });
});

describe('previewSegments', () => {
  it('drops leading indentation', () => {
    expect(previewSegments('    return needle', [[11, 17]])).toEqual([
      { text: 'return ', match: false },
      { text: 'needle', match: true }
    ]);
  });

  it('cuts a long prefix so the match stays visible', () => {
    const text = `${'x'.repeat(100)}needle`;
    const segments = previewSegments(text, [[100, 106]], { columns: 12 });
    expect(segments).toEqual([
      { text: ELLIPSIS, match: false },
      { text: 'xxxx', match: false },
      { text: 'needle', match: true }
    ]);
  });

  it('keeps the whole start when the match fits', () => {
    expect(
      previewSegments("LOADER = 'needle'", [[10, 16]], { columns: 20 })
    ).toEqual([
      { text: "LOADER = '", match: false },
      { text: 'needle', match: true },
      { text: "'", match: false }
    ]);
  });

  it('marks a line the server already clipped', () => {
    expect(previewSegments('abc', [[0, 1]], { clipped: true })[0]).toEqual({
      text: ELLIPSIS,
      match: false
    });
  });

  it('keeps a match that starts inside the indentation', () => {
    expect(previewSegments('  x', [[0, 3]])).toEqual([
      { text: '  x', match: true }
    ]);
  });
});

describe('utf16Index', () => {
  it('is the identity for BMP text', () => {
    expect(utf16Index('hello', 3)).toBe(3);
  });

  it('counts surrogate pairs as two units', () => {
    expect(utf16Index('\u{1F600}\u{1F600}ab', 3)).toBe(5);
  });

  it('stops at the end of the text', () => {
    expect(utf16Index('ab', 10)).toBe(2);
  });
});

describe('previewContext', () => {
  it('leaves room for the match and the ellipsis', () => {
    expect(previewContext(24, 13)).toBe(9);
  });

  it('keeps at least a little context in a narrow row', () => {
    expect(previewContext(10, 13)).toBe(4);
  });

  it('caps the context in a wide row', () => {
    expect(previewContext(200, 5)).toBe(40);
  });
});
