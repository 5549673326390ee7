/**
 * State of the AI side panel around the chat: the session list, the active
 * session, providers and models, attachments and the composer's history.
 */
import type { ServerConnection } from '@jupyterlab/services';
import type { IDisposable } from '@lumino/disposable';
import { type ISignal, Signal } from '@lumino/signaling';

import {
  type AiModelDetails,
  createSession,
  deleteSession,
  describeModel,
  type IAiAgent,
  type IAiModel,
  type IAiProvider,
  type IAiSessionSummary,
  type IConnectionTest,
  listAgents,
  listModels,
  listProviders,
  listSessions,
  providerModels,
  putProvider,
  setKey,
  testConnection,
  updateSession
} from '../api/ai';
import {
  type Attachment,
  expandSnippets,
  INIT_PROMPT,
  promptHistory,
  promptWithAttachments,
  replayCommand,
  slashCommand
} from '../common/aichat';
import { AiSessionModel, requestError } from './model';

/**
 * What the panel's body shows.
 */
export type PanelView = 'chat' | 'sessions' | 'settings';

/**
 * Settings of the panel (from the settings registry).
 */
export interface IAiPanelSettings {
  /** Provider of new sessions; empty for the server's default. */
  provider: string;
  /** Model of new sessions; empty for the server's default. */
  model: string;
  /** `#name` expansions in the composer. */
  snippets: Record<string, string>;
  /** Show the reasoning of models expanded. */
  expandReasoning: boolean;
}

/**
 * The panel's model.
 */
