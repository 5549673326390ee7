/**
 * One terminal session as a view knows it: its stream connection and the
 * state the server reports (phase, full-screen, folder, title).
 */
import type { ServerConnection } from '@jupyterlab/services';
import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  getSession,
  streamRefusal,
  streamURL,
  type IBlock,
  type ITerminalSession,
  type ShellPhase,
  type ClientMessage,
  type SignalName,
  type StreamMessage
} from '../api/pty';
import { isServerMessage, type ServerMessage } from '../api/preview';
import { TeraxAPIError } from '../api/request';

/**
 * Where the stream connection is. `refused`: the server turned the view
 * away (too many views or connections, {@link TerminalSessionModel.refusal}
 * says which); it does not retry until {@link TerminalSessionModel.connect}.
 */
export type ConnectionStatus =
  'idle' | 'connecting' | 'connected' | 'reconnecting' | 'refused' | 'ended';

/**
 * Why a session ended for this view.
 */
export type EndReason = 'exit' | 'closed' | 'gone';

/**
 * Output bytes, and whether they are the scrollback replay that follows an
 * attach (it comes in several chunks; `last` marks its end, with no data).
 */
export interface IOutputChunk {
  data: Uint8Array;
  replay: boolean;
  last?: boolean;
}

const RETRY_DELAYS_MS = [250, 500, 1000, 2000, 4000, 8000];

/**
 * The model of one session in one view.
 */
export class TerminalSessionModel implements IDisposable {
  constructor(options: TerminalSessionModel.IOptions) {
    this._session = { ...options.session };
    this._settings = options.settings;
  }

  get id(): string {
    return this._session.id;
  }

  get name(): string {
    return this._session.name;
  }

  get shell(): string {
    return this._session.shell;
  }

  get cwd(): string {
    return this._session.cwd;
  }

  get title(): string {
    return this._session.title;
  }

  get phase(): ShellPhase {
    return this._session.phase;
  }

  get altScreen(): boolean {
    return this._session.alt_screen;
  }

  get integrated(): boolean {
    return this._session.integrated;
  }

  get exited(): boolean {
    return this._session.exited;
  }

  /**
   * The secret the shell integration's marks carry in this session.
   */
  get nonce(): string {
    return this._nonce;
  }

  get status(): ConnectionStatus {
    return this._status;
  }

  /**
   * Why the server refused this view (the `refused` status), for the user.
   */
  get refusal(): string {
    return this._refusal;
  }

  /**
   * A command runs, or a full-screen program owns the screen.
   */
  get busy(): boolean {
    return this._session.phase === 'running' || this._session.alt_screen;
  }

  /**
   * Whether the editor-like input line should show: the shell integration
   * works, the shell waits at its prompt and no program owns the screen.
   */
  get acceptsInput(): boolean {
    const s = this._session;
    return (
      s.integrated &&
      (s.phase === 'prompt' || s.phase === 'input') &&
      !s.alt_screen &&
      !s.exited &&
      this._status === 'connected'
    );
  }

  /**
   * Anything above changed.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * The server (re)attached this view; the replay follows. A view resets
   * its screen here.
   */
  get attached(): ISignal<this, ITerminalSession> {
    return this._attached;
  }

  get output(): ISignal<this, IOutputChunk> {
    return this._output;
  }

  /**
   * A block started or ended.
   */
  get blockChanged(): ISignal<this, { event: 'start' | 'end'; block: IBlock }> {
    return this._blockChanged;
  }

  /**
   * Something to tell the user (skipped output, a program's notification).
   */
  get notice(): ISignal<this, string> {
    return this._notice;
  }

  /**
   * A dev server the session started was found, or has stopped.
   */
  get serverDetected(): ISignal<this, ServerMessage> {
    return this._serverDetected;
  }

  /**
   * The session is over for this view: its shell exited, someone closed it,
   * or the server no longer knows it.
   */
  get ended(): ISignal<this, EndReason> {
    return this._ended;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Open the stream; the server replays the scrollback, then streams.
   */
  connect(size: { columns: number; rows: number }): void {
    if (this._isDisposed || this._status === 'ended') {
      return;
    }
    this._size = size;
    this._attempt = 0;
    this._refusal = '';
    this._open(false);
  }

  /**
   * Close the stream (the session lives on).
   */
  disconnect(): void {
    this._clearRetry();
    this._closeSocket();
    if (this._status !== 'ended') {
      this._setStatus('idle');
    }
  }

  /**
   * Send keystrokes or text to the shell (UTF-8, as a binary frame).
   */
  send(data: string | Uint8Array): void {
    const socket = this._socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      return;
    }
    socket.send(typeof data === 'string' ? ENCODER.encode(data) : data);
  }

  /**
   * The view has shown `bytes` more bytes of output (the stream was opened
   * with acknowledgements: the server paces the program by them).
   */
  acknowledge(bytes: number): void {
    if (bytes > 0) {
      this._sendControl({ type: 'ack', bytes });
    }
  }

  resize(columns: number, rows: number): void {
    this._size = { columns, rows };
    this._sendControl({ type: 'resize', columns, rows });
  }

  /**
   * Send a signal to the foreground process group (`INT`, `TERM`, ...).
   */
  signal(name: SignalName): void {
    this._sendControl({ type: 'signal', name });
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._clearRetry();
    this._closeSocket();
    Signal.clearData(this);
  }

  private _open(retry: boolean): void {
    this._closeSocket();
    this._setStatus(retry ? 'reconnecting' : 'connecting');
    const socket = new this._settings.WebSocket(
      streamURL(this.id, this._size, this._settings)
    );
    socket.binaryType = 'arraybuffer';
    socket.onopen = () => {
      // The view may have been resized while the socket was opening.
      this._sendControl({ type: 'resize', ...this._size });
    };
    socket.onmessage = event => this._onMessage(event);
    socket.onclose = () => {
      if (this._socket === socket) {
        this._socket = null;
        this._onClose();
      }
    };
    this._socket = socket;
    this._wasAttached = false;
  }

