/**
 * Command blocks in the terminal: an xterm addon that reads the shell
 * integration's OSC 133/7 marks as xterm parses them, anchors a marker at
 * each, draws a header over each block's prompt line (an xterm decoration,
 * so it scrolls with the text) and a status bar in a gutter beside the
 * block's lines, and moves between blocks.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ISignal, Signal } from '@lumino/signaling';
import type {
  IDecoration,
  IDisposable,
  IMarker,
  ITerminalAddon,
  Terminal
} from '@xterm/xterm';

import type { IBlock } from '../api/pty';
import {
  BlockLedger,
  lastAtOrBefore,
  type ILedgerEntry,
  type IServerBlock
} from '../common/terminal/blocks';
import {
  isTrusted,
  parseShellMark,
  parseWorkingDirectory
} from '../common/terminal/osc';
import { blockStatus, CSS } from './css';
import { drawGutter, type IGutterBar } from './gutter';
import {
  buildHeader,
  fitHeader,
  placeHeaderChip,
  renderHeader,
  type BlockAction
} from './header';

export type { BlockAction } from './header';

/**
 * What the view keeps for one block.
 */
export interface IBlockView {
  /** The line the header sits on (the prompt the command was typed at). */
  headerMarker: IMarker;
  /** Where the output starts (the `C` mark). */
  startMarker: IMarker;
  /** Where the command ended (the `D` mark). */
  endMarker: IMarker | null;
  decoration: IDecoration | null;
  header: HTMLElement | null;
  /** The terminal width the header was last fitted to. */
  fittedColumns: number;
}

/**
 * A block of this terminal.
 */
export type BlockEntry = ILedgerEntry<IBlockView>;

/**
 * The addon.
 */
export class BlocksAddon implements ITerminalAddon {
  constructor(options: BlocksAddon.IOptions) {
    this._nonce = options.nonce;
    this._trans = options.trans;
    this._gutter = options.gutter;
  }

  /**
   * Blocks, changes to them, and the actions their headers ask for.
   */
  readonly ledger = new BlockLedger<IBlockView>();

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get actionRequested(): ISignal<
    this,
    { action: BlockAction; entry: BlockEntry }
  > {
    return this._actionRequested;
  }

  /**
   * The folder the shell last reported.
   */
  get cwd(): string | null {
    return this._cwd;
  }

  get selected(): BlockEntry | null {
    return this._selected;
  }

  activate(terminal: Terminal): void {
    this._terminal = terminal;
    this._disposables.push(
      terminal.parser.registerOscHandler(133, data => {
        this._onMark(data);
        return true;
      }),
      terminal.parser.registerOscHandler(7, data => {
        const cwd = parseWorkingDirectory(data);
        if (cwd) {
          this._cwd = cwd;
        }
        return true;
      }),
      terminal.onScroll(() => this._scheduleGutter()),
      terminal.onRender(() => this._scheduleGutter()),
      terminal.onResize(() => this._scheduleGutter())
    );
  }

  dispose(): void {
    this._clearViews();
    for (const disposable of this._disposables) {
      disposable.dispose();
    }
    this._disposables = [];
    if (this._frame !== null) {
      cancelAnimationFrame(this._frame);
      this._frame = null;
    }
    this._terminal = null;
    Signal.clearData(this);
  }

  /**
   * A new attachment: forget the blocks drawn so far (the terminal was
   * reset and the replay rebuilds them).
   */
  reset(blockCount: number): void {
    this._clearViews();
    this.ledger.attach(blockCount);
    this._selected = null;
    this._changed.emit();
    this._scheduleGutter();
  }

  /**
   * Ignore marks until {@link resume} (output of an earlier attachment that
   * xterm parses after the reset was asked for).
   */
  suspend(): void {
    this._suspended = true;
  }

  resume(): void {
    this._suspended = false;
  }

  /**
   * The replay has been parsed.
   */
  endReplay(): void {
    this.ledger.endReplay();
    this._refreshAll();
  }

  /**
   * The server's blocks, fetched after attaching.
   */
  setServerBlocks(blocks: readonly IServerBlock[]): void {
    this.ledger.setServerBlocks(blocks);
    this._refreshAll();
  }

  /**
   * A `block` event of the stream.
   */
  onServerBlock(event: 'start' | 'end', block: IBlock): void {
    const entry = this.ledger.update(block, event);
    if (entry) {
      this._renderHeader(entry);
      this._changed.emit();
    }
  }

