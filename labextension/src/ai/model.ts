/**
 * One AI session, live: loaded through REST, kept current by its events
 * WebSocket (reconnecting after the last event seen), with the actions the
 * panel offers (send, stop, approve, plan, rules).
 */
import type { ServerConnection } from '@jupyterlab/services';
import type { IDisposable } from '@lumino/disposable';
import { type ISignal, Signal } from '@lumino/signaling';

import {
  type AiApprovalStatus,
  applyPlan,
  cancelRun,
  decide,
  discardPlan,
  eventsURL,
  getMessages,
  getSession,
  getToolCalls,
  type IAiDecision,
  type IAiRule,
  type IAiSession,
  setRules,
  startReplay,
  startRun,
  updateSession
} from '../api/ai';
import { errorMessage, TeraxAPIError } from '../api/request';
import {
  applyEvent,
  buildChat,
  chatError,
  emptyChat,
  type IChatError,
  type IChatEvent,
  type IChatState,
  withError
} from '../common/ai/chat';
import { type IEventFeed, sessionEvents } from './events';
import { applyInOpenNotebook } from './review/notebookapply';

/**
 * Where the events connection is.
 */
/**
 * What "Continue with a higher limit" asks (the model sees its cut call's
 * "not run" result just before).
 */
export const CONTINUE_PROMPT =
  'Continue where you stopped. The output limit is higher now.';

export type ConnectionStatus = 'idle' | 'connecting' | 'open' | 'retrying';

const RETRY_MS = [500, 1000, 2000, 5000, 10000];

/**
 * The error of a failed request, for a banner.
 */
export function requestError(error: unknown): IChatError {
  if (error instanceof TeraxAPIError) {
    return chatError({ message: error.message, reason: error.reason });
  }
  return chatError({ message: errorMessage(error), reason: 'request_failed' });
}

/**
 * A live session.
 */
export class AiSessionModel implements IDisposable {
  constructor(options: AiSessionModel.IOptions) {
    this.id = options.id;
    this._settings = options.settings;
    this._state = emptyChat(options.id);
  }

  readonly id: string;

  /**
   * Emitted (at most once per frame) when anything shown changes.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Emitted when the server deleted the session.
   */
  get deleted(): ISignal<this, void> {
    return this._deleted;
  }

  /**
   * Emitted when a run ends (the session list may have a new title).
   */
  get runEnded(): ISignal<this, string> {
    return this._runEnded;
  }

  get state(): IChatState {
    return this._state;
  }

  /**
   * The session's fields as last loaded (title, provider, model, ...).
   */
  get session(): IAiSession | null {
    return this._session;
  }

  get loading(): boolean {
    return this._loading;
  }

  get connection(): ConnectionStatus {
    return this._connection;
  }

