/**
 * The blocks outline of a pane: the commands of the terminal as a list whose
 * rows collapse and expand to show each block's output.
 *
 * xterm keeps a fixed grid of lines and cannot hide some of them, so folding
 * a block's output in place would mean rewriting the buffer under the shell's
 * cursor addressing. Collapse therefore lives here: every block is one row
 * (status, command, duration), expanded on demand to its output as the
 * server recorded it, and a click scrolls the terminal to the block.
 */
import type { ServerConnection } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import {
  caretDownIcon,
  caretRightIcon,
  collapseAllIcon,
  copyIcon,
  expandAllIcon,
  LabIcon,
  refreshIcon
} from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { getBlockText } from '../api/pty';
import { formatDuration } from '../common/listnav';
import type { BlockAction, BlockEntry, BlocksAddon } from './blocks';
import { blockStatus, CSS } from './css';
import { askTeraxIcon, copyOutputIcon } from './icons';
import { toolButton } from './toolbutton';

/**
 * The newest blocks the outline lists.
 */
const MAX_ROWS = 300;
/**
 * Lines of output an expanded row shows.
 */
const PREVIEW_LINES = 200;

/**
 * The outline widget.
 */
export class BlockOutline extends Widget {
  constructor(options: BlockOutline.IOptions) {
    super();
    this._options = options;
    const trans = options.trans;
    this.addClass(CSS.outline);
    this.node.setAttribute('aria-label', trans.__('Command blocks'));

    const header = document.createElement('div');
    header.className = CSS.outlineHeader;
    this._title = document.createElement('span');
    this._title.textContent = trans.__('Blocks');
    const collapse = toolButton(
      collapseAllIcon,
      trans.__('Collapse All'),
      () => {
        this._expanded = new WeakSet();
        this._render();
      }
    );
    const expand = toolButton(expandAllIcon, trans.__('Expand All'), () => {
      for (const entry of this._blocks?.ledger.entries ?? []) {
        this._expanded.add(entry);
      }
      this._render();
    });
    header.append(this._title, expand, collapse);

    this._list = document.createElement('ul');
    this._list.className = CSS.outlineList;
    this._list.setAttribute('role', 'tree');
    this.node.append(header, this._list);
  }

  /**
   * Follow the blocks of a terminal (null while the pane hibernates).
   */
  setBlocks(blocks: BlocksAddon | null): void {
    this._blocks = blocks;
    this._texts.clear();
    this.refresh();
  }

  /**
   * Re-render soon (blocks changed).
   */
  refresh(): void {
    if (this.isHidden || this._frame !== null) {
      return;
    }
    this._frame = requestAnimationFrame(() => {
      this._frame = null;
      this._render();
    });
  }

  override dispose(): void {
    if (this._frame !== null) {
      cancelAnimationFrame(this._frame);
    }
    super.dispose();
  }