  /**
   * The block whose lines include buffer line `line`.
   */
  blockAtLine(line: number): BlockEntry | null {
    const entries = this.ledger.entries;
    const found = lastAtOrBefore(
      entries.length,
      i => topLine(entries[i]),
      line
    );
    const entry = entries[found];
    return entry && line <= this._bottomLine(entry) ? entry : null;
  }

  /**
   * The block at a point on the screen (client coordinates).
   */
  blockAtPoint(clientY: number): BlockEntry | null {
    const terminal = this._terminal;
    const screen = terminal?.element?.querySelector('.xterm-screen');
    if (!terminal || !screen) {
      return null;
    }
    const rect = screen.getBoundingClientRect();
    const cell = rect.height / terminal.rows;
    if (!(cell > 0)) {
      return null;
    }
    const row = Math.floor((clientY - rect.top) / cell);
    if (row < 0 || row >= terminal.rows) {
      return null;
    }
    return this.blockAtLine(terminal.buffer.active.viewportY + row);
  }

  /**
   * The newest block.
   */
  get last(): BlockEntry | null {
    const entries = this.ledger.entries;
    return entries[entries.length - 1] ?? null;
  }

  /**
   * Select the block before (`-1`) or after (`+1`) the selected one (or the
   * top of the screen) and scroll to it. Returns false at either end.
   */
  jump(delta: -1 | 1): boolean {
    const terminal = this._terminal;
    const entries = this.ledger.entries;
    if (!terminal || entries.length === 0) {
      return false;
    }
    let index: number;
    const current = this._selected ? entries.indexOf(this._selected) : -1;
    if (current >= 0) {
      index = current + delta;
    } else {
      const top = terminal.buffer.active.viewportY;
      if (delta < 0) {
        index = -1;
        for (let i = entries.length - 1; i >= 0; i--) {
          if (topLine(entries[i]) < top) {
            index = i;
            break;
          }
        }
        // Nothing above the screen: go to the last block on it.
        if (index < 0 && entries.length > 0) {
          index = entries.length - 1;
        }
      } else {
        index = entries.findIndex(e => topLine(e) > top);
      }
    }
    if (index < 0 || index >= entries.length) {
      return false;
    }
    this.select(entries[index], true);
    return true;
  }

  /**
   * Select a block (or none); optionally scroll its header to the top.
   */
  select(entry: BlockEntry | null, reveal = false): void {
    const previous = this._selected;
    this._selected = entry;
    if (previous && previous !== entry) {
      this._renderHeader(previous);
    }
    if (entry) {
      this._renderHeader(entry);
      if (reveal) {
        this.reveal(entry);
      }
    }
    this._scheduleGutter();
    this._changed.emit();
  }

  /**
   * Scroll a block's header into view (to the top of the screen) and flash
   * it.
   */
  reveal(entry: BlockEntry): void {
    const terminal = this._terminal;
    if (!terminal) {
      return;
    }
    terminal.scrollToLine(Math.max(0, topLine(entry)));
    const header = entry.handle.header;
    if (header) {
      header.classList.remove(CSS.flash);
      // Restart the animation.
      void header.offsetWidth;
      header.classList.add(CSS.flash);
    }
  }

  /**
   * A block's output as the terminal shows it (for a block whose output the
   * server no longer has).
   */
  bufferText(entry: BlockEntry): string {
    const terminal = this._terminal;
    if (!terminal) {
      return '';
    }
    const buffer = terminal.buffer.normal;
    const lines: string[] = [];
    const to = this._bottomLine(entry);
    for (let y = entry.handle.startMarker.line; y <= to; y++) {
      const line = buffer.getLine(y);
      if (!line) {
        continue;
      }
      const text = line.translateToString(true);
      if (line.isWrapped && lines.length > 0) {
        lines[lines.length - 1] += text;
      } else {
        lines.push(text);
      }
    }
    return lines.join('\n');
  }

  /**
   * How a block ended, for its badge and the outline.
   */
  exitCodeOf(entry: BlockEntry): number | null | undefined {
    const info = this.ledger.info(entry);
    if (entry.exitCode !== undefined) {
      return entry.exitCode;
    }
    if (info && !info.running) {
      return info.exit_code;
    }
    return undefined;
  }

