import { describe, expect, it } from 'vitest';

import { formatDuration, moveActive } from './listnav';

describe('moveActive', () => {
  it('wraps single steps around', () => {
    expect(moveActive(0, 1, 3)).toBe(1);
    expect(moveActive(2, 1, 3)).toBe(0);
    expect(moveActive(0, -1, 3)).toBe(2);
  });

  it('stops page steps at the ends', () => {
    expect(moveActive(1, 10, 5)).toBe(4);
    expect(moveActive(3, -10, 5)).toBe(0);
  });

  it('starts from an end when nothing is active', () => {
    expect(moveActive(-1, 1, 4)).toBe(0);
    expect(moveActive(-1, -1, 4)).toBe(3);
    expect(moveActive(9, 1, 4)).toBe(0);
  });

  it('has no active item in an empty list', () => {
    expect(moveActive(0, 1, 0)).toBe(-1);
  });
});

describe('formatDuration', () => {
  it('uses milliseconds below a second', () => {
    expect(formatDuration(7.6)).toBe('8 ms');
  });

  it('uses seconds above', () => {
    expect(formatDuration(1234)).toBe('1.2 s');
    expect(formatDuration(12_345)).toBe('12 s');
  });

  it('is empty for nonsense', () => {
    expect(formatDuration(Number.NaN)).toBe('');
    expect(formatDuration(-1)).toBe('');
  });
});