  protected override onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._render();
  }

  private _render(): void {
    const trans = this._options.trans;
    const blocks = this._blocks;
    const entries = blocks?.ledger.entries ?? [];
    this._title.textContent = trans.__('Blocks (%1)', String(entries.length));
    const atBottom =
      this._list.scrollTop + this._list.clientHeight >=
      this._list.scrollHeight - 4;
    this._list.replaceChildren();
    if (!blocks || entries.length === 0) {
      const empty = document.createElement('li');
      empty.className = CSS.outlineEmpty;
      empty.textContent = trans.__(
        'Commands you run appear here. Click one to jump to it.'
      );
      this._list.append(empty);
      return;
    }
    const shown = entries.slice(-MAX_ROWS);
    if (shown.length < entries.length) {
      const more = document.createElement('li');
      more.className = CSS.outlineEmpty;
      more.textContent = trans.__(
        '%1 older blocks are not listed.',
        String(entries.length - shown.length)
      );
      this._list.append(more);
    }
    for (const entry of shown) {
      this._list.append(this._row(entry, blocks));
    }
    if (atBottom) {
      this._list.scrollTop = this._list.scrollHeight;
    }
  }

  private _row(entry: BlockEntry, blocks: BlocksAddon): HTMLElement {
    const trans = this._options.trans;
    const exitCode = this._options.exitCode(entry);
    const status = blockStatus(exitCode);
    const expanded = this._expanded.has(entry);
    const item = document.createElement('li');
    item.className = CSS.outlineItem;
    item.setAttribute('role', 'treeitem');
    item.setAttribute('aria-expanded', String(expanded));
    item.dataset.status = status;
    item.classList.toggle(CSS.selected, blocks.selected === entry);

    const row = document.createElement('div');
    row.className = CSS.outlineRow;
    const caret = document.createElement('button');
    caret.type = 'button';
    caret.className = CSS.outlineCaret;
    caret.setAttribute(
      'aria-label',
      expanded ? trans.__('Collapse') : trans.__('Expand')
    );
    (expanded ? caretDownIcon : caretRightIcon).element({
      container: caret,
      tag: 'span'
    });
    caret.addEventListener('click', () => {
      if (expanded) {
        this._expanded.delete(entry);
      } else {
        this._expanded.add(entry);
      }
      this._render();
    });
    const dot = document.createElement('span');
    dot.className = CSS.badge;
    dot.dataset.status = status;
    dot.textContent =
      status === 'running'
        ? '…'
        : exitCode === null || exitCode === undefined
          ? '?'
          : String(exitCode);
    const command = document.createElement('button');
    command.type = 'button';
    command.className = CSS.outlineCommand;
    command.textContent = entry.command || trans.__('(empty command)');
    command.title = trans.__('Show in the terminal');
    command.addEventListener('click', () => this._options.onReveal(entry));
    const duration = document.createElement('span');
    duration.className = CSS.meta;
    const ms = this._options.duration(entry);
    duration.textContent = ms === null ? '' : formatDuration(ms);
    row.append(caret, dot, command, duration);
    item.append(row);

    if (expanded) {
      const actions = document.createElement('div');
      actions.className = CSS.actions;
      const action = (
        name: BlockAction,
        icon: LabIcon,
        label: string
      ): HTMLButtonElement => {
        const button = toolButton(icon, label, () =>
          this._options.onAction(name, entry)
        );
        button.classList.add(CSS.action);
        return button;
      };
      actions.append(
        action('copy-command', copyIcon, trans.__('Copy Command')),
        action('copy-output', copyOutputIcon, trans.__('Copy Output')),
        action('rerun', refreshIcon, trans.__('Run Again')),
        action('ask', askTeraxIcon, trans.__('Ask Terax About This Block'))
      );
      const output = document.createElement('pre');
      output.className = CSS.outlineOutput;
      output.textContent = trans.__('Loading…');
      item.append(actions, output);
      void this._loadText(entry, status === 'running').then(text => {
        output.textContent = text;
      });
    }
    return item;
  }

  private async _loadText(
    entry: BlockEntry,
    running: boolean
  ): Promise<string> {
    const trans = this._options.trans;
    const id = this._blocks?.ledger.serverId(entry) ?? null;
    if (id === null) {
      return trans.__('The server no longer has this block’s output.');
    }
    const cached = this._texts.get(id);
    if (cached !== undefined && !running) {
      return cached;
    }
    try {
      const result = await getBlockText(
        this._options.sessionId(),
        id,
        'plain',
        this._options.serverSettings
      );
      let lines = result.text.replace(/\n+$/, '').split('\n');
      let text = '';
      if (lines.length > PREVIEW_LINES) {
        text =
          trans.__(
            '… %1 earlier lines …',
            String(lines.length - PREVIEW_LINES)
          ) + '\n';
        lines = lines.slice(-PREVIEW_LINES);
      }
      text += lines.join('\n');
      if (!text.trim()) {
        text = trans.__('(no output)');
      }
      if (!running) {
        this._texts.set(id, text);
      }
      return text;
    } catch {
      return trans.__('The server no longer has this block’s output.');
    }
  }

  private readonly _options: BlockOutline.IOptions;
  private readonly _title: HTMLElement;
  private readonly _list: HTMLElement;
  private _blocks: BlocksAddon | null = null;
  private _expanded = new WeakSet<BlockEntry>();
  private readonly _texts = new Map<number, string>();
  private _frame: number | null = null;
}

/**
 * A namespace for BlockOutline statics.
 */
export namespace BlockOutline {
  export interface IOptions {
    trans: TranslationBundle;
    serverSettings: ServerConnection.ISettings;
    sessionId: () => string;
    onReveal: (entry: BlockEntry) => void;
    onAction: (action: BlockAction, entry: BlockEntry) => void;
    exitCode: (entry: BlockEntry) => number | null | undefined;
    duration: (entry: BlockEntry) => number | null;
  }
}