  /**
   * How long a block took (ms), once the server says.
   */
  durationOf(entry: BlockEntry): number | null {
    return this.ledger.info(entry)?.duration_ms ?? null;
  }

  private _onMark(data: string): void {
    const terminal = this._terminal;
    const mark = parseShellMark(data);
    if (
      this._suspended ||
      !terminal ||
      !mark ||
      !isTrusted(mark, this._nonce())
    ) {
      return;
    }
    // Marks in a full-screen program's buffer belong to no block.
    if (terminal.buffer.active.type !== 'normal') {
      return;
    }
    switch (mark.kind) {
      case 'A':
        this._pendingPrompt?.dispose();
        this._pendingPrompt = terminal.registerMarker(0);
        break;
      case 'B':
        break;
      case 'C':
        this._startBlock(mark.command);
        break;
      case 'D': {
        const entry = this.ledger.end(mark.exitCode);
        if (entry) {
          entry.handle.endMarker = terminal.registerMarker(0);
          this._renderHeader(entry);
          this._changed.emit();
          this._scheduleGutter();
        }
        break;
      }
    }
  }

  private _startBlock(command: string): void {
    const terminal = this._terminal!;
    const start = terminal.registerMarker(0);
    let header = this._pendingPrompt;
    this._pendingPrompt = null;
    if (!header || header.isDisposed || header.line > start.line) {
      header?.dispose();
      // No prompt mark seen: the command line is the line above the output.
      header = terminal.registerMarker(-1);
    }
    const view: IBlockView = {
      headerMarker: header,
      startMarker: start,
      endMarker: null,
      decoration: null,
      header: null,
      fittedColumns: 0
    };
    const entry = this.ledger.start(command, this._cwd, view);
    header.onDispose(() => this._forget(entry));
    const decoration = terminal.registerDecoration({
      marker: header,
      x: 0,
      width: terminal.cols,
      height: 1,
      layer: 'top',
      overviewRulerOptions: { color: RULER_COLORS.running, position: 'left' }
    });
    if (decoration) {
      view.decoration = decoration;
      decoration.onRender(element => {
        if (view.header !== element) {
          view.header = element;
          this._buildHeader(entry, element);
        }
        if (view.fittedColumns !== terminal.cols && element.isConnected) {
          this._fitHeader(entry);
        }
      });
    }
    this._changed.emit();
    this._scheduleGutter();
  }

  private _forget(entry: BlockEntry): void {
    if (this._clearing) {
      return;
    }
    const view = entry.handle;
    view.decoration?.dispose();
    view.startMarker.dispose();
    view.endMarker?.dispose();
    this.ledger.remove(entry);
    if (this._selected === entry) {
      this._selected = null;
    }
    this._changed.emit();
  }

  private _clearViews(): void {
    this._clearing = true;
    try {
      for (const entry of this.ledger.entries) {
        const view = entry.handle;
        view.decoration?.dispose();
        view.headerMarker.dispose();
        view.startMarker.dispose();
        view.endMarker?.dispose();
      }
    } finally {
      this._clearing = false;
    }
    this._pendingPrompt?.dispose();
    this._pendingPrompt = null;
  }

  private _refreshAll(): void {
    for (const entry of this.ledger.entries) {
      this._renderHeader(entry);
    }
    this._changed.emit();
    this._scheduleGutter();
  }

  private _buildHeader(entry: BlockEntry, element: HTMLElement): void {
    buildHeader(element, this._trans, action =>
      this._actionRequested.emit({ action, entry })
    );
    this._renderHeader(entry);
  }

  private _renderHeader(entry: BlockEntry): void {
    const view = entry.handle;
    const element = view.header;
    const exitCode = this.exitCodeOf(entry);
    const status = blockStatus(exitCode);
    if (view.decoration) {
      view.decoration.options.overviewRulerOptions = {
        color: RULER_COLORS[status],
        position: 'left'
      };
    }
    if (!element) {
      return;
    }
    const info = this.ledger.info(entry);
    renderHeader(
      element,
      {
        command: entry.command,
        status,
        exitCode,
        cwd: info?.cwd ?? entry.cwd,
        durationMs: info?.duration_ms ?? null,
        selected: this._selected === entry
      },
      this._trans
    );
    if (element.isConnected && element.style.display !== 'none') {
      this._fitHeader(entry);
    } else {
      view.fittedColumns = 0;
    }
  }

