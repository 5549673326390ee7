/**
 * A Terax terminal tab: panes split side by side or stacked (Lumino split
 * panels), each on its own session; its layout is what Lab's state database
 * keeps to restore the tab after a reload.
 */
import type { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import { BoxLayout, SplitPanel, Widget } from '@lumino/widgets';

import {
  cyclePane,
  normalizeSizes,
  type IPaneState,
  type LayoutState
} from '../common/terminal/layout';
import { CSS } from './css';
import { teraxTerminalIcon } from './icons';
import type { EndReason, TerminalSessionModel } from './model';
import { TerminalPane, type IPaneServices } from './pane';
import type { ITeraxTerminalPanel } from './tokens';

/**
 * What a panel needs besides what its panes need.
 */
export interface IPanelServices extends IPaneServices {
  /**
   * A model for a pane: the saved session when the server still runs it,
   * else a fresh session in the saved (or given) folder.
   */
  openSession: (state: Partial<IPaneState>) => Promise<TerminalSessionModel>;
  /**
   * End a session (its pane closed without detaching).
   */
  closeSession: (id: string) => void;
}

/**
 * The tab widget.
 */
export class TerminalPanel extends Widget implements ITeraxTerminalPanel {
  constructor(options: TerminalPanel.IOptions) {
    super();
    this._services = options.services;
    this.id = options.id ?? `terax-terminal-${Private.nextId()}`;
    this.addClass(CSS.panel);
    this.title.icon = teraxTerminalIcon;
    this.title.closable = true;
    this.title.label = this._services.trans.__('Terminal');
    this.layout = new BoxLayout({ spacing: 0 });
    this.node.tabIndex = -1;
  }

  /**
   * The layout or a pane's session changed (to save the state).
   */
  get stateChanged(): ISignal<this, void> {
    return this._stateChanged;
  }

  /**
   * The panes, in reading order.
   */
  get panes(): TerminalPane[] {
    return this._root ? Private.panesOf(this._root) : [];
  }

  /**
   * The pane that last had the focus.
   */
  get activePane(): TerminalPane | null {
    const panes = this.panes;
    return panes.includes(this._active as TerminalPane)
      ? this._active
      : (panes[0] ?? null);
  }

  /**
   * The active pane once its session is connected; null when it does not
   * connect within `timeoutMs`.
   */
  connectedPane(timeoutMs = 10000): Promise<TerminalPane | null> {
    return new Promise(resolve => {
      let watched: TerminalSessionModel | null = null;
      const watch = (model: TerminalSessionModel | null): void => {
        watched?.changed.disconnect(check);
        watched?.attached.disconnect(check);
        watched = model;
        watched?.changed.connect(check);
        watched?.attached.connect(check);
      };
      const check = (): void => {
        const pane = this.activePane;
        if (pane?.model.status === 'connected') {
          clearTimeout(timer);
          finish(pane);
        } else if ((pane?.model ?? null) !== watched) {
          watch(pane?.model ?? null);
        }
      };
      const finish = (pane: TerminalPane | null): void => {
        this._stateChanged.disconnect(check);
        watch(null);
        resolve(pane);
      };
      const timer = setTimeout(() => finish(null), timeoutMs);
      this._stateChanged.connect(check);
      check();
    });
  }

  /**
   * Build the panes of a layout (a fresh single pane when absent).
   */
  async build(layout: LayoutState | null, cwd?: string): Promise<void> {
    const root = await this._buildNode(
      layout ?? { type: 'pane', session: null, cwd: cwd ?? null }
    );
    this._setRoot(root);
    this._active = this.panes[0] ?? null;
    this._updateTitle();
  }

  /**
   * Split a pane; the new pane starts a session in the pane's folder.
   */
  async split(
    pane: TerminalPane,
    orientation: 'horizontal' | 'vertical'
  ): Promise<TerminalPane> {
    const model = await this._services.openSession({ cwd: pane.model.cwd });
    const added = this._createPane(model);
    const parent = pane.parent;
    if (parent instanceof SplitPanel && parent.orientation === orientation) {
      const index = parent.widgets.indexOf(pane);
      const sizes = parent.relativeSizes();
      const share = sizes[index] / 2;
      sizes.splice(index, 1, share, share);
      parent.insertWidget(index + 1, added);
      parent.setRelativeSizes(sizes);
    } else {
      const split = this._createSplit(orientation);
      this._replace(pane, split);
      split.addWidget(pane);
      split.addWidget(added);
      split.setRelativeSizes([1, 1]);
    }
    this._active = added;
    this._afterLayoutChange();
    requestAnimationFrame(() => added.focus());
    return added;
  }

  /**
   * Remove a pane (ending its session unless it is detached); the tab
   * closes with its last pane.
   */
  closePane(pane: TerminalPane): void {
    const panes = this.panes;
    const index = panes.indexOf(pane);
    if (index < 0) {
      return;
    }
    if (panes.length === 1) {
      this.close();
      return;
    }
    const parent = pane.parent;
    this._disposePane(pane);
    if (parent instanceof SplitPanel && parent.widgets.length === 1) {
      const only = parent.widgets[0];
      this._replace(parent, only);
      parent.dispose();
    }
    const rest = this.panes;
    this._active = rest[Math.min(index, rest.length - 1)] ?? null;
    this._afterLayoutChange();
    this._active?.focus();
  }

  /**
   * Focus the pane after (`+1`) or before (`-1`) the active one.
   */
  focusPane(delta: number): void {
    const panes = this.panes;
    const active = this.activePane;
    const index = cyclePane(
      active ? panes.indexOf(active) : 0,
      delta,
      panes.length
    );
    if (index >= 0) {
      this._active = panes[index];
      this._markActive();
      this._updateTitle();
      panes[index].focus();
    }
  }

  /**
   * The layout to save: the split tree with each pane's session and folder.
   */
  saveLayout(): LayoutState | null {
    return this._root ? Private.save(this._root) : null;
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    for (const pane of this.panes) {
      this._endSession(pane);
    }
    super.dispose();
  }

  protected override onActivateRequest(msg: Message): void {
    super.onActivateRequest(msg);
    this.activePane?.focus();
  }

  protected override onCloseRequest(msg: Message): void {
    super.onCloseRequest(msg);
    this.dispose();
  }

  private async _buildNode(state: LayoutState): Promise<Widget> {
    if (state.type === 'pane') {
      const model = await this._services.openSession(state);
      return this._createPane(model);
    }
    const children = await Promise.all(
      state.children.map(child => this._buildNode(child))
    );
    const split = this._createSplit(state.orientation);
    for (const child of children) {
      split.addWidget(child);
    }
    split.setRelativeSizes(normalizeSizes(state.sizes));
    return split;
  }

  private _createPane(model: TerminalSessionModel): TerminalPane {
    const pane = new TerminalPane({ model, services: this._services });
    pane.focused.connect(() => {
      if (this._active !== pane) {
        this._active = pane;
        this._markActive();
        this._updateTitle();
      }
    }, this);
    pane.stateChanged.connect(() => {
      this._updateTitle();
      const cwd = pane.model.cwd;
      const known = this._cwds.get(pane);
      if (known !== cwd) {
        this._cwds.set(pane, cwd);
        this._stateChanged.emit();
      }
    }, this);
    pane.ended.connect(
      (_, reason: EndReason) => this._onPaneEnded(pane, reason),
      this
    );
    return pane;
  }

  private _createSplit(orientation: 'horizontal' | 'vertical'): SplitPanel {
    const split = new SplitPanel({ orientation, spacing: 1 });
    split.addClass(CSS.split);
    split.handleMoved.connect(() => this._stateChanged.emit(), this);
    return split;
  }

  private _setRoot(root: Widget): void {
    const layout = this.layout as BoxLayout;
    if (this._root) {
      layout.removeWidget(this._root);
    }
    this._root = root;
    BoxLayout.setStretch(root, 1);
    layout.addWidget(root);
    this._afterLayoutChange();
  }

  /**
   * Put `replacement` where `old` is (same index and share of its split).
   *
   * `old` leaves its parent by `parent = null` (never `removeWidget` on a
   * widget that was moved away: Lumino would remove the last one instead).
   */
  private _replace(old: Widget, replacement: Widget): void {
    const parent = old.parent;
    if (parent instanceof SplitPanel) {
      const index = parent.widgets.indexOf(old);
      const sizes = parent.relativeSizes();
      parent.insertWidget(index, replacement);
      old.parent = null;
      parent.setRelativeSizes(sizes);
    } else {
      BoxLayout.setStretch(replacement, 1);
      (this.layout as BoxLayout).addWidget(replacement);
      old.parent = null;
      this._root = replacement;
    }
  }

  private _onPaneEnded(pane: TerminalPane, reason: EndReason): void {
    // The shell exited or the session was closed elsewhere: like a terminal
    // multiplexer, the pane goes; a session the server lost restarts.
    if (reason === 'gone') {
      void this._restart(pane);
      return;
    }
    this.closePane(pane);
  }

  private async _restart(pane: TerminalPane): Promise<void> {
    const model = await this._services.openSession({ cwd: pane.model.cwd });
    if (pane.isDisposed || this.isDisposed) {
      model.dispose();
      return;
    }
    const fresh = this._createPane(model);
    this._replace(pane, fresh);
    if (this._active === pane) {
      this._active = fresh;
    }
    pane.dispose();
    this._afterLayoutChange();
  }

  private _disposePane(pane: TerminalPane): void {
    this._endSession(pane);
    this._cwds.delete(pane);
    pane.dispose();
  }

  private _endSession(pane: TerminalPane): void {
    if (!pane.detached && pane.model.status !== 'ended') {
      this._services.closeSession(pane.model.id);
    }
  }

  private _afterLayoutChange(): void {
    this.toggleClass(CSS.multiPane, this.panes.length > 1);
    this._markActive();
    this._updateTitle();
    this._stateChanged.emit();
  }

  private _markActive(): void {
    const active = this.activePane;
    for (const pane of this.panes) {
      pane.toggleClass(CSS.activePane, pane === active);
    }
  }

  private _updateTitle(): void {
    const pane = this.activePane;
    if (!pane) {
      return;
    }
    const trans = this._services.trans;
    const model = pane.model;
    const count = this.panes.length;
    this.title.label =
      count > 1
        ? trans.__('%1 (+%2)', model.name, String(count - 1))
        : model.name;
    this.title.caption = [model.title, model.cwd].filter(Boolean).join('\n');
  }

  private readonly _services: IPanelServices;
  private _root: Widget | null = null;
  private _active: TerminalPane | null = null;
  private readonly _cwds = new WeakMap<TerminalPane, string>();
  private readonly _stateChanged = new Signal<this, void>(this);
}

/**
 * A namespace for TerminalPanel statics.
 */
export namespace TerminalPanel {
  export interface IOptions {
    services: IPanelServices;
    /** The id of a restored tab. */
    id?: string;
  }
}

namespace Private {
  let counter = 0;

  export function nextId(): string {
    counter++;
    return `${Date.now().toString(36)}-${counter}`;
  }

  export function panesOf(widget: Widget): TerminalPane[] {
    if (widget instanceof TerminalPane) {
      return [widget];
    }
    if (widget instanceof SplitPanel) {
      return widget.widgets.flatMap(panesOf);
    }
    return [];
  }

  export function save(widget: Widget): LayoutState | null {
    if (widget instanceof TerminalPane) {
      if (widget.detached) {
        return null;
      }
      return { type: 'pane', session: widget.model.id, cwd: widget.model.cwd };
    }
    if (widget instanceof SplitPanel) {
      const sizes = widget.relativeSizes();
      const children: LayoutState[] = [];
      const kept: number[] = [];
      widget.widgets.forEach((child, index) => {
        const node = save(child);
        if (node) {
          children.push(node);
          kept.push(sizes[index] ?? 1);
        }
      });
      if (children.length === 0) {
        return null;
      }
      if (children.length === 1) {
        return children[0];
      }
      return {
        type: 'split',
        orientation: widget.orientation,
        sizes: kept,
        children
      };
    }
    return null;
  }
}
