import { describe, expect, it } from 'vitest';

import {
  DARK_PALETTE,
  LIGHT_PALETTE,
  luminance,
  parseColor,
  terminalColors,
  toHex,
  withAlpha
} from './colors';

describe('parseColor', () => {
  it('reads hex forms', () => {
    expect(parseColor('#fff')).toEqual({ r: 255, g: 255, b: 255, a: 1 });
    expect(parseColor('#11223380')).toMatchObject({ r: 17, g: 34, b: 51 });
    expect(parseColor('#11223380')!.a).toBeCloseTo(0.5, 2);
  });

  it('reads rgb() and rgba() as computed styles give them', () => {
    expect(parseColor('rgb(255, 0, 10)')).toEqual({
      r: 255,
      g: 0,
      b: 10,
      a: 1
    });
    expect(parseColor('rgba(0, 0, 0, 0.25)')).toEqual({
      r: 0,
      g: 0,
      b: 0,
      a: 0.25
    });
    expect(parseColor('rgb(0 128 255 / 50%)')).toMatchObject({ b: 255 });
  });

  it('rejects other forms', () => {
    expect(parseColor('white')).toBeNull();
    expect(parseColor('#12345')).toBeNull();
    expect(parseColor('rgb(a, b, c)')).toBeNull();
  });
});

describe('toHex', () => {
  it('blends translucent colours over the background', () => {
    expect(
      toHex({ r: 0, g: 0, b: 0, a: 0.5 }, { r: 255, g: 255, b: 255, a: 1 })
    ).toBe('#808080');
    expect(toHex({ r: 1, g: 2, b: 3, a: 1 })).toBe('#010203');
  });
});

describe('terminalColors', () => {
  it('uses the page colours and the palette of the theme', () => {
    const light = terminalColors({
      background: 'rgb(255, 255, 255)',
      foreground: 'rgba(0, 0, 0, 0.87)',
      cursor: 'rgb(0, 0, 0)',
      selection: 'rgba(33, 150, 243, 0.3)',
      light: true
    });
    expect(light.background).toBe('#ffffff');
    expect(light.foreground).toBe('#212121');
    expect(light.red).toBe(LIGHT_PALETTE.red);
    expect(light.selectionBackground).toMatch(/^#[0-9a-f]{6}$/);

    const dark = terminalColors({
      background: '#111111',
      foreground: '#eeeeee',
      cursor: '',
      selection: '',
      light: false
    });
    expect(dark.red).toBe(DARK_PALETTE.red);
    expect(dark.cursor).toBe('#eeeeee');
    expect(dark.scrollbarSliderBackground).toMatch(/^#eeeeee[0-9a-f]{2}$/);
  });

  it('falls back when the theme gives unusable values', () => {
    const colors = terminalColors({
      background: 'var(--x)',
      foreground: '',
      cursor: '',
      selection: '',
      light: false
    });
    expect(luminance(parseColor(colors.background)!)).toBeLessThan(0.05);
    expect(colors.foreground).toBe('#ffffff');
  });
});

describe('withAlpha', () => {
  it('appends the alpha byte', () => {
    expect(withAlpha('#102030', 1)).toBe('#102030ff');
    expect(withAlpha('#102030', 0)).toBe('#10203000');
  });
});