  private _fitHeader(entry: BlockEntry): void {
    const view = entry.handle;
    const element = view.header;
    const terminal = this._terminal;
    if (!terminal || !element || element.style.display === 'none') {
      return;
    }
    view.fittedColumns = terminal.cols;
    // A command longer than the line wraps onto more rows: the chip goes to
    // the last of them, beside where the text ends, not over full rows.
    const buffer = terminal.buffer.normal;
    const first = view.headerMarker.line;
    let last = first;
    while (
      last - first < MAX_HEADER_ROWS &&
      buffer.getLine(last + 1)?.isWrapped
    ) {
      last++;
    }
    const line = buffer.getLine(last);
    const used = line ? line.translateToString(true).length : 0;
    placeHeaderChip(element, last - first);
    fitHeader(element, used, terminal.cols);
  }

  private _bottomLine(entry: BlockEntry): number {
    const view = entry.handle;
    const start = Math.max(view.startMarker.line, topLine(entry));
    if (view.endMarker && !view.endMarker.isDisposed) {
      return Math.max(topLine(entry), view.endMarker.line - 1, start - 1);
    }
    const buffer = this._terminal?.buffer.normal;
    return buffer ? buffer.baseY + buffer.cursorY : start;
  }

  private _scheduleGutter(): void {
    if (this._frame === null && this._terminal) {
      this._frame = requestAnimationFrame(() => {
        this._frame = null;
        this._drawGutter();
      });
    }
  }

  /**
   * Draw the gutter: only the blocks on screen are visited.
   */
  private _drawGutter(): void {
    const terminal = this._terminal;
    const screen =
      terminal?.element?.querySelector<HTMLElement>('.xterm-screen');
    if (!terminal || !screen) {
      return;
    }
    const rows = terminal.rows;
    const cell = screen.offsetHeight / rows;
    const top = terminal.buffer.active.viewportY;
    const fullScreen = terminal.buffer.active.type !== 'normal';
    drawGutter(
      this._gutter,
      fullScreen || !(cell > 0) ? [] : this._barsFrom(top, top + rows - 1),
      { top, rows, cell }
    );
  }

  private *_barsFrom(top: number, bottom: number): Generator<IGutterBar> {
    const entries = this.ledger.entries;
    // The last block starting above the screen may reach into it.
    const first = Math.max(
      0,
      lastAtOrBefore(entries.length, i => topLine(entries[i]), top)
    );
    for (let index = first; index < entries.length; index++) {
      const entry = entries[index];
      const from = topLine(entry);
      if (from > bottom) {
        return;
      }
      yield {
        from,
        to: this._bottomLine(entry),
        status: blockStatus(this.exitCodeOf(entry)),
        selected: entry === this._selected,
        title: entry.command
      };
    }
  }

  private readonly _nonce: () => string;
  private readonly _trans: TranslationBundle;
  private readonly _gutter: HTMLElement;
  private _terminal: Terminal | null = null;
  private _disposables: IDisposable[] = [];
  private _pendingPrompt: IMarker | null = null;
  private _cwd: string | null = null;
  private _selected: BlockEntry | null = null;
  private _frame: number | null = null;
  private _clearing = false;
  private _suspended = false;
  private readonly _changed = new Signal<this, void>(this);
  private readonly _actionRequested = new Signal<
    this,
    { action: BlockAction; entry: BlockEntry }
  >(this);
}

/**
 * A namespace for BlocksAddon statics.
 */
export namespace BlocksAddon {
  export interface IOptions {
    /** The session's current nonce (known once attached). */
    nonce: () => string;
    trans: TranslationBundle;
    /** The element the gutter bars are drawn in. */
    gutter: HTMLElement;
  }
}

/**
 * Overview ruler colours (xterm needs plain colours, not CSS variables).
 */
/**
 * The most rows a wrapped command line is followed down for its header chip.
 */
const MAX_HEADER_ROWS = 50;

const RULER_COLORS: Record<string, string> = {
  running: '#2196f3',
  success: '#3fb95099',
  failure: '#f85149',
  unknown: '#9e9e9e99'
};

/**
 * The first line of a block (its header line).
 */
function topLine(entry: BlockEntry): number {
  return entry.handle.headerMarker.line;
}
