/**
 * Relative dates ("3 hours ago") for the history list, and the window of
 * rows a virtual list renders.
 */

const UNITS: ReadonlyArray<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60]
];

/**
 * The largest whole unit of the time between `date` and `now`, negative in
 * the past; `null` for less than a minute (or an unreadable date).
 */
export function relativeParts(
  date: string | number | Date,
  now: number
): { value: number; unit: Intl.RelativeTimeFormatUnit } | null {
  const time = new Date(date).getTime();
  if (Number.isNaN(time)) {
    return null;
  }
  const seconds = (time - now) / 1000;
  const magnitude = Math.abs(seconds);
  for (const [unit, size] of UNITS) {
    if (magnitude >= size) {
      const value = Math.floor(magnitude / size);
      return { value: seconds < 0 ? -value : value, unit };
    }
  }
  return null;
}

/**
 * A date relative to `now` in the given locale ("3 hours ago", "yesterday"),
 * or `justNow` for less than a minute.
 */
export function relativeDate(
  date: string | number | Date,
  now: number,
  locale: string | undefined,
  justNow: string
): string {
  const parts = relativeParts(date, now);
  if (!parts) {
    return Number.isNaN(new Date(date).getTime()) ? '' : justNow;
  }
  return new Intl.RelativeTimeFormat(locale, { numeric: 'auto' }).format(
    parts.value,
    parts.unit
  );
}

/**
 * The rows a virtual list renders: those on screen plus `overscan` on
 * each side, as `[start, end)`.
 */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  count: number,
  overscan = 8
): { start: number; end: number } {
  if (count <= 0 || rowHeight <= 0) {
    return { start: 0, end: 0 };
  }
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const shown = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, Math.min(first, count - 1) - overscan);
  const end = Math.min(count, first + shown + overscan);
  return { start, end: Math.max(start, end) };
}

/**
 * Whether the list should ask for its next page: the last rendered row is
 * within `threshold` rows of the end of what is loaded.
 */
export function needsMore(
  end: number,
  loaded: number,
  hasMore: boolean,
  threshold = 50
): boolean {
  return hasMore && end + threshold >= loaded;
}

/**
 * The scroll position that brings row `index` into view, or null when it is
 * already fully visible.
 */
export function scrollIntoView(
  index: number,
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number
): number | null {
  const top = index * rowHeight;
  const bottom = top + rowHeight;
  if (top < scrollTop) {
    return top;
  }
  if (bottom > scrollTop + viewportHeight) {
    return bottom - viewportHeight;
  }
  return null;
}
