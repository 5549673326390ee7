/**
 * Keyboard movement through a list: which item is active after a key.
 */

/**
 * The active index after moving by `delta` in a list of `count` items.
 *
 * Single steps wrap around (Down on the last item goes to the first); page
 * steps stop at the ends. An empty list has no active item (-1).
 */
export function moveActive(
  current: number,
  delta: number,
  count: number
): number {
  if (count <= 0) {
    return -1;
  }
  if (current < 0 || current >= count) {
    return delta >= 0 ? 0 : count - 1;
  }
  if (Math.abs(delta) === 1) {
    return (current + delta + count) % count;
  }
  return Math.max(0, Math.min(count - 1, current + delta));
}

/**
 * A duration in milliseconds for a status line (`"8 ms"`, `"1.2 s"`).
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) {
    return '';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}
