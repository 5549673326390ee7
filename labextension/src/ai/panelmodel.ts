/**
 * State of the AI side panel around the chat: the session list, the active
 * session, providers and models, attachments and the composer's history.
 */
import {
  allowedModels,
  allowedProviders,
  type IPolicy
} from '../common/policy';
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
  listSessions,
  providerModels,
  providerState,
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
} from '../common/ai/chat';
import { AiSessionModel, requestError } from './model';

/**
 * What the panel's body shows.
 */
export type PanelView = 'chat' | 'sessions' | 'settings';

/**
 * The ways to connect a model the empty state offers.
 */
export type ConnectChoice = 'ollama' | 'lmstudio' | 'key' | 'custom';

/**
 * What the settings view puts first when it opens: the key field, or the
 * form of a custom OpenAI-compatible endpoint.
 */
export type SettingsFocus = 'key' | 'custom' | null;

/**
 * Where the provider's own model list stands: `failed` keeps why, so the
 * settings view can say it and offer free text.
 */
export interface IModelListing {
  state: 'loading' | 'ok' | 'failed';
  problem: string | null;
}

/**
 * A custom OpenAI-compatible endpoint, as the settings form asks for it.
 */
export interface IEndpointFields {
  label: string;
  baseURL: string;
  keyName: string;
  local: boolean;
}

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
    this.policy = options.policy ?? null;
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

  /**
   * The providers that may be offered (the administrator's list, if any).
   */
  get providers(): readonly IAiProvider[] {
    return allowedProviders(this.policy, this._providers);
  }

  /**
   * The administrator's policy (null: not known, nothing restricted here).
   */
  readonly policy: IPolicy | null;

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
    return allowedModels(
      this.policy,
      provider,
      this._models.get(provider) ?? []
    );
  }

  /**
   * Where the provider's own model list stands (null: never asked).
   */
  listing(provider: string): IModelListing | null {
    return this._listing.get(provider) ?? null;
  }

  /**
   * Why no model is connected yet, or null when the chat can be used: no
   * provider, a hosted provider without a key, no model.
   */
  connectionProblem(): 'provider' | 'key' | 'model' | null {
    if (!this._providersLoaded) {
      return null; // not known yet: no "connect a model" flash before the list
    }
    const id = this.currentProvider();
    const provider = this._providers.find(p => p.id === id);
    if (!id || (!provider && this._providers.length)) {
      return 'provider';
    }
    if (provider && provider.key_name && !provider.local && !provider.key_set) {
      return 'key';
    }
    return this.currentModel() ? null : 'model';
  }

  /**
   * What the settings view focuses when it opens next (then forgotten).
   */
  get settingsFocus(): SettingsFocus {
    return this._settingsFocus;
  }

  clearSettingsFocus(): void {
    this._settingsFocus = null;
  }

  /**
   * One of the empty state's choices: the provider chosen for the chat
   * (the settings view shows the same one) and the settings opened at what
   * to do next.
   */
  async connect(choice: ConnectChoice): Promise<void> {
    if (choice === 'ollama' || choice === 'lmstudio') {
      this._settingsFocus = null;
      this.setView('settings');
      await this.choose(choice, '');
      return;
    }
    if (choice === 'key') {
      // A hosted provider first, so the key field it has is there to focus.
      const current = this._providers.find(
        p => p.id === this.currentProvider()
      );
      const hosted = (p: IAiProvider): boolean => !!p.key_name && !p.local;
      if (!current || !hosted(current)) {
        const first = this._providers.find(hosted);
        if (first) {
          await this.choose(first.id, '');
        }
      }
    }
    this._settingsFocus = choice;
    this.setView('settings');
    this._changed.emit();
  }

  /**
   * Add a custom OpenAI-compatible endpoint and choose it; the problem, or
   * null. The server validates the address as for any provider.
   */
  async addEndpoint(fields: IEndpointFields): Promise<string | null> {
    const label = fields.label.trim();
    const id = endpointId(label, this._providers);
    if (!id) {
      return 'Give the endpoint a name with a letter or digit.';
    }
    try {
      await putProvider(id, {
        kind: 'openai',
        label,
        base_url: fields.baseURL.trim(),
        local: fields.local,
        ...(fields.keyName.trim() ? { key_name: fields.keyName.trim() } : {})
      });
      await this.loadProviders();
    } catch (error) {
      return requestError(error).message;
    }
    this._settingsFocus = null;
    await this.choose(id, '');
    return null;
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
    return this._savedChoice()
      ? this._config.provider
      : this.policy?.ai.default_provider || this._serverDefaults.provider;
  }

  /**
   * Whether the user's saved provider may be used (the administrator may allow fewer).
   */
  private _savedChoice(): boolean {
    const provider = this._config.provider;
    const allowed = this.policy?.ai.providers;
    return !!provider && (!allowed || allowed.includes(provider));
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
    return this._savedChoice()
      ? this._config.model
      : this.policy?.ai.default_model || this._serverDefaults.model;
  }

  setConfig(config: IAiPanelSettings): void {
    // The settings registry saves a choice in two steps (provider, then
    // model): the half-saved state in between is not a choice of the user's.
    const saving = this._saving;
    if (saving) {
      if (
        config.provider === saving.provider &&
        config.model === saving.model
      ) {
        this._saving = null;
      } else {
        config = { ...config, provider: saving.provider, model: saving.model };
      }
    }
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
      // In the background: a view opened meanwhile (the settings) stays.
      await this.select(this._sessions[0].id, false);
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
   * Open a session in the chat (`show`: and show the chat).
   */
  async select(id: string, show = true): Promise<void> {
    if (this._active?.id === id) {
      if (show) {
        this.setView('chat');
      }
      return;
    }
    this._setActive(new AiSessionModel({ id, settings: this._settings }));
    if (show) {
      this.setView('chat');
    }
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
    // The last choice wins: an earlier one still asking for models gives up.
    const turn = ++this._chooseTurn;
    this._choosing = { provider, model };
    this._changed.emit();
    try {
      await this._choose(provider, model, turn);
    } finally {
      if (turn === this._chooseTurn) {
        this._choosing = null;
      }
      this._changed.emit();
    }
  }

  private async _choose(
    provider: string,
    model: string,
    turn: number
  ): Promise<void> {
    if (!model && provider) {
      // A provider alone: its first known model (asking its server once, or
      // waiting for the answer to a question already asked).
      const listing = this._listing.get(provider);
      if (
        !listing ||
        listing.state === 'loading' ||
        !this._models.has(provider)
      ) {
        await this.loadModels(provider, true);
      }
      if (turn !== this._chooseTurn) {
        return;
      }
      model = this.models(provider)[0]?.id ?? '';
      this._choosing = { provider, model };
    }
    this._config = { ...this._config, provider, model };
    if (this._saveDefaults(provider, model) === true) {
      this._saving = { provider, model };
    }
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
      const [state, agents] = await Promise.all([
        providerState(),
        listAgents()
      ]);
      this._providers = state.providers;
      this._agents = agents;
      this._providersLoaded = true;
      if (state.default_provider && !this._serverDefaults.provider) {
        this.setServerDefaults(
          state.default_provider,
          state.default_model ?? ''
        );
      }
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
  loadModels(provider: string, ask = false): Promise<string | null> {
    // One question at a time per provider (the settings view, a choice and a
    // provider refresh may all ask at once).
    const key = `${provider}|${ask || this._isLocal(provider)}`;
    let pending = this._loading.get(key);
    if (!pending) {
      pending = this._loadModels(provider, ask).finally(() =>
        this._loading.delete(key)
      );
      this._loading.set(key, pending);
    }
    return pending;
  }

  private _isLocal(provider: string): boolean {
    return !!this._providers.find(p => p.id === provider)?.local;
  }

  private async _loadModels(
    provider: string,
    ask: boolean
  ): Promise<string | null> {
    let problem: string | null = null;
    const found = new Map<string, IAiModel>();
    const entry = this._providers.find(p => p.id === provider);
    const asking = ask || !!entry?.local;
    try {
      for (const model of await listModels(provider)) {
        found.set(model.id, model);
      }
    } catch (error) {
      problem = requestError(error).message;
    }
    if (asking && !problem) {
      this._listing.set(provider, { state: 'loading', problem: null });
      this._changed.emit();
      try {
        const listed = await providerModels(provider);
        // The provider's own models first: they are what it serves now.
        const own = new Map<string, IAiModel>();
        for (const model of listed) {
          // What the user said about a model (its prices) beats the listing.
          own.set(model.id, found.get(model.id) ?? model);
        }
        for (const [id, model] of found) {
          if (!own.has(id)) {
            own.set(id, model);
          }
        }
        found.clear();
        own.forEach((model, id) => found.set(id, model));
        this._listing.set(provider, { state: 'ok', problem: null });
      } catch (error) {
        problem = requestError(error).message;
        this._listing.set(provider, { state: 'failed', problem });
      }
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
      // With a key, the provider can say which models it has.
      void this.loadModels(provider, true);
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

  /**
   * The provider whose connection test is running, if any.
   */
  get testing(): string | null {
    return this._testing;
  }

  async test(provider: string, model?: string): Promise<IConnectionTest> {
    this._testing = provider;
    this._changed.emit();
    try {
      const result = await testConnection(provider, model || undefined);
      if (result.ok && result.models.length) {
        void this.loadModels(provider, true);
      }
      return result;
    } catch (error) {
      const failure = requestError(error);
      return {
        ok: false,
        latency_ms: null,
        models: [],
        message: failure.message,
        reason: failure.reason
      };
    } finally {
      this._testing = null;
      this._changed.emit();
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
   * was taken (the composer clears then). `extra` is context attached to
   * this prompt only (the cells its `@notebook.ipynb#cell` words name).
   */
  async submit(
    text: string,
    extra: readonly Attachment[] = []
  ): Promise<boolean> {
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
            [...this._attachments, ...extra]
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
  private readonly _saveDefaults: (
    provider: string,
    model: string
  ) => boolean | void;
  private _view: PanelView = 'chat';
  private _sessions: IAiSessionSummary[] = [];
  private _query = '';
  private _queryTimer: ReturnType<typeof setTimeout> | null = null;
  private _active: AiSessionModel | null = null;
  private _providers: IAiProvider[] = [];
  private _agents: IAiAgent[] = [];
  private _models = new Map<string, IAiModel[]>();
  private _listing = new Map<string, IModelListing>();
  private _loading = new Map<string, Promise<string | null>>();
  private _settingsFocus: SettingsFocus = null;
  private _testing: string | null = null;
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
  private _chooseTurn = 0;
  private _providersLoaded = false;
  private _saving: { provider: string; model: string } | null = null;
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
    /** Remember the chosen provider and model (the settings registry);
     * true when a save is under way (its echo is then awaited). */
    saveDefaults?: (provider: string, model: string) => boolean | void;
    /** The administrator's policy: the providers and models offered. */
    policy?: IPolicy | null;
  }
}

/**
 * A provider id for a custom endpoint's name: lower-case letters, digits,
 * '-', at most 40, made unique among the providers.
 */
export function endpointId(
  label: string,
  providers: readonly { id: string }[]
): string {
  const base = label
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 36);
  if (!base) {
    return '';
  }
  const taken = new Set(providers.map(p => p.id));
  let id = base;
  for (let n = 2; taken.has(id); n++) {
    id = `${base}-${n}`;
  }
  return id;
}
