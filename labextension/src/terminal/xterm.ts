/**
 * An xterm.js terminal set up for Terax: options from the settings and the
 * theme, the fit, search, unicode 11 and web-links addons, and the WebGL
 * renderer a pane loads while it holds a slot of the renderer pool.
 */
import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { WebglAddon } from '@xterm/addon-webgl';
import { Terminal } from '@xterm/xterm';

import type { ITerminalConfig } from './pane';
import { terminalTheme } from './theme';

/**
 * Shells a Windows server runs on ConPTY (xterm adjusts its reflow to it).
 */
const WINDOWS_SHELLS = new Set(['pwsh', 'powershell', 'cmd']);

/**
 * A terminal and the addons a pane drives.
 */
export interface ITerminalParts {
  terminal: Terminal;
  fit: FitAddon;
  search: SearchAddon;
}

/**
 * Create a terminal (not yet opened in the page).
 */
export function createTerminal(
  config: ITerminalConfig,
  shell: string,
  onLink: (event: MouseEvent, uri: string) => void = openLink
): ITerminalParts {
  const terminal = new Terminal({
    // Decorations, markers and unicode versions are "proposed" API.
    allowProposedApi: true,
    fontFamily: fontFamily(config),
    fontSize: config.fontSize,
    lineHeight: config.lineHeight,
    scrollback: config.scrollback,
    cursorBlink: config.cursorBlink,
    cursorInactiveStyle: 'outline',
    theme: terminalTheme(),
    overviewRuler: { width: 8 },
    rescaleOverlappingGlyphs: true,
    drawBoldTextInBrightColors: false,
    minimumContrastRatio: 1,
    // A clear screen keeps what it clears in the scrollback (with its block
    // headers) instead of leaving the headers over blank lines.
    scrollOnEraseInDisplay: true,
    windowsPty: WINDOWS_SHELLS.has(shell) ? { backend: 'conpty' } : undefined
  });
  const fit = new FitAddon();
  const search = new SearchAddon({ highlightLimit: 2000 });
  terminal.loadAddon(fit);
  terminal.loadAddon(search);
  terminal.loadAddon(new Unicode11Addon());
  terminal.unicode.activeVersion = '11';
  terminal.loadAddon(new WebLinksAddon(onLink));
  return { terminal, fit, search };
}

/**
 * Open a link in a new browser tab on Ctrl/Cmd+click (a plain click may
 * start a selection).
 */
export function openLink(event: MouseEvent, uri: string): void {
  if (event.ctrlKey || event.metaKey) {
    window.open(uri, '_blank', 'noopener');
  }
}

/**
 * Apply changed settings to a terminal.
 */
export function configureTerminal(
  terminal: Terminal,
  config: ITerminalConfig
): void {
  terminal.options.fontFamily = fontFamily(config);
  terminal.options.fontSize = config.fontSize;
  terminal.options.lineHeight = config.lineHeight;
  terminal.options.scrollback = config.scrollback;
  terminal.options.cursorBlink = config.cursorBlink;
}

/**
 * The WebGL renderer of one terminal, loaded and disposed on demand; xterm
 * draws with its DOM renderer whenever it is not loaded.
 */
export class WebglRenderer {
  constructor(
    private readonly _terminal: Terminal,
    private readonly _onLost: () => void
  ) {}

  get active(): boolean {
    return this._addon !== null;
  }

  /**
   * Load the renderer; false when WebGL is not available.
   */
  attach(): boolean {
    if (this._addon) {
      return true;
    }
    try {
      const addon = new WebglAddon();
      addon.onContextLoss(() => {
        addon.dispose();
        if (this._addon === addon) {
          this._addon = null;
          this._onLost();
        }
      });
      this._terminal.loadAddon(addon);
      this._addon = addon;
      return true;
    } catch (error) {
      console.warn(
        'Terax terminal: WebGL is not available; using the DOM renderer.',
        error
      );
      return false;
    }
  }

  detach(): void {
    const addon = this._addon;
    this._addon = null;
    addon?.dispose();
  }

  private _addon: WebglAddon | null = null;
}

/**
 * The font family: the setting, else Lab's code font.
 */
function fontFamily(config: ITerminalConfig): string {
  if (config.fontFamily) {
    return config.fontFamily;
  }
  const lab = getComputedStyle(document.body)
    .getPropertyValue('--jp-code-font-family')
    .trim();
  return lab || 'Menlo, Consolas, "DejaVu Sans Mono", monospace';
}