  /**
   * A request of the panel is in flight (sending, deciding, ...).
   */
  get busy(): boolean {
    return this._busy > 0;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Load the session and follow its events.
   */
  async load(): Promise<void> {
    this._loading = true;
    this._emit();
    try {
      await this._reload();
    } catch (error) {
      this._state = withError(this._state, requestError(error));
    } finally {
      this._loading = false;
      this._emit();
    }
    this._connect();
  }

  /**
   * Send a prompt (starts a run).
   */
  async send(
    prompt: string,
    options: { maxOutputTokens?: number } = {}
  ): Promise<boolean> {
    const text = prompt.trim();
    if (!text || this._state.running) {
      return false;
    }
    this._state = withError(this._state, null);
    const limit = options.maxOutputTokens;
    return this._request(async () => {
      await (limit !== undefined
        ? startRun(this.id, text, { max_output_tokens: limit })
        : startRun(this.id, text));
      // The run's events follow; make sure the socket is there for them.
      if (this._connection === 'idle') {
        this._connect();
      }
      if (!this._session?.title) {
        // The first prompt titles the session.
        this._session = await getSession(this.id);
      }
    });
  }

  /**
   * Replay a saved browser workflow (`/replay`): no model is asked.
   */
  async replay(
    workflow: string,
    inputs: Record<string, string>
  ): Promise<boolean> {
    if (this._state.running) {
      return false;
    }
    this._state = withError(this._state, null);
    return this._request(async () => {
      await startReplay(this.id, workflow, inputs);
      if (this._connection === 'idle') {
        this._connect();
      }
      if (!this._session?.title) {
        this._session = await getSession(this.id);
      }
    });
  }

  /**
   * Show a problem with what the user typed (nothing was sent).
   */
  showError(message: string, reason: string): void {
    this._state = withError(this._state, chatError({ message, reason }));
    this._emit();
  }

  /**
   * Continue a run the output limit cut off, with a higher limit for this
   * run only.
   */
  continueWithLimit(limit: number): Promise<boolean> {
    return this.send(CONTINUE_PROMPT, { maxOutputTokens: limit });
  }

  /**
   * Cancel the run.
   */
  stop(): Promise<boolean> {
    if (!this._state.running) {
      return Promise.resolve(false);
    }
    return this._request(() => cancelRun(this.id));
  }

  /**
   * Answer an approval.
   */
  decide(approvalId: string, decision: IAiDecision): Promise<boolean> {
    return this._request(async () => {
      const approval = this._state.approvals.find(a => a.id === approvalId);
      if (approval && decision.decision === 'approve') {
        // A notebook open in Lab takes its change itself (nothing is lost).
        await applyInOpenNotebook(approval, decision.hunks ?? null);
      }
      await decide(approvalId, decision);
    });
  }

  /**
   * Apply the queued plan (per-item decisions; approve by default).
   */
  applyPlan(decisions: Record<string, IAiDecision> = {}): Promise<boolean> {
    return this._request(async () => {
      for (const item of this._state.plan) {
        const decision = decisions[item.id] ?? { decision: 'approve' };
        if (decision.decision === 'approve') {
          // In order; an item the open notebook took stays made (the server
          // counts it as done) if a later one conflicts and nothing is sent.
          await applyInOpenNotebook(item, decision.hunks ?? null);
        }
      }
      await applyPlan(this.id, decisions);
    });
  }

  discardPlan(): Promise<boolean> {
    return this._request(async () => {
      await discardPlan(this.id);
    });
  }

  /**
   * Replace the auto-approve rules.
   */
  setRules(rules: IAiRule[]): Promise<boolean> {
    return this._request(async () => {
      this._session = await setRules(this.id, rules);
      this._changes++;
      this._state = { ...this._state, rules: this._session.rules };
    });
  }

  /**
   * Change the session's title, agent, provider, model or plan mode.
   */
  update(
    fields: Partial<
      Pick<IAiSession, 'title' | 'agent' | 'provider' | 'model' | 'plan_mode'>
    >
  ): Promise<boolean> {
    return this._request(async () => {
      this._session = await updateSession(this.id, fields);
      this._changes++;
      this._state = { ...this._state, planMode: this._session.plan_mode };
    });
  }

  setPlanMode(on: boolean): Promise<boolean> {
    return this.update({ plan_mode: on });
  }

  /**
   * Show an error the panel met (or null to dismiss the banner).
   */
  setError(error: IChatError | null): void {
    this._state = withError(this._state, error);
    this._emit();
  }

  /**
   * Hide the suggested command.
   */
  dismissSuggestion(): void {
    this._state = { ...this._state, suggestion: null };
    this._emit();
  }

  /**
   * Reload through REST (after missed events).
   */
  async refresh(): Promise<void> {
    try {
      await this._reload();
    } catch (error) {
      this._state = withError(this._state, requestError(error));
    }
    this._emit();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._closeSocket();
    this._endFeed();
    if (this._frame !== null) {
      cancelAnimationFrame(this._frame);
    }
    if (this._timer !== null) {
      clearTimeout(this._timer);
    }
    Signal.clearData(this);
  }

  /**
   * The status of an approval as this view knows it.
   */
  approvalStatus(approvalId: string): AiApprovalStatus | null {
    if (this._state.approvals.some(a => a.id === approvalId)) {
      return 'pending';
    }
    if (this._state.plan.some(a => a.id === approvalId)) {
      return 'queued';
    }
    return null;
  }

  private async _request(action: () => Promise<unknown>): Promise<boolean> {
    this._busy++;
    this._emit();
    try {
      await action();
      return true;
    } catch (error) {
      this._state = withError(this._state, requestError(error));
      return false;
    } finally {
      this._busy--;
      this._emit();
    }
  }

  private async _reload(): Promise<void> {
    const changes = this._changes;
    const loaded = await getSession(this.id);
    const [messages, records] = await Promise.all([
      getMessages(this.id),
      getToolCalls(this.id)
    ]);
    if (this._isDisposed) {
      return;
    }
    // A change the user made while this loaded (plan mode, rules, the model)
    // is newer than what was read: keep it.
    const newer = this._changes !== changes ? this._session : null;
    const session: IAiSession = newer
      ? {
          ...loaded,
          title: newer.title,
          agent: newer.agent,
          provider: newer.provider,
          model: newer.model,
          plan_mode: newer.plan_mode,
          rules: newer.rules
        }
      : loaded;
    this._session = session;
    const previous = this._state.turns.length ? this._state : undefined;
    this._state = buildChat(session, messages, records, previous);
    // Loaded in the middle of a run: the stored text may already hold some
    // of the events that follow, so read it again once the run ends.
    this._reloadAtFinish = session.run !== null;
  }

  private _connect(): void {
    if (this._isDisposed || this._socket || this._state.deleted) {
      return;
    }
    // A review of this session follows the frames of this socket.
    this._feed ??= sessionEvents.feed(this.id);
    const url = eventsURL(this.id, this._state.lastSeq, this._settings);
    const Socket = this._settings.WebSocket;
    const socket = new Socket(url);
    this._socket = socket;
    this._connection = this._retries ? 'retrying' : 'connecting';
    socket.onopen = () => {
      this._retries = 0;
      this._connection = 'open';
      this._emit();
    };
    socket.onmessage = message => {
      const frame = String(message.data);
      this._feed?.emit(frame);
      let event: IChatEvent;
      try {
        event = JSON.parse(frame) as IChatEvent;
      } catch {
        return;
      }
      this._onEvent(event);
    };
    socket.onclose = () => {
      if (this._socket !== socket) {
        return;
      }
      this._socket = null;
      if (this._isDisposed || this._state.deleted) {
        this._connection = 'idle';
        return;
      }
      this._retryLater();
    };
  }

  /**
   * Connect again after a drop: replay after the last event seen, unless
   * the server restarted (its numbering began again): then reload.
   */
  private async _reconnect(): Promise<void> {
    try {
      const session = await getSession(this.id);
      if (session.last_seq < this._state.lastSeq) {
        // A new numbering: following it from the old place would skip
        // events, so connect only once the reload succeeded.
        await this._reload();
        this._emit();
      }
    } catch {
      // Still unreachable (or the reload failed): try again later.
      if (!this._isDisposed && !this._state.deleted && !this._socket) {
        this._retryLater();
      }
      return;
    }
    this._connect();
  }

  /**
   * Schedule the next reconnect, backing off.
   */
  private _retryLater(): void {
    this._connection = 'retrying';
    const delay = RETRY_MS[Math.min(this._retries, RETRY_MS.length - 1)];
    this._retries++;
    this._emit();
    this._retryTimer = setTimeout(() => {
      this._retryTimer = null;
      void this._reconnect();
    }, delay);
  }

  private _closeSocket(): void {
    if (this._retryTimer !== null) {
      clearTimeout(this._retryTimer);
      this._retryTimer = null;
    }
    const socket = this._socket;
    this._socket = null;
    if (socket) {
      socket.onclose = null;
      socket.onmessage = null;
      socket.close();
    }
    this._connection = 'idle';
  }

  /**
   * No socket of this model follows the session any more.
   */
  private _endFeed(): void {
    this._feed?.dispose();
    this._feed = null;
  }

  private _onEvent(event: IChatEvent): void {
    if (event.type === 'overflow') {
      // Fell behind: reconnect after the last event applied.
      this._closeSocket();
      this._connect();
      this._emit();
      return;
    }
    const before = this._state;
    if (event.type !== 'resync' && event.seq <= before.lastSeq) {
      return; // seen already (a replay after a reconnect)
    }
    this._state = applyEvent(this._state, event);
    if (this._state.stale) {
      this._closeSocket();
      void this.refresh().then(() => this._connect());
      return;
    }
    if (this._state.deleted && !before.deleted) {
      this._closeSocket();
      this._endFeed();
      this._deleted.emit();
    }
    if (event.type === 'rules' && this._session) {
      this._session = { ...this._session, rules: this._state.rules };
    }
    if (event.type === 'finish') {
      this._runEnded.emit(event.reason);
      if (this._reloadAtFinish) {
        // Reload with the socket closed: events of a next run that arrive
        // meanwhile would be lost under the snapshot; they replay after it.
        this._reloadAtFinish = false;
        this._closeSocket();
        void this.refresh().then(() => this._connect());
      } else {
        // The title comes from the first prompt.
        void getSession(this.id)
          .then(session => {
            this._session = session;
            this._emit();
          })
          .catch(() => undefined);
      }
    }
    if (this._state !== before) {
      this._emit();
    }
  }

  /**
   * Coalesce change notifications: streaming sends many small events.
   */
  private _emit(): void {
    if (this._isDisposed || this._frame !== null || this._timer !== null) {
      return;
    }
    const fire = (): void => {
      if (this._frame !== null) {
        cancelAnimationFrame(this._frame);
      }
      if (this._timer !== null) {
        clearTimeout(this._timer);
      }
      this._frame = null;
      this._timer = null;
      if (!this._isDisposed) {
        this._changed.emit();
      }
    };
    this._frame = requestAnimationFrame(fire);
    // A background tab gets no frames.
    this._timer = setTimeout(fire, 100);
  }

  private readonly _settings: ServerConnection.ISettings;
  private _state: IChatState;
  private _session: IAiSession | null = null;
  private _loading = false;
  private _busy = 0;
  // Counts the session changes the user made (update, setRules), so a reload
  // begun before one does not undo it.
  private _changes = 0;
  private _isDisposed = false;
  private _socket: WebSocket | null = null;
  private _feed: IEventFeed | null = null;
  private _connection: ConnectionStatus = 'idle';
  private _retries = 0;
  private _retryTimer: ReturnType<typeof setTimeout> | null = null;
  private _reloadAtFinish = false;
  private _frame: number | null = null;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private readonly _changed = new Signal<this, void>(this);
  private readonly _deleted = new Signal<this, void>(this);
  private readonly _runEnded = new Signal<this, string>(this);
}

/**
 * A namespace for AiSessionModel statics.
 */
export namespace AiSessionModel {
  export interface IOptions {
    id: string;
    settings: ServerConnection.ISettings;
  }
}
