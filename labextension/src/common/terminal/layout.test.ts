import { describe, expect, it } from 'vitest';

import {
  countPanes,
  cyclePane,
  normalizeSizes,
  panesOf,
  readLayout
} from './layout';

describe('readLayout', () => {
  it('reads a nested split', () => {
    const layout = readLayout({
      type: 'split',
      orientation: 'horizontal',
      sizes: [2, 1],
      children: [
        { type: 'pane', session: 'a1', cwd: '/w' },
        {
          type: 'split',
          orientation: 'vertical',
          sizes: [1, 1],
          children: [
            { type: 'pane', session: 'b2', cwd: null },
            { type: 'pane', session: null, cwd: '/tmp' }
          ]
        }
      ]
    });
    expect(layout && countPanes(layout)).toBe(3);
    expect(layout && panesOf(layout).map(p => p.session)).toEqual([
      'a1',
      'b2',
      null
    ]);
  });

  it('drops broken children and collapses single-child splits', () => {
    expect(
      readLayout({
        type: 'split',
        orientation: 'vertical',
        sizes: 'bad',
        children: [{ type: 'pane', session: 7 }, { type: 'nope' }, null]
      })
    ).toEqual({ type: 'pane', session: null, cwd: null });
  });

  it('rejects what is not a layout', () => {
    expect(readLayout(null)).toBeNull();
    expect(readLayout('pane')).toBeNull();
    expect(
      readLayout({ type: 'split', orientation: 'x', children: [] })
    ).toBeNull();
  });

  it('defaults sizes', () => {
    const layout = readLayout({
      type: 'split',
      orientation: 'sideways',
      sizes: [0, -1],
      children: [
        { type: 'pane', session: 'a', cwd: null },
        { type: 'pane', session: 'b', cwd: null }
      ]
    });
    expect(layout).toMatchObject({ orientation: 'horizontal', sizes: [1, 1] });
  });

  it('stops at absurd depth', () => {
    let node: unknown = { type: 'pane', session: 'x', cwd: null };
    for (let i = 0; i < 20; i++) {
      node = { type: 'split', orientation: 'vertical', children: [node, node] };
    }
    expect(readLayout(node)).toBeNull();
  });
});

describe('normalizeSizes', () => {
  it('sums to one', () => {
    expect(normalizeSizes([1, 3])).toEqual([0.25, 0.75]);
    expect(normalizeSizes([0, 0])).toEqual([0.5, 0.5]);
  });
});

describe('cyclePane', () => {
  it('wraps both ways', () => {
    expect(cyclePane(2, 1, 3)).toBe(0);
    expect(cyclePane(0, -1, 3)).toBe(2);
    expect(cyclePane(0, 1, 0)).toBe(-1);
  });
});
