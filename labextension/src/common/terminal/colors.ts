/**
 * Terminal colours: CSS colours as `#rrggbb`, and the ANSI palettes that go
 * with Lab's light and dark themes.
 */

/**
 * An RGB colour with 0-255 channels and 0-1 alpha.
 */
export interface IRGBA {
  r: number;
  g: number;
  b: number;
  a: number;
}

/**
 * Parse `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb()` and `rgba()` (the
 * forms a browser's computed style gives); null for anything else.
 */
export function parseColor(value: string): IRGBA | null {
  const text = value.trim().toLowerCase();
  const hex = /^#([0-9a-f]{3,8})$/.exec(text);
  if (hex) {
    let digits = hex[1];
    if (digits.length === 3 || digits.length === 4) {
      digits = digits
        .split('')
        .map(d => d + d)
        .join('');
    }
    if (digits.length !== 6 && digits.length !== 8) {
      return null;
    }
    return {
      r: parseInt(digits.slice(0, 2), 16),
      g: parseInt(digits.slice(2, 4), 16),
      b: parseInt(digits.slice(4, 6), 16),
      a: digits.length === 8 ? parseInt(digits.slice(6, 8), 16) / 255 : 1
    };
  }
  const rgb = /^rgba?\(([^)]*)\)$/.exec(text);
  if (!rgb) {
    return null;
  }
  const parts = rgb[1]
    .split(/[\s,/]+/)
    .filter(Boolean)
    .map(part =>
      part.endsWith('%') ? (parseFloat(part) / 100) * 255 : parseFloat(part)
    );
  if (parts.length < 3 || parts.slice(0, 3).some(n => !Number.isFinite(n))) {
    return null;
  }
  let alpha = parts.length > 3 && Number.isFinite(parts[3]) ? parts[3] : 1;
  if (
    rgb[1]
      .trim()
      .split(/[\s,/]+/)[3]
      ?.endsWith('%')
  ) {
    alpha = alpha / 255;
  }
  return {
    r: clamp(parts[0]),
    g: clamp(parts[1]),
    b: clamp(parts[2]),
    a: Math.max(0, Math.min(1, alpha))
  };
}

/**
 * `#rrggbb` of a colour, blended over `background` when translucent.
 */
export function toHex(color: IRGBA, background?: IRGBA): string {
  let { r, g, b } = color;
  if (color.a < 1 && background) {
    r = r * color.a + background.r * (1 - color.a);
    g = g * color.a + background.g * (1 - color.a);
    b = b * color.a + background.b * (1 - color.a);
  }
  return (
    '#' + [r, g, b].map(n => clamp(n).toString(16).padStart(2, '0')).join('')
  );
}

/**
 * Mix two colours: `amount` of `a` and the rest of `b`.
 */
export function mix(a: IRGBA, b: IRGBA, amount: number): IRGBA {
  const t = Math.max(0, Math.min(1, amount));
  return {
    r: a.r * t + b.r * (1 - t),
    g: a.g * t + b.g * (1 - t),
    b: a.b * t + b.b * (1 - t),
    a: 1
  };
}

/**
 * Relative luminance (WCAG), 0 for black to 1 for white.
 */
export function luminance(color: IRGBA): number {
  const channel = (value: number): number => {
    const c = value / 255;
    return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  };
  return (
    0.2126 * channel(color.r) +
    0.7152 * channel(color.g) +
    0.0722 * channel(color.b)
  );
}

/**
 * The 16 ANSI colours in xterm's theme order.
 */
export interface IAnsiPalette {
  black: string;
  red: string;
  green: string;
  yellow: string;
  blue: string;
  magenta: string;
  cyan: string;
  white: string;
  brightBlack: string;
  brightRed: string;
  brightGreen: string;
  brightYellow: string;
  brightBlue: string;
  brightMagenta: string;
  brightCyan: string;
  brightWhite: string;
}

/**
 * Readable on a light background (text colours dark enough for white).
 */
