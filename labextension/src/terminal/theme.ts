/**
 * The terminal's colours from Lab's theme variables.
 */
import type { ITheme } from '@xterm/xterm';

import { terminalColors } from '../common/terminal/colors';

/**
 * Resolve a few `--jp-*` colours to `rgb()` strings through one probe element
 * (custom properties may hold names such as `white` or nested `var()`s).
 */
function resolveColors(names: readonly string[]): string[] {
  const probe = document.createElement('div');
  probe.style.position = 'absolute';
  probe.style.visibility = 'hidden';
  probe.style.pointerEvents = 'none';
  document.body.appendChild(probe);
  try {
    return names.map(name => {
      probe.style.color = '';
      probe.style.color = `var(${name})`;
      return getComputedStyle(probe).color;
    });
  } finally {
    probe.remove();
  }
}

/**
 * Whether Lab shows a light theme now.
 */
export function isLightTheme(): boolean {
  return document.body.dataset.jpThemeLight !== 'false';
}

/**
 * An xterm theme that matches Lab's current theme.
 */
export function terminalTheme(): ITheme {
  const [background, foreground, cursor, selection] = resolveColors([
    '--jp-layout-color0',
    '--jp-ui-font-color1',
    '--jp-ui-font-color0',
    '--jp-editor-selected-focused-background'
  ]);
  return terminalColors({
    background,
    foreground,
    cursor,
    selection,
    light: isLightTheme()
  });
}