  private _onMessage(event: MessageEvent): void {
    if (typeof event.data !== 'string') {
      const data = new Uint8Array(event.data as ArrayBuffer);
      this._output.emit({ data, replay: this._replaying });
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    const typed = message as StreamMessage;
    if (isServerMessage(typed)) {
      this._serverDetected.emit(typed);
      return;
    }
    this._handle(typed);
  }

  private _handle(message: StreamMessage): void {
    const session = this._session;
    switch (message.type) {
      case 'attached':
        this._session = { ...message.session };
        this._nonce = message.nonce;
        this._attempt = 0;
        this._wasAttached = true;
        // The replay comes next, in chunks, until `replayed`.
        this._replaying = true;
        this._setStatus('connected', false);
        this._attached.emit(this._session);
        break;
      case 'block':
        if (message.event === 'start') {
          session.phase = 'running';
          session.blocks++;
        }
        this._blockChanged.emit({ event: message.event, block: message.block });
        break;
      case 'prompt':
        session.phase = 'prompt';
        session.integrated = true;
        break;
      case 'input':
        session.phase = 'input';
        session.integrated = true;
        break;
      case 'cwd':
        session.cwd = message.cwd;
        break;
      case 'title':
        session.title = message.title;
        break;
      case 'alt_screen':
        session.alt_screen = message.active;
        break;
      case 'renamed':
        session.name = message.name;
        break;
      case 'replayed':
        this._replaying = false;
        this._output.emit({
          data: new Uint8Array(0),
          replay: true,
          last: true
        });
        return;
      case 'notice':
      case 'notify':
        this._notice.emit(message.message);
        return;
      case 'exit':
        session.exited = true;
        session.exit_code = message.code;
        this._end('exit');
        return;
      case 'closed':
        this._end('closed');
        return;
      default:
        return;
    }
    this._changed.emit();
  }

  private _onClose(): void {
    if (this._isDisposed || this._status === 'ended') {
      return;
    }
    if (this._status === 'idle') {
      return;
    }
    this._setStatus('reconnecting');
    const delay =
      RETRY_DELAYS_MS[Math.min(this._attempt, RETRY_DELAYS_MS.length - 1)];
    this._attempt++;
    this._retryTimer = setTimeout(() => {
      this._retryTimer = null;
      void this._retry();
    }, delay);
  }

  private async _retry(): Promise<void> {
    try {
      const session = await getSession(this.id, this._settings);
      if (this._isDisposed || this._status !== 'reconnecting') {
        return;
      }
      this._session = { ...session };
      if (!this._wasAttached) {
        // The handshake failed, and a browser does not say why: ask the server.
        const refusal = await streamRefusal(this.id, this._settings);
        if (this._isDisposed || this._status !== 'reconnecting') {
          return;
        }
        if (refusal) {
          this._refuse(refusal.message);
          return;
        }
      }
      this._open(true);
    } catch (error) {
      if (this._isDisposed || this._status !== 'reconnecting') {
        return;
      }
      if (error instanceof TeraxAPIError && error.response.status === 404) {
        this._end('gone');
      } else {
        this._onClose();
      }
    }
  }

  private _refuse(message: string): void {
    this._clearRetry();
    this._refusal = message;
    this._replaying = false;
    this._setStatus('refused');
    this._notice.emit(message);
  }

  private _end(reason: EndReason): void {
    if (this._status === 'ended') {
      return;
    }
    this._clearRetry();
    this._setStatus('ended', false);
    this._changed.emit();
    this._ended.emit(reason);
    this._closeSocket();
  }

  private _sendControl(message: ClientMessage): void {
    const socket = this._socket;
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(message));
    }
  }

  private _setStatus(status: ConnectionStatus, emit = true): void {
    if (this._status !== status) {
      this._status = status;
      if (emit) {
        this._changed.emit();
      }
    }
  }

  private _closeSocket(): void {
    const socket = this._socket;
    this._socket = null;
    if (socket) {
      socket.onopen = null;
      socket.onmessage = null;
      socket.onclose = null;
      socket.close();
    }
  }

  private _clearRetry(): void {
    if (this._retryTimer !== null) {
      clearTimeout(this._retryTimer);
      this._retryTimer = null;
    }
  }

  private _session: ITerminalSession;
  private readonly _settings: ServerConnection.ISettings;
  private _nonce = '';
  private _status: ConnectionStatus = 'idle';
  private _socket: WebSocket | null = null;
  private _size = { columns: 80, rows: 24 };
  private _replaying = false;
  private _wasAttached = false;
  private _refusal = '';
  private _attempt = 0;
  private _retryTimer: ReturnType<typeof setTimeout> | null = null;
  private _isDisposed = false;
  private readonly _changed = new Signal<this, void>(this);
  private readonly _attached = new Signal<this, ITerminalSession>(this);
  private readonly _output = new Signal<this, IOutputChunk>(this);
  private readonly _blockChanged = new Signal<
    this,
    { event: 'start' | 'end'; block: IBlock }
  >(this);
  private readonly _notice = new Signal<this, string>(this);
  private readonly _serverDetected = new Signal<this, ServerMessage>(this);
  private readonly _ended = new Signal<this, EndReason>(this);
}

/**
 * A namespace for TerminalSessionModel statics.
 */
export namespace TerminalSessionModel {
  export interface IOptions {
    /** The session as the server described it. */
    session: ITerminalSession;
    settings: ServerConnection.ISettings;
  }
}

const ENCODER = new TextEncoder();
