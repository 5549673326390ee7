import { describe, expect, it } from 'vitest';

import { RendererPool } from './rendererpool';

describe('RendererPool', () => {
  it('grants slots up to its capacity', () => {
    const pool = new RendererPool(2);
    expect(pool.request('a')).toEqual({ granted: true, evict: null });
    expect(pool.request('b')).toEqual({ granted: true, evict: null });
    expect(pool.holders).toEqual(['a', 'b']);
  });

  it('takes the slot of the least recently used hidden view', () => {
    const pool = new RendererPool(2);
    pool.request('a');
    pool.request('b');
    pool.setVisible('a', false);
    pool.setVisible('b', false);
    expect(pool.request('c')).toEqual({ granted: true, evict: 'a' });
    expect(pool.holders).toEqual(['b', 'c']);
  });

  it('makes a view wait while every holder is visible', () => {
    const pool = new RendererPool(1);
    pool.request('a');
    expect(pool.request('b')).toEqual({ granted: false, evict: null });
    expect(pool.waiting).toEqual(['b']);
    expect(pool.release('a')).toBe('b');
    expect(pool.holders).toEqual(['b']);
    expect(pool.waiting).toEqual([]);
  });

  it('does not hand a slot to a view that was hidden meanwhile', () => {
    const pool = new RendererPool(1);
    pool.request('a');
    pool.request('b');
    pool.setVisible('b', false);
    expect(pool.release('a')).toBeNull();
    expect(pool.holders).toEqual([]);
  });

  it('touching a holder makes it most recently used', () => {
    const pool = new RendererPool(2);
    pool.request('a');
    pool.request('b');
    pool.request('a');
    expect(pool.holders).toEqual(['b', 'a']);
  });

  it('shrinks, hidden holders first', () => {
    const pool = new RendererPool(3);
    pool.request('a');
    pool.request('b');
    pool.request('c');
    pool.setVisible('b', false);
    expect(pool.setCapacity(1)).toEqual(['b', 'a']);
    expect(pool.holders).toEqual(['c']);
  });

  it('forgets a view', () => {
    const pool = new RendererPool(1);
    pool.request('a');
    pool.request('b');
    expect(pool.forget('a')).toBe('b');
    expect(pool.holds('a')).toBe(false);
  });
});
