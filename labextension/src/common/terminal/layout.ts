/**
 * The split layout of a terminal tab as saved in Lab's state database: a
 * tree of splits whose leaves are panes, each with its session.
 */

/**
 * A pane: which session it shows and the folder to start a fresh one in
 * when that session is gone.
 */
export interface IPaneState {
  type: 'pane';
  session: string | null;
  cwd: string | null;
}

/**
 * Panes side by side (`horizontal`) or stacked (`vertical`).
 */
export interface ISplitState {
  type: 'split';
  orientation: 'horizontal' | 'vertical';
  /** Relative sizes of the children (they need not sum to 1). */
  sizes: number[];
  children: LayoutState[];
}

/**
 * A node of the layout tree.
 */
export type LayoutState = IPaneState | ISplitState;

const MAX_DEPTH = 8;
const MAX_PANES = 32;

/**
 * Read a layout from saved JSON, dropping what does not fit the shape;
 * null when nothing usable is left.
 */
export function readLayout(value: unknown, depth = 0): LayoutState | null {
  if (!isObject(value) || depth > MAX_DEPTH) {
    return null;
  }
  if (value.type === 'pane') {
    return {
      type: 'pane',
      session: typeof value.session === 'string' ? value.session : null,
      cwd: typeof value.cwd === 'string' ? value.cwd : null
    };
  }
  if (value.type !== 'split' || !Array.isArray(value.children)) {
    return null;
  }
  const orientation =
    value.orientation === 'vertical' ? 'vertical' : 'horizontal';
  const children: LayoutState[] = [];
  const sizes: number[] = [];
  const given = Array.isArray(value.sizes) ? value.sizes : [];
  value.children.forEach((child, index) => {
    const node = readLayout(child, depth + 1);
    if (node) {
      children.push(node);
      const size = given[index];
      sizes.push(typeof size === 'number' && size > 0 ? size : 1);
    }
  });
  if (children.length === 0) {
    return null;
  }
  if (children.length === 1) {
    return children[0];
  }
  const layout: ISplitState = { type: 'split', orientation, sizes, children };
  return countPanes(layout) > MAX_PANES ? null : layout;
}

/**
 * The panes of a layout, in reading order.
 */
export function panesOf(layout: LayoutState): IPaneState[] {
  if (layout.type === 'pane') {
    return [layout];
  }
  return layout.children.flatMap(panesOf);
}

/**
 * How many panes a layout has.
 */
export function countPanes(layout: LayoutState): number {
  return panesOf(layout).length;
}

/**
 * Sizes that sum to 1 (equal shares when the input is unusable).
 */
export function normalizeSizes(sizes: readonly number[]): number[] {
  const total = sizes.reduce((sum, size) => sum + Math.max(0, size), 0);
  if (!(total > 0)) {
    return sizes.map(() => 1 / sizes.length);
  }
  return sizes.map(size => Math.max(0, size) / total);
}

/**
 * The index of the pane after (`+1`) or before (`-1`) `index`, wrapping.
 */
export function cyclePane(index: number, delta: number, count: number): number {
  if (count <= 0) {
    return -1;
  }
  return (((index + delta) % count) + count) % count;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
