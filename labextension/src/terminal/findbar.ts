/**
 * The find bar of a terminal pane (Ctrl+F): xterm's search addon behind a
 * small floating box with match count, case and regex toggles.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import {
  caretDownEmptyThinIcon,
  caretUpEmptyThinIcon,
  caseSensitiveIcon,
  closeIcon,
  regexIcon
} from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import type { ISearchOptions, SearchAddon } from '@xterm/addon-search';

import { CSS } from './css';
import { toolButton } from './toolbutton';

/**
 * Match colours (the addon needs plain `#rrggbb` colours).
 */
const DECORATIONS = {
  matchBackground: '#f5c80055',
  matchBorder: '#f5c800aa',
  matchOverviewRuler: '#f5c800',
  activeMatchBackground: '#ff9632',
  activeMatchBorder: '#ff9632',
  activeMatchColorOverviewRuler: '#ff9632'
};

/**
 * The find bar.
 */
export class FindBar extends Widget {
  constructor(options: FindBar.IOptions) {
    super();
    this._search = options.search;
    this._onClose = options.onClose;
    const trans = options.trans;
    this.addClass(CSS.findBar);
    this.node.setAttribute('role', 'search');
    this.node.dataset.lmSuppressShortcuts = 'true';

    const input = document.createElement('input');
    input.className = CSS.findInput;
    input.type = 'text';
    input.placeholder = trans.__('Find');
    input.setAttribute('aria-label', trans.__('Find in terminal'));
    input.spellcheck = false;
    input.autocomplete = 'off';
    input.addEventListener('input', () => this._find(true, false));
    input.addEventListener('keydown', event => this._onKeyDown(event));
    this._input = input;

    const count = document.createElement('span');
    count.className = CSS.findCount;
    count.setAttribute('aria-live', 'polite');
    this._count = count;

    this._caseButton = toolButton(
      caseSensitiveIcon,
      trans.__('Match Case'),
      () => this._toggle('caseSensitive')
    );
    this._regexButton = toolButton(
      regexIcon,
      trans.__('Use Regular Expression'),
      () => this._toggle('regex')
    );
    const previous = toolButton(
      caretUpEmptyThinIcon,
      trans.__('Previous Match (Shift+Enter)'),
      () => this._find(false, true)
    );
    const next = toolButton(
      caretDownEmptyThinIcon,
      trans.__('Next Match (Enter)'),
      () => this._find(false, false)
    );
    const close = toolButton(closeIcon, trans.__('Close (Escape)'), () =>
      this.close()
    );
    this.node.append(
      input,
      this._caseButton,
      this._regexButton,
      count,
      previous,
      next,
      close
    );
    this._search.onDidChangeResults(({ resultIndex, resultCount }) => {
      this._showCount(resultIndex, resultCount);
    });
    this.hide();
  }

  /**
   * Show the bar, with `text` (the terminal selection) when given.
   */
  open(text?: string): void {
    this.show();
    if (text && !text.includes('\n')) {
      this._input.value = text;
    }
    this._input.focus();
    this._input.select();
    if (this._input.value) {
      this._find(true, false);
    }
  }

  /**
   * Hide the bar and clear the highlights.
   */
  override close(): void {
    if (this.isHidden) {
      return;
    }
    this._search.clearDecorations();
    this.hide();
    this._onClose();
  }

  get isOpen(): boolean {
    return !this.isHidden;
  }

  private _onKeyDown(event: KeyboardEvent): void {
    if (event.key === 'Enter') {
      event.preventDefault();
      this._find(false, event.shiftKey);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      this.close();
    }
  }

  private _toggle(option: 'caseSensitive' | 'regex'): void {
    this._options[option] = !this._options[option];
    this._caseButton.setAttribute(
      'aria-pressed',
      String(!!this._options.caseSensitive)
    );
    this._regexButton.setAttribute(
      'aria-pressed',
      String(!!this._options.regex)
    );
    this._find(true, false);
    this._input.focus();
  }

  private _find(incremental: boolean, backwards: boolean): void {
    const text = this._input.value;
    if (!text) {
      this._search.clearDecorations();
      this._count.textContent = '';
      this.node.dataset.noMatch = 'false';
      return;
    }
    const options: ISearchOptions = {
      ...this._options,
      incremental,
      decorations: DECORATIONS
    };
    let found = false;
    try {
      found = backwards
        ? this._search.findPrevious(text, options)
        : this._search.findNext(text, options);
    } catch {
      // An unfinished regular expression.
      found = false;
    }
    if (!found) {
      this._showCount(-1, 0);
    }
  }

  private _showCount(index: number, total: number): void {
    const text = this._input.value;
    this.node.dataset.noMatch = String(!!text && total === 0);
    if (!text) {
      this._count.textContent = '';
    } else if (total === 0) {
      this._count.textContent = '0/0';
    } else {
      this._count.textContent = `${index + 1}/${total}`;
    }
  }

  private readonly _search: SearchAddon;
  private readonly _onClose: () => void;
  private readonly _input: HTMLInputElement;
  private readonly _count: HTMLElement;
  private readonly _caseButton: HTMLButtonElement;
  private readonly _regexButton: HTMLButtonElement;
  private readonly _options: ISearchOptions = {};
}

/**
 * A namespace for FindBar statics.
 */
export namespace FindBar {
  export interface IOptions {
    search: SearchAddon;
    trans: TranslationBundle;
    /** Called when the bar closes (to give the focus back). */
    onClose: () => void;
  }
}