export class AiPanelModel implements IDisposable {
  constructor(options: AiPanelModel.IOptions) {
    this._settings = options.settings;
    this._saveDefaults = options.saveDefaults ?? (() => undefined);
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Emitted when the active session changes.
   */
  get activeChanged(): ISignal<this, AiSessionModel | null> {
    return this._activeChanged;
  }

  get view(): PanelView {
    return this._view;
  }

  get sessions(): readonly IAiSessionSummary[] {
    return this._sessions;
  }

  get query(): string {
    return this._query;
  }

  get active(): AiSessionModel | null {
    return this._active;
  }

  get providers(): readonly IAiProvider[] {
    return this._providers;
  }

  get agents(): readonly IAiAgent[] {
    return this._agents;
  }

  get attachments(): readonly Attachment[] {
    return this._attachments;
  }

  get config(): IAiPanelSettings {
    return this._config;
  }

  /**
   * A problem of the panel itself (listing sessions, settings).
   */
  get notice(): string | null {
    return this._notice;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * The models known for a provider (registry and, once asked, the
   * provider's own list).
   */
  models(provider: string): readonly IAiModel[] {
    return this._models.get(provider) ?? [];
  }

  /**
   * The provider of the active session, or the one a new session gets.
   */
  currentProvider(): string {
    if (this._choosing) {
      return this._choosing.provider;
    }
    const session = this._active?.session;
    if (session) {
      return session.provider ?? '';
    }
    return this._config.provider || this._serverDefaults.provider;
  }

  /**
   * The model of the active session, or the one a new session gets.
   */
  currentModel(): string {
    if (this._choosing) {
      return this._choosing.model;
    }
    const session = this._active?.session;
    if (session) {
      return session.model ?? '';
    }
    return this._config.provider
      ? this._config.model
      : this._serverDefaults.model;
  }

  setConfig(config: IAiPanelSettings): void {
    this._config = config;
    this._changed.emit();
  }

  setView(view: PanelView): void {
    if (view === this._view) {
      return;
    }
    this._view = view;
    if (view === 'sessions') {
      void this.refreshSessions();
    } else if (view === 'settings') {
      void this.loadProviders();
    }
    this._changed.emit();
  }

  /**
   * First load: the sessions, the most recent one opened.
   */
  async start(): Promise<void> {
    if (this._started) {
      return;
    }
    this._started = true;
    void this.loadProviders();
    await this.refreshSessions();
    if (!this._active && this._sessions.length) {
      await this.select(this._sessions[0].id);
    }
  }

  async refreshSessions(): Promise<void> {
    try {
      this._sessions = await listSessions(this._query || undefined);
      this._notice = null;
    } catch (error) {
      this._notice = requestError(error).message;
    }
    this._changed.emit();
  }

  setQuery(query: string): void {
    this._query = query;
    this._changed.emit();
    if (this._queryTimer !== null) {
      clearTimeout(this._queryTimer);
    }
    this._queryTimer = setTimeout(() => {
      this._queryTimer = null;
      void this.refreshSessions();
    }, 200);
  }

  /**
   * Open a session in the chat.
   */
  async select(id: string): Promise<void> {
    if (this._active?.id === id) {
      this.setView('chat');
      return;
    }
    this._setActive(new AiSessionModel({ id, settings: this._settings }));
    this.setView('chat');
    await this._active?.load();
  }

  /**
   * Start a new session (with the chosen provider and model).
   */
  async newSession(): Promise<AiSessionModel | null> {
    try {
      const fields: Parameters<typeof createSession>[0] = {};
      if (this._config.provider) {
        fields.provider = this._config.provider;
        fields.model = this._config.model || null;
      }
      const session = await createSession(fields);
      this._sessions = [session, ...this._sessions];
      const model = new AiSessionModel({
        id: session.id,
        settings: this._settings
      });
      this._setActive(model);
      this.setView('chat');
      await model.load();
      return model;
    } catch (error) {
      this._notice = requestError(error).message;
      this._changed.emit();
      return null;
    }
  }

  async deleteSession(id: string): Promise<void> {
    try {
      await deleteSession(id);
    } catch (error) {
      this._notice = requestError(error).message;
    }
    this._sessions = this._sessions.filter(s => s.id !== id);
    if (this._active?.id === id) {
      this._setActive(null);
    }
    this._changed.emit();
  }

  async renameSession(id: string, title: string): Promise<void> {
    try {
      const session = await updateSession(id, { title });
      this._sessions = this._sessions.map(s => (s.id === id ? session : s));
      if (this._active?.id === id) {
        await this._active.refresh();
      }
    } catch (error) {
      this._notice = requestError(error).message;
    }
    this._changed.emit();
  }

  /**
   * Choose the provider and model: for the active session (when it is not
   * running) and as the default of new sessions.
   */
  async choose(provider: string, model: string): Promise<void> {
    this._choosing = { provider, model };
    this._changed.emit();
    try {
      await this._choose(provider, model);
    } finally {
      this._choosing = null;
      this._changed.emit();
    }
  }

  private async _choose(provider: string, model: string): Promise<void> {
    if (!model && provider) {
      // A provider alone: its first known model.
      if (!this._models.has(provider)) {
        await this.loadModels(provider);
      }
      model = this.models(provider)[0]?.id ?? '';
    }
    this._config = { ...this._config, provider, model };
    this._saveDefaults(provider, model);
    const active = this._active;
    if (active && !active.state.running) {
      await active.update({ provider, model: model || null });
    }
    this._changed.emit();
    if (provider && !this._models.has(provider)) {
      void this.loadModels(provider);
    }
  }

  async loadProviders(): Promise<void> {
    try {
      const [providers, agents] = await Promise.all([
        listProviders(),
        listAgents()
      ]);
      this._providers = providers;
      this._agents = agents;
      const provider = this.currentProvider();
      if (provider) {
        await this.loadModels(provider);
      }
    } catch (error) {
      this._notice = requestError(error).message;
    }
    this._changed.emit();
  }

  /**
   * Save what the user says about a model (context, prices); the problem,
   * or null when saved.
   */
  async describeModel(details: AiModelDetails): Promise<string | null> {
    try {
      const saved = await describeModel(details);
      const known = this._models.get(saved.provider) ?? [];
      this._models.set(saved.provider, [
        ...known.filter(m => m.id !== saved.id),
        saved
      ]);
    } catch (error) {
      return requestError(error).message;
    }
    this._changed.emit();
    return null;
  }

  /**
   * Known models of a provider; with `ask`, also the ones its server lists
   * (local servers: whatever is pulled).
   */
  async loadModels(provider: string, ask = false): Promise<string | null> {
    let problem: string | null = null;
    const found = new Map<string, IAiModel>();
    try {
      for (const model of await listModels(provider)) {
        found.set(model.id, model);
      }
      const entry = this._providers.find(p => p.id === provider);
      if (ask || entry?.local) {
        for (const model of await providerModels(provider)) {
          // What the user said about a model (its prices) beats the listing.
          if (!found.has(model.id)) {
            found.set(model.id, model);
          }
        }
      }
    } catch (error) {
      problem = requestError(error).message;
    }
    this._models.set(provider, [...found.values()]);
    this._changed.emit();
    return problem;
  }

  /**
   * Store a provider's key on the server; the page keeps nothing of it.
   */
  async setProviderKey(
    provider: string,
    value: string
  ): Promise<string | null> {
    const entry = this._providers.find(p => p.id === provider);
    if (!entry?.key_name) {
      return 'This provider takes no key.';
    }
    try {
      await setKey(entry.key_name, value);
      await this.loadProviders();
      return null;
    } catch (error) {
      return requestError(error).message;
    }
  }

  async setBaseURL(provider: string, baseURL: string): Promise<string | null> {
    try {
      await putProvider(provider, { base_url: baseURL });
      await this.loadProviders();
      return null;
    } catch (error) {
      return requestError(error).message;
    }
  }

  async test(provider: string, model?: string): Promise<IConnectionTest> {
    try {
      return await testConnection(provider, model || undefined);
    } catch (error) {
      const failure = requestError(error);
      return {
        ok: false,
        latency_ms: null,
        models: [],
        message: failure.message,
        reason: failure.reason
      };
    }
  }

  attach(attachment: Attachment): void {
    const same = (a: Attachment): boolean =>
      a.kind === 'file' && attachment.kind === 'file'
        ? a.path === attachment.path
        : false;
    if (this._attachments.some(same)) {
      return;
    }
    this._attachments = [...this._attachments, attachment];
    this._changed.emit();
  }

  detach(index: number): void {
    this._attachments = this._attachments.filter((_, i) => i !== index);
    this._changed.emit();
  }

  /**
   * Prompts for Up/Down in the composer, newest first: this page's, then
   * the active session's.
   */
  history(): string[] {
    const stored = this._active ? promptHistory(this._active.state) : [];
    return [...new Set([...this._typed, ...stored])];
  }

  /**
   * What the composer sends: a slash command, or a prompt with its
   * snippets expanded and the attachments added. Returns whether the text
   * was taken (the composer clears then).
   */
  async submit(text: string): Promise<boolean> {
    const trimmed = text.trim();
    if (!trimmed) {
      return false;
    }
    const command = slashCommand(trimmed);
    if (command === 'new' || command === 'clear') {
      await this.newSession();
      return true;
    }
    const session = this._active ?? (await this.newSession());
    if (!session) {
      return false;
    }
    if (command === 'plan') {
      return session.setPlanMode(!session.state.planMode);
    }
    if (session.state.running) {
      return false;
    }
    const replay = replayCommand(trimmed);
    if (typeof replay === 'string') {
      session.showError(replay, 'invalid_command');
      return false;
    }
    if (replay) {
      // Not kept in the prompt history: its inputs may be a password.
      return session.replay(replay.workflow, replay.inputs);
    }
    const prompt =
      command === 'init'
        ? INIT_PROMPT
        : promptWithAttachments(
            expandSnippets(trimmed, this._config.snippets),
            this._attachments
          );
    this._typed = [trimmed, ...this._typed.filter(t => t !== trimmed)].slice(
      0,
      100
    );
    const sent = await session.send(prompt);
    if (sent) {
      this._attachments = [];
      this._changed.emit();
    }
    return sent;
  }

  /**
   * The server's defaults (from a session created without choices).
   */
  setServerDefaults(provider: string | null, model: string | null): void {
    this._serverDefaults = { provider: provider ?? '', model: model ?? '' };
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._active?.dispose();
    if (this._queryTimer !== null) {
      clearTimeout(this._queryTimer);
    }
    Signal.clearData(this);
  }

  private _setActive(model: AiSessionModel | null): void {
    const old = this._active;
    if (old) {
      old.dispose();
    }
    this._active = model;
    if (model) {
      model.deleted.connect(() => {
        this._sessions = this._sessions.filter(s => s.id !== model.id);
        if (this._active === model) {
          this._setActive(null);
        }
      });
      model.runEnded.connect(() => void this.refreshSessions());
      model.changed.connect(() => {
        const session = model.session;
        if (session && !this._serverDefaults.provider) {
          this.setServerDefaults(session.provider, session.model);
        }
      });
    }
    this._activeChanged.emit(model);
    this._changed.emit();
  }

  private readonly _settings: ServerConnection.ISettings;
  private readonly _saveDefaults: (provider: string, model: string) => void;
  private _view: PanelView = 'chat';
  private _sessions: IAiSessionSummary[] = [];
  private _query = '';
  private _queryTimer: ReturnType<typeof setTimeout> | null = null;
  private _active: AiSessionModel | null = null;
  private _providers: IAiProvider[] = [];
  private _agents: IAiAgent[] = [];
  private _models = new Map<string, IAiModel[]>();
  private _attachments: Attachment[] = [];
  private _typed: string[] = [];
  private _config: IAiPanelSettings = {
    provider: '',
    model: '',
    snippets: {},
    expandReasoning: false
  };
  private _serverDefaults = { provider: '', model: '' };
  private _choosing: { provider: string; model: string } | null = null;
  private _notice: string | null = null;
  private _started = false;
  private _isDisposed = false;
  private readonly _changed = new Signal<this, void>(this);
  private readonly _activeChanged = new Signal<this, AiSessionModel | null>(
    this
  );
}

/**
 * A namespace for AiPanelModel statics.
 */
export namespace AiPanelModel {
  export interface IOptions {
    settings: ServerConnection.ISettings;
    /** Remember the chosen provider and model (the settings registry). */
    saveDefaults?: (provider: string, model: string) => void;
  }
}
