/**
 * One terminal pane: an xterm (WebGL when a renderer is free) on one session,
 * with command blocks, the input line, a find bar and the blocks outline.
 */
import type { ServerConnection } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import { UUID } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';
import type { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import { Panel, PanelLayout, Widget } from '@lumino/widgets';
import type { FitAddon } from '@xterm/addon-fit';
import type { SearchAddon } from '@xterm/addon-search';
import type {
  IDisposable as ITerminalDisposable,
  Terminal
} from '@xterm/xterm';

import { listFolder } from '../api/fs';
import { listBlocks, suggestCommands } from '../api/pty';
import { routeKey } from '../common/terminal/keys';
import { isTerminalReport } from '../common/terminal/reports';
import { droppedPaths } from '../common/terminal/shell';
import { BlocksAddon, type BlockAction, type BlockEntry } from './blocks';
import { CSS } from './css';
import { FileDropTarget } from './drop';
import { FindBar } from './findbar';
import { FitScheduler } from './fitting';
import { HibernationTimer } from './hibernation';
import { CommandInput } from './inputline';
import type { EndReason, IOutputChunk, TerminalSessionModel } from './model';
import { BlockOutline } from './outline';
import type { RendererManager } from './renderers';
import { terminalTheme } from './theme';
import { OutputWriter } from './writer';
import {
  configureTerminal,
  createTerminal,
  openLink,
  WebglRenderer
} from './xterm';

/**
 * Terminal settings (from the settings registry).
 */
export interface ITerminalConfig {
  fontFamily: string;
  fontSize: number;
  lineHeight: number;
  scrollback: number;
  cursorBlink: boolean;
  /** Ctrl+V pastes (outside full-screen programs). */
  pasteWithCtrlV: boolean;
  /** Minutes a hidden idle pane keeps its xterm (0: for ever). */
  hibernateAfterMinutes: number;
}

/**
 * What panes share.
 */
export interface IPaneServices {
  serverSettings: ServerConnection.ISettings;
  trans: TranslationBundle;
  renderers: RendererManager;
  config: () => ITerminalConfig;
  /** The server's root folder (absolute), for dropped files. */
  serverRoot: () => Promise<string>;
}

/**
 * A terminal pane.
 */
export class TerminalPane extends Widget {
  constructor(options: TerminalPane.IOptions) {
    super();
    this.model = options.model;
    this._services = options.services;
    const trans = this._services.trans;
    this.id = `terax-pane-${UUID.uuid4()}`;
    this.addClass(CSS.pane);
    this.node.dataset.sessionId = this.model.id;
    this.node.tabIndex = -1;

    this._gutter = document.createElement('div');
    this._gutter.className = CSS.gutter;
    this._gutter.setAttribute('aria-hidden', 'true');
    this._screen = document.createElement('div');
    this._screen.className = `${CSS.host}-screen`;
    const host = new Widget();
    host.addClass(CSS.host);
    host.node.append(this._gutter, this._screen);
    this._status = new Widget();
    this._status.addClass(CSS.status);
    this._status.node.setAttribute('role', 'status');
    this._status.node.addEventListener('click', () => this._retryRefused());

    const font = this._services.config();
    this.input = new CommandInput({
      trans,
      font,
      cwd: () => this.model.cwd,
      history: async (typed, limit, signal) =>
        (
          await suggestCommands(
            typed,
            { limit, signal },
            this._services.serverSettings
          )
        ).map(s => s.command),
      listFolder: async path =>
        (await listFolder(path, { settings: this._services.serverSettings }))
          .entries,
      onSubmit: text => this.runCommand(text, false),
      onKeys: data => this.model.send(data),
      onReverseSearch: () => {
        // The shell's own search runs in the terminal until the next prompt.
        this._rawAtPrompt = true;
        this.model.send('\x12');
        this._terminal?.focus();
      }
    });

    this.outline = new BlockOutline({
      trans,
      onReveal: entry => this._blocks?.select(entry, true),
      onAction: (action, entry) => this._requestAction(action, entry),
      sessionId: () => this.model.id,
      serverSettings: this._services.serverSettings,
      exitCode: entry => this._blocks?.exitCodeOf(entry),
      duration: entry => this._blocks?.durationOf(entry) ?? null
    });
    this.outline.hide();

    const body = new Panel();
    body.addClass(CSS.body);
    body.addWidget(host);
    body.addWidget(this.outline);
    const layout = new PanelLayout();
    layout.addWidget(body);
    layout.addWidget(this.input);
    layout.addWidget(this._status);
    this.layout = layout;
    this._gpuRegistration = this._services.renderers.register(this.id, {
      attachGpu: () => this._attachGpu(),
      detachGpu: () => this._detachGpu()
    });

    this.model.changed.connect(this._onModelChanged, this);
    this.model.attached.connect(this._onAttached, this);
    this.model.output.connect(this._onOutput, this);
    this.model.blockChanged.connect(
      (_, { event, block }) => this._blocks?.onServerBlock(event, block),
      this
    );
    this.model.ended.connect((_, reason) => this._ended.emit(reason), this);

    this._drop = new FileDropTarget(this.node, {
      className: CSS.dropTarget,
      onDrop: paths => void this._onDrop(paths)
    });
    this.node.addEventListener('focusin', this);
    this.node.addEventListener('mouseup', this);
    this.node.addEventListener('contextmenu', this);
    this._setLineVariable(font);
  }

  /**
   * The session this pane shows.
   */
  readonly model: TerminalSessionModel;

  /**
   * The editor-like input line.
   */
  readonly input: CommandInput;

  /**
   * The blocks outline (hidden until toggled).
   */
  readonly outline: BlockOutline;

  /**
   * Detached panes leave their session running when they close.
   */
  detached = false;

  /**
   * Takes a Ctrl/Cmd+clicked link (true: taken); else it opens in a new
   * browser tab.
   */
  linkHandler: ((uri: string) => boolean) | null = null;

  /**
   * The pane got the focus.
   */
  get focused(): ISignal<this, void> {
    return this._focused;
  }

  /**
   * The session ended (exit, closed elsewhere, or gone).
   */
  get ended(): ISignal<this, EndReason> {
    return this._ended;
  }

  /**
   * A block header or the outline asked for an action.
   */
  get actionRequested(): ISignal<
    this,
    { action: BlockAction; entry: BlockEntry }
  > {
    return this._actionRequested;
  }

  /**
   * The session's name, folder or title changed.
   */
  get stateChanged(): ISignal<this, void> {
    return this._stateChanged;
  }

  /**
   * The blocks of the terminal (null while the pane hibernates).
   */
  get blocks(): BlocksAddon | null {
    return this._blocks;
  }

  /**
   * The xterm (null while the pane hibernates).
   */
  get terminal(): Terminal | null {
    return this._terminal;
  }

  /**
   * Whether the xterm was disposed to save memory (hidden and idle).
   */
  get hibernating(): boolean {
    return this._hibernating;
  }

  /**
   * Whether this pane draws with WebGL now.
   */
  get gpu(): boolean {
    return this._webgl?.active ?? false;
  }

  handleEvent(event: Event): void {
    switch (event.type) {
      case 'focusin':
        this._focused.emit();
        break;
      case 'mouseup':
        this._onMouseUp(event as MouseEvent);
        break;
      case 'contextmenu':
        this._contextBlock = this.blockAt((event as MouseEvent).clientY);
        break;
    }
  }

  /**
   * Type a command at the prompt and run it: a bracketed paste (so a
   * multi-line command stays one) when the shell asked for it, then Enter.
   */
  runCommand(text: string, remember = true): void {
    if (remember) {
      this.input.remember(text);
    }
    const bracketed =
      (text.includes('\n') || text.includes('\t')) &&
      this._terminal?.modes.bracketedPasteMode;
    const body = bracketed
      ? `\x1b[200~${text}\x1b[201~`
      : text.replace(/\n/g, '\r');
    this.model.send(body + '\r');
  }

  /**
   * Paste text as the terminal would (bracketed when the program asked).
   */
  paste(text: string): void {
    if (this._inputShown() && this.input.hasFocus) {
      this.input.value = this.input.value + text;
      return;
    }
    this._terminal?.paste(text);
  }

  /**
   * The selected text of the terminal.
   */
  get selection(): string {
    return this._terminal?.getSelection() ?? '';
  }

  /**
   * Clear the scrollback (the current line stays).
   */
  clear(): void {
    this._terminal?.clear();
  }

  /**
   * Show the find bar.
   */
  find(): void {
    this._ensureTerminal();
    this._findBar?.open(this._terminal?.getSelection());
  }

  /**
   * Select and show the block before or after the current one.
   */
  jump(delta: -1 | 1): boolean {
    return this._blocks?.jump(delta) ?? false;
  }

  /**
   * Show or hide the blocks outline.
   */
  toggleOutline(show?: boolean): void {
    const visible = show ?? this.outline.isHidden;
    this.outline.setHidden(!visible);
    this.toggleClass('jp-mod-outline', visible);
    this._fitter.schedule();
  }

  /**
   * The block under the mouse when the context menu opened.
   */
  get contextBlock(): BlockEntry | null {
    const entry = this._contextBlock;
    return entry && this._blocks?.ledger.entries.includes(entry) ? entry : null;
  }

  /**
   * The block under a point of the screen, else the selected or last one.
   */
  blockAt(clientY?: number): BlockEntry | null {
    const blocks = this._blocks;
    if (!blocks) {
      return null;
    }
    return (
      (clientY !== undefined ? blocks.blockAtPoint(clientY) : null) ??
      blocks.selected ??
      blocks.last
    );
  }

  /**
   * Apply the terminal settings.
   */
  applyConfig(): void {
    const config = this._services.config();
    this.input.setFont(config);
    this._setLineVariable(config);
    if (this._terminal) {
      configureTerminal(this._terminal, config);
      this._fitter.schedule();
    }
  }

  /**
   * Follow Lab's theme.
   */
  applyTheme(): void {
    if (this._terminal) {
      this._terminal.options.theme = terminalTheme();
    }
  }

  /**
   * Dispose the xterm and close the stream; the session lives on and the
   * server replays it when the pane wakes.
   */
  hibernate(): void {
    if (this._hibernating || !this._terminal || this.model.busy) {
      return;
    }
    this._hibernating = true;
    this.model.disconnect();
    this._disposeTerminal();
    this._render();
  }

  /**
   * Focus the input line at the prompt, else the terminal.
   */
  focus(): void {
    this._ensureTerminal();
    if (this._inputShown()) {
      this.input.focus();
    } else {
      this._terminal?.focus();
    }
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._hibernation.cancel();
    this._drop.dispose();
    this._fitter.unobserve();
    this._gpuRegistration.dispose();
    this._disposeTerminal();
    this.model.dispose();
    super.dispose();
  }

  protected override onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._fitter.observe(this._screen);
    if (this.isVisible) {
      this._ensureTerminal();
    }
  }

  protected override onBeforeDetach(msg: Message): void {
    this._fitter.unobserve();
    super.onBeforeDetach(msg);
  }

  protected override onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._hibernation.cancel();
    this._ensureTerminal();
    this._services.renderers.shown(this.id);
    this._fitter.schedule();
  }

  protected override onBeforeHide(msg: Message): void {
    super.onBeforeHide(msg);
    this._services.renderers.hidden(this.id);
    this._hibernation.schedule();
  }

  protected override onResize(msg: Widget.ResizeMessage): void {
    super.onResize(msg);
    this._fitter.schedule();
  }

  protected override onActivateRequest(msg: Message): void {
    super.onActivateRequest(msg);
    this.focus();
  }

  private _ensureTerminal(): void {
    if (this._terminal || !this.isAttached || this.isDisposed) {
      return;
    }
    this._hibernating = false;
    const { terminal, fit, search } = createTerminal(
      this._services.config(),
      this.model.shell,
      (event, uri) => {
        if ((event.ctrlKey || event.metaKey) && !this.linkHandler?.(uri)) {
          openLink(event, uri);
        }
      }
    );
    this._fit = fit;
    this._search = search;
    this._webgl = new WebglRenderer(terminal, () => {
      this.node.dataset.renderer = 'dom';
      this._services.renderers.lost(this.id);
    });
    const blocks = new BlocksAddon({
      nonce: () => this.model.nonce,
      trans: this._services.trans,
      gutter: this._gutter
    });
    terminal.loadAddon(blocks);
    blocks.actionRequested.connect(
      (_, { action, entry }) => this._requestAction(action, entry),
      this
    );
    blocks.changed.connect(() => {
      this.outline.refresh();
      this._renderStatus();
    }, this);
    this._blocks = blocks;
    this.outline.setBlocks(blocks);

    terminal.attachCustomKeyEventHandler(event => this._onTerminalKey(event));
    this._terminalDisposables = [
      terminal.onData(data => this._onTerminalData(data)),
      terminal.onBinary(data => this.model.send(binaryString(data))),
      terminal.onResize(({ cols, rows }) => this.model.resize(cols, rows))
    ];
    terminal.open(this._screen);
    this._terminal = terminal;
    this._writer = new OutputWriter(terminal, bytes =>
      this.model.acknowledge(bytes)
    );

    this._findBar = new FindBar({
      search: this._search,
      trans: this._services.trans,
      onClose: () => this.focus()
    });
    (this.layout as PanelLayout).addWidget(this._findBar);

    if (this.isVisible) {
      this._services.renderers.shown(this.id);
    }
    this._fitNow();
    this._render();
  }

  /**
   * Fit the terminal to its box, and open the stream once the box has a
   * size (the server replays at the size it is told, so never at 2x1).
   */
  private _fitNow(): void {
    const terminal = this._terminal;
    if (
      !terminal ||
      !this.isVisible ||
      this._screen.clientWidth === 0 ||
      this._screen.clientHeight === 0
    ) {
      return;
    }
    try {
      this._fit?.fit();
    } catch {
      // The renderer was between states; the next resize fits again.
    }
    if (this.model.status === 'idle') {
      this.model.connect({ columns: terminal.cols, rows: terminal.rows });
    }
  }

  /**
   * The server refused this view (too many views or connections): a click on
   * the status line asks again.
   */
  private _retryRefused(): void {
    const terminal = this._terminal;
    if (this.model.status === 'refused' && terminal) {
      this.model.connect({ columns: terminal.cols, rows: terminal.rows });
    }
  }

  private _disposeTerminal(): void {
    this._fitter.cancel();
    this._writer?.dispose();
    this._writer = null;
    this._detachGpu();
    this._services.renderers.lost(this.id);
    for (const disposable of this._terminalDisposables) {
      disposable.dispose();
    }
    this._terminalDisposables = [];
    this._findBar?.dispose();
    this._findBar = null;
    this.outline.setBlocks(null);
    this._blocks = null;
    this._terminal?.dispose();
    this._terminal = null;
    this._webgl = null;
    this._fit = null;
    this._search = null;
    this._gutter.replaceChildren();
  }

  private _attachGpu(): boolean {
    const webgl = this._webgl;
    if (!webgl) {
      return true;
    }
    const ok = webgl.attach();
    this.node.dataset.renderer = webgl.active ? 'webgl' : 'dom';
    return ok;
  }

  private _detachGpu(): void {
    this._webgl?.detach();
    this.node.dataset.renderer = 'dom';
  }

  private _onAttached(
    _: TerminalSessionModel,
    session: { blocks: number }
  ): void {
    const writer = this._writer;
    const blocks = this._blocks;
    if (!writer || !blocks) {
      return;
    }
    const generation = ++this._attachGeneration;
    blocks.reset(session.blocks);
    // Marks xterm has yet to parse from the last connection are stale.
    blocks.suspend();
    writer.restart(() => blocks.resume());
    if (session.blocks > 0) {
      void listBlocks(this.model.id, this._services.serverSettings)
        .then(list => {
          if (
            generation === this._attachGeneration &&
            this._blocks === blocks
          ) {
            blocks.setServerBlocks(list);
          }
        })
        .catch(() => undefined);
    }
  }

  /**
   * What xterm sends: keys, pastes and its answers to queries in the output.
   * Answers to replayed output are dropped: the shell would get them as typed
   * text (`10;rgb:...` at the prompt after vim ran, on every reload).
   */
  private _onTerminalData(data: string): void {
    if (this._writer?.replaying && isTerminalReport(data)) {
      return;
    }
    this.model.send(data);
  }

  private _onOutput(_: TerminalSessionModel, chunk: IOutputChunk): void {
    const writer = this._writer;
    const terminal = this._terminal;
    if (!writer || !terminal) {
      return;
    }
    if (chunk.replay) {
      const blocks = this._blocks;
      // The replay comes in chunks; the marks in it count as replayed until
      // xterm has parsed the last one.
      writer.writeReplay(chunk.data, () => {
        if (chunk.last) {
          blocks?.endReplay();
          terminal.scrollToBottom();
        }
      });
    } else {
      writer.write(chunk.data);
    }
  }

  private _onModelChanged(): void {
    if (this.model.phase !== this._lastPhase) {
      this._lastPhase = this.model.phase;
      if (this.model.phase !== 'input') {
        this._rawAtPrompt = false;
      }
    }
    this._render();
    this._stateChanged.emit();
  }

  /**
   * Show the input line at the prompt, a status line while a command runs,
   * nothing under a full-screen program or without shell integration.
   */
  private _render(): void {
    const model = this.model;
    const showInput = this._inputShown();
    const hadFocus = this.node.contains(document.activeElement);
    this.input.setHidden(!showInput);
    this._renderStatus();
    this.node.dataset.phase = model.phase;
    this.node.dataset.altScreen = String(model.altScreen);
    this.node.dataset.integrated = String(model.integrated);
    if (hadFocus && this._terminal) {
      const findOpen = this._findBar?.isOpen ?? false;
      if (
        showInput &&
        !this.input.hasFocus &&
        !findOpen &&
        !this._rawAtPrompt
      ) {
        this.input.focus();
      } else if (!showInput && !findOpen) {
        // The input line hid with the focus in it: keys go to the program.
        this._terminal.focus();
      }
    }
    this._fitter.schedule();
  }

  /**
   * The line that stands in for the input line: the running command, or
   * the state of the connection.
   */
  private _renderStatus(): void {
    const model = this.model;
    const trans = this._services.trans;
    const node = this._status.node;
    let state = '';
    let message = '';
    let command = '';
    if (model.status === 'reconnecting' || model.status === 'connecting') {
      state = 'connecting';
      message =
        model.status === 'connecting'
          ? trans.__('Connecting…')
          : trans.__('Reconnecting…');
    } else if (model.status === 'refused') {
      state = 'refused';
      message = `${model.refusal} ${trans.__('Click here to try again.')}`;
    } else if (model.status === 'ended') {
      state = 'ended';
      message = model.exited
        ? trans.__('The shell exited.')
        : trans.__('This terminal session has ended.');
    } else if (this._hibernating) {
      state = 'idle';
      message = trans.__('Sleeping: the terminal reconnects when shown.');
    } else if (
      model.integrated &&
      model.phase === 'running' &&
      !model.altScreen
    ) {
      state = 'running';
      command = this._blocks?.ledger.running?.command ?? '';
      message = trans.__('keys go to the program · Ctrl+C interrupts');
    }
    if (node.dataset.state !== state || node.dataset.command !== command) {
      node.dataset.state = state;
      node.dataset.command = command;
      node.replaceChildren();
      if (command) {
        const code = document.createElement('code');
        code.textContent =
          command.length > 80 ? command.slice(0, 79) + '…' : command;
        node.append(code);
      }
      const text = document.createElement('span');
      text.textContent = command ? `· ${message}` : message;
      node.append(text);
    }
    this._status.setHidden(this._inputShown() || !message);
  }

  private _inputShown(): boolean {
    return this.model.acceptsInput && this._terminal !== null;
  }

  private _onTerminalKey(event: KeyboardEvent): boolean {
    const terminal = this._terminal;
    if (!terminal) {
      return true;
    }
    const route = routeKey(event, {
      hasSelection: terminal.hasSelection(),
      fullScreen: this.model.altScreen,
      pasteWithCtrlV: this._services.config().pasteWithCtrlV,
      inputShown: this._inputShown(),
      rawAtPrompt: this._rawAtPrompt
    });
    if (route === 'input') {
      // At the prompt, typing goes to the input line.
      this.input.focus();
    }
    return route === 'terminal';
  }

  private _onMouseUp(event: MouseEvent): void {
    if (event.button !== 0 || this._rawAtPrompt || !this._inputShown()) {
      return;
    }
    const target = event.target as HTMLElement;
    if (!this._screen.contains(target) || this._terminal?.hasSelection()) {
      return;
    }
    // A click on the terminal at the prompt means "type here".
    requestAnimationFrame(() => {
      if (!this._terminal?.hasSelection()) {
        this.input.focus();
      }
    });
  }

  /**
   * The input line and the status line share one height, so switching
   * between them does not resize the terminal.
   */
  private _setLineVariable(config: ITerminalConfig): void {
    this.node.style.setProperty(
      '--jp-terax-line',
      `${Math.ceil(config.fontSize * config.lineHeight)}px`
    );
  }

  private _requestAction(action: BlockAction, entry: BlockEntry): void {
    this._actionRequested.emit({ action, entry });
  }

  private async _onDrop(paths: string[]): Promise<void> {
    let root = '';
    try {
      root = await this._services.serverRoot();
    } catch {
      root = '';
    }
    const text = droppedPaths(paths, root);
    if (this._inputShown()) {
      const current = this.input.value;
      const separator = current && !current.endsWith(' ') ? ' ' : '';
      this.input.value = current + separator + text + ' ';
      this.input.focus();
    } else {
      this._terminal?.paste(text + ' ');
      this._terminal?.focus();
    }
  }

  private readonly _services: IPaneServices;
  private readonly _gutter: HTMLElement;
  private readonly _screen: HTMLElement;
  private readonly _status: Widget;
  private readonly _gpuRegistration: IDisposable;
  private readonly _drop: FileDropTarget;
  private _terminal: Terminal | null = null;
  private _terminalDisposables: ITerminalDisposable[] = [];
  private _fit: FitAddon | null = null;
  private _search: SearchAddon | null = null;
  private _webgl: WebglRenderer | null = null;
  private _blocks: BlocksAddon | null = null;
  private _findBar: FindBar | null = null;
  private _writer: OutputWriter | null = null;
  private readonly _fitter = new FitScheduler(
    () => this._fitNow(),
    () => this._terminal !== null
  );
  private readonly _hibernation = new HibernationTimer({
    afterMinutes: () => this._services.config().hibernateAfterMinutes,
    isVisible: () => this.isVisible,
    isDisposed: () => this.isDisposed,
    busy: () => this.model.busy,
    hibernate: () => this.hibernate()
  });
  private _hibernating = false;
  private _attachGeneration = 0;
  private _rawAtPrompt = false;
  private _contextBlock: BlockEntry | null = null;
  private _lastPhase = '';
  private readonly _focused = new Signal<this, void>(this);
  private readonly _ended = new Signal<this, EndReason>(this);
  private readonly _stateChanged = new Signal<this, void>(this);
  private readonly _actionRequested = new Signal<
    this,
    { action: BlockAction; entry: BlockEntry }
  >(this);
}

/**
 * A namespace for TerminalPane statics.
 */
export namespace TerminalPane {
  export interface IOptions {
    model: TerminalSessionModel;
    services: IPaneServices;
  }
}

/**
 * xterm's binary data (mouse reports in old encodings) as bytes.
 */
function binaryString(data: string): Uint8Array {
  const bytes = new Uint8Array(data.length);
  for (let index = 0; index < data.length; index++) {
    bytes[index] = data.charCodeAt(index) & 0xff;
  }
  return bytes;
}
