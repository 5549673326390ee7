import { describe, expect, it } from 'vitest';

import {
  needsMore,
  relativeDate,
  relativeParts,
  scrollIntoView,
  visibleRange
} from './reldate';

const now = Date.parse('2026-11-30T12:00:00Z');

describe('relative dates', () => {
  it('picks the largest whole unit', () => {
    expect(relativeParts('2026-11-30T11:59:30Z', now)).toBeNull();
    expect(relativeParts('2026-11-30T11:55:00Z', now)).toEqual({
      value: -5,
      unit: 'minute'
    });
    expect(relativeParts('2026-11-30T09:00:00+00:00', now)).toEqual({
      value: -3,
      unit: 'hour'
    });
    expect(relativeParts('2026-11-30T13:00:00+02:00', now)).toEqual({
      value: -1,
      unit: 'hour'
    });
    expect(relativeParts('2026-11-16T12:00:00Z', now)).toEqual({
      value: -2,
      unit: 'week'
    });
    expect(relativeParts('2024-11-01T12:00:00Z', now)).toEqual({
      value: -2,
      unit: 'year'
    });
  });

  it('formats in the locale, with a phrase for just now', () => {
    expect(relativeDate('2026-11-30T09:00:00Z', now, 'en', 'now')).toBe(
      '3 hours ago'
    );
    expect(relativeDate('2026-11-29T11:00:00Z', now, 'en', 'now')).toBe(
      'yesterday'
    );
    expect(relativeDate('2026-11-30T12:00:00Z', now, 'en', 'now')).toBe('now');
    expect(relativeDate('not a date', now, 'en', 'now')).toBe('');
  });
});

describe('virtual list', () => {
  it('renders the rows on screen plus overscan', () => {
    expect(visibleRange(0, 100, 25, 1000, 2)).toEqual({ start: 0, end: 7 });
    expect(visibleRange(2500, 100, 25, 1000, 2)).toEqual({
      start: 98,
      end: 107
    });
    expect(visibleRange(24_990, 100, 25, 1000, 2)).toEqual({
      start: 997,
      end: 1000
    });
    expect(visibleRange(0, 100, 25, 0)).toEqual({ start: 0, end: 0 });
  });

  it('asks for more rows near the end of what is loaded', () => {
    expect(needsMore(160, 200, true)).toBe(true);
    expect(needsMore(100, 200, true)).toBe(false);
    expect(needsMore(200, 200, false)).toBe(false);
  });

  it('scrolls a row into view only when needed', () => {
    expect(scrollIntoView(10, 0, 100, 25)).toBe(175);
    expect(scrollIntoView(1, 0, 100, 25)).toBeNull();
    expect(scrollIntoView(1, 100, 100, 25)).toBe(25);
  });
});