export const LIGHT_PALETTE: IAnsiPalette = {
  black: '#24292f',
  red: '#c62828',
  green: '#2e7d32',
  yellow: '#8d6e00',
  blue: '#1565c0',
  magenta: '#8e24aa',
  cyan: '#00838f',
  white: '#6e7781',
  brightBlack: '#57606a',
  brightRed: '#e53935',
  brightGreen: '#388e3c',
  brightYellow: '#a07800',
  brightBlue: '#1e88e5',
  brightMagenta: '#ab47bc',
  brightCyan: '#0097a7',
  brightWhite: '#8c959f'
};

/**
 * Readable on a dark background.
 */
export const DARK_PALETTE: IAnsiPalette = {
  black: '#3b4048',
  red: '#f0736c',
  green: '#7ec699',
  yellow: '#e5c07b',
  blue: '#61afef',
  magenta: '#c678dd',
  cyan: '#56b6c2',
  white: '#c8ccd4',
  brightBlack: '#7f848e',
  brightRed: '#ff8f88',
  brightGreen: '#98e0ad',
  brightYellow: '#f2d79b',
  brightBlue: '#82c2ff',
  brightMagenta: '#d99cf0',
  brightCyan: '#7fd3dd',
  brightWhite: '#f0f2f5'
};

/**
 * The colours a terminal theme is built from (CSS colour strings).
 */
export interface IThemeInputs {
  background: string;
  foreground: string;
  cursor: string;
  selection: string;
  /** Light theme (from Lab's `data-jp-theme-light`). */
  light: boolean;
}

/**
 * An xterm theme (structurally `ITheme`) from the page's colours.
 */
export interface ITerminalColors extends IAnsiPalette {
  background: string;
  foreground: string;
  cursor: string;
  cursorAccent: string;
  selectionBackground: string;
  selectionInactiveBackground: string;
  scrollbarSliderBackground: string;
  scrollbarSliderHoverBackground: string;
  scrollbarSliderActiveBackground: string;
  overviewRulerBorder: string;
}

/**
 * Build the terminal colours; unparsable inputs fall back to the palette's
 * defaults so a theme with odd values still gives a usable terminal.
 */
export function terminalColors(inputs: IThemeInputs): ITerminalColors {
  const palette = inputs.light ? LIGHT_PALETTE : DARK_PALETTE;
  const background =
    parseColor(inputs.background) ??
    (inputs.light ? WHITE : { r: 17, g: 17, b: 17, a: 1 });
  const foreground =
    parseColor(inputs.foreground) ??
    (inputs.light ? { r: 33, g: 33, b: 33, a: 1 } : WHITE);
  const cursor = parseColor(inputs.cursor) ?? foreground;
  const selection =
    parseColor(inputs.selection) ?? mix(foreground, background, 0.25);
  const fg = toHex(foreground, background);
  const bg = toHex(background, WHITE);
  const slider = (amount: number): string => withAlpha(fg, amount);
  return {
    ...palette,
    background: bg,
    foreground: fg,
    cursor: toHex(cursor, background),
    cursorAccent: bg,
    selectionBackground: toHex(
      selection.a < 1 ? selection : { ...selection, a: 0.6 },
      background
    ),
    selectionInactiveBackground: toHex(mix(selection, background, 0.5)),
    scrollbarSliderBackground: slider(0.18),
    scrollbarSliderHoverBackground: slider(0.32),
    scrollbarSliderActiveBackground: slider(0.45),
    overviewRulerBorder: toHex(mix(foreground, background, 0.12))
  };
}

/**
 * `#rrggbbaa` from `#rrggbb` and an alpha.
 */
export function withAlpha(hex: string, alpha: number): string {
  const value = Math.round(Math.max(0, Math.min(1, alpha)) * 255);
  return hex.slice(0, 7) + value.toString(16).padStart(2, '0');
}

const WHITE: IRGBA = { r: 255, g: 255, b: 255, a: 1 };

function clamp(value: number): number {
  return Math.max(0, Math.min(255, Math.round(value)));
}
