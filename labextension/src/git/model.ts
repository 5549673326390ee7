/**
 * State of the Git panel: the repository of the folder being browsed, its
 * status, the open file diff with its line selection, and the operations.
 * No DOM: the view renders it and calls its methods.
 */
import type { ServerConnection } from '@jupyterlab/services';
import type { IDisposable } from '@lumino/disposable';
import { type ISignal, Signal } from '@lumino/signaling';

import * as api from '../api/git';
import { errorMessage, TeraxAPIError } from '../api/request';
import type { GroupId } from '../common/git/status';
import { LineSelection } from '../common/git/selection';
import type { FileWatcher } from './watch';

/**
 * Operations the panel shows progress for.
 */
export type GitOperation =
  | 'stage'
  | 'unstage'
  | 'discard'
  | 'commit'
  | 'fetch'
  | 'pull'
  | 'push'
  | 'checkout'
  | 'branch'
  | 'trust'
  | 'resolve'
  | 'operation'
  | 'identity';

/**
 * Where the model is with its repository.
 */
export type RepositoryState = 'loading' | 'ready' | 'none' | 'error';

/**
 * A file whose diff is open, and the group it was opened from.
 */
export interface ISelectedFile {
  path: string;
  group: GroupId;
}

/**
 * A failure to show: what was tried and the server's message.
 */
export interface IGitError {
  title: string;
  message: string;
  reason: string;
}

/**
 * Hooks a write did not run because the repository is not trusted.
 */
export interface ISkippedHooks {
  operation: GitOperation;
  hooks: string[];
}

/**
 * Asks the user to trust a repository (what trusting lets run is in
 * `trust`); resolves true to trust it.
 */
export type ConfirmTrust = (
  root: string,
  trust: api.IGitTrust
) => Promise<boolean>;

/**
 * Asks the user to confirm a discard; resolves true to go ahead.
 */
export type ConfirmDiscard = (
  confirmation: api.IGitDiscardConfirmation
) => Promise<boolean>;

/**
 * The translated titles of failed operations.
 */
export type OperationTitles = Record<GitOperation | 'refresh' | 'diff', string>;

/**
 * Reasons for which a folder has no repository to show (the message says why).
 */
const NONE_REASONS = new Set(['not_a_repository', 'unexpected_git_dir']);

const REFRESH_DELAY_MS = 250;

/**
 * The diff source of a group: staged changes compare HEAD with the index,
 * everything else the index with the work tree.
 */
export function sourceOf(group: GroupId): api.GitDiffSource {
  return group === 'staged' ? 'index' : 'worktree';
}

/**
 * The Git panel's model.
 */
export class GitModel implements IDisposable {
  constructor(options: GitModel.IOptions) {
    this._settings = options.settings;
    this._watcher = options.watcher ?? null;
    this._confirmDiscard = options.confirmDiscard;
    this._confirmTrust = options.confirmTrust ?? null;
    this._titles = options.titles;
  }

  /**
   * Emitted when anything the view shows changes.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Emitted after a commit, checkout, pull or fetch: the history changed.
   */
  get headChanged(): ISignal<this, void> {
    return this._headChanged;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** The folder whose repository is shown. */
  get path(): string {
    return this._path;
  }

  get state(): RepositoryState {
    return this._state;
  }

  /**
   * Why a repository that exists cannot be shown (it lies outside the
   * workspace roots); null when there simply is none.
   */
  get noneReason(): string | null {
    return this._noneReason;
  }

  get repository(): api.IGitRepository | null {
    return this._repository;
  }

  /**
   * Whether git may run the programs the repository names (hooks, filters).
   */
  get trust(): api.IGitTrust | null {
    return this._repository?.trust ?? null;
  }

  /**
   * The hooks the last commit, fetch, pull or push did not run (the
   * repository is not trusted); null when none were skipped.
   */
  get skippedHooks(): ISkippedHooks | null {
    return this._skipped;
  }

  get status(): api.IGitStatus | null {
    return this._status;
  }

  get branches(): api.IGitBranches | null {
    return this._branches;
  }

  get error(): IGitError | null {
    return this._error;
  }

  /** The output of the last fetch, pull or push, or a short result line. */
  get notice(): string | null {
    return this._notice;
  }

  /**
   * Whether the last commit (or merge continue) failed because git has no
   * user.name / user.email: the panel then asks for them.
   */
  get identityNeeded(): boolean {
    return this._identityNeeded;
  }

  get selected(): ISelectedFile | null {
    return this._selected;
  }

  get diff(): api.IGitFileDiff | null {
    return this._diff;
  }

  get diffLoading(): boolean {
    return this._diffLoading;
  }

  get diffError(): string | null {
    return this._diffError;
  }

  get selection(): LineSelection {
    return this._selection;
  }

  /** Whether an operation is running. */
  isBusy(operation?: GitOperation): boolean {
    return operation ? this._busy.has(operation) : this._busy.size > 0;
  }

  /** Whether the status is being read. */
  get refreshing(): boolean {
    return this._refreshing;
  }

  /**
   * Show the repository containing `path` (a server-root-relative folder).
   */
  setPath(path: string): void {
    if (path === this._path && this._started && this._state !== 'error') {
      return;
    }
    this._started = true;
    this._path = path;
    void this.refresh(true);
  }

  /**
   * Read the status again (and the repository when `resolve` or when the
   * folder changed). Calls that overlap are merged into one more read.
   */
  async refresh(resolve = false): Promise<void> {
    this._resolvePending ||= resolve;
    if (this._refreshing) {
      this._refreshAgain = true;
      return;
    }
    this._refreshing = true;
    this._emit();
    try {
      do {
        this._refreshAgain = false;
        const mustResolve = this._resolvePending || !this._repository;
        this._resolvePending = false;
        await this._read(mustResolve);
      } while (this._refreshAgain && !this._disposed);
    } finally {
      this._refreshing = false;
      this._emit();
    }
  }

  /**
   * Refresh soon (file-change events arrive in bursts).
   */
  scheduleRefresh(delay = REFRESH_DELAY_MS): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
    }
    this._timer = setTimeout(() => {
      this._timer = null;
      void this.refresh();
    }, delay);
  }

  /**
   * Open a file's diff, or close it when it is already open from that group.
   */
  select(file: ISelectedFile | null): void {
    const same =
      file &&
      this._selected?.path === file.path &&
      this._selected.group === file.group;
    this._selected = same ? null : file;
    this._diff = null;
    this._diffError = null;
    this._selection = LineSelection.empty;
    this._emit();
    if (this._selected) {
      void this._loadDiff();
    }
  }

  /**
   * Open a file's diff (no toggle: an open one is read again).
   */
  open(file: ISelectedFile): void {
    const same =
      this._selected?.path === file.path && this._selected.group === file.group;
    if (same) {
      void this._loadDiff();
      return;
    }
    this.select(file);
  }

  /**
   * Replace the line selection of the open diff.
   */
  setSelection(selection: LineSelection): void {
    this._selection = selection;
    this._emit();
  }

  dismissError(): void {
    this._error = null;
    this._emit();
  }

  dismissNotice(): void {
    this._notice = null;
    this._skipped = null;
    this._emit();
  }

  /**
   * Trust the repository (after asking the user, when a confirmation is
   * set), or stop trusting it. Resolves whether the trust changed.
   */
  async setTrusted(trusted: boolean): Promise<boolean> {
    const root = this._root();
    const trust = this.trust;
    if (!root || !trust) {
      return false;
    }
    if (
      trusted &&
      this._confirmTrust &&
      !(await this._confirmTrust(root, trust))
    ) {
      return false;
    }
    const done = await this._run('trust', async () => {
      const updated = await api.setTrust(root, trusted, this._options());
      if (this._repository?.root === root) {
        this._repository = { ...this._repository, trust: updated };
      }
      this._skipped = null;
      return true;
    });
    if (done) {
      // Trusted, status may now run the repository's filters: read it again.
      await this.refresh();
    }
    return done ?? false;
  }

  /**
   * Stage whole files.
   */
  stageFiles(files: string[]): Promise<boolean> {
    return this._change('stage', { files });
  }

  /**
   * Unstage whole files.
   */
  unstageFiles(files: string[]): Promise<boolean> {
    return this._change('unstage', { files });
  }

  /**
   * Discard whole files (asks for confirmation).
   */
  discardFiles(files: string[]): Promise<boolean> {
    return this._change('discard', { files });
  }

  /**
   * Stage, unstage or discard hunks or lines of the open diff: the given
   * hunk entries, or the current line selection when none are given.
   */
  applyToDiff(
    operation: 'stage' | 'unstage' | 'discard',
    entries?: api.IGitHunkSelection[]
  ): Promise<boolean> {
    const diff = this._diff;
    if (!diff) {
      return Promise.resolve(false);
    }
    const selection = entries ?? this._selection.toPayload(diff.hunks, true);
    if (!selection.length) {
      return Promise.resolve(false);
    }
    return this._change(operation, {
      file: diff.file,
      fingerprint: diff.fingerprint,
      selection
    });
  }

  /**
   * Resolve conflicted files with one side (git's sense of ours / theirs).
   */
  async takeSide(files: string[], side: 'ours' | 'theirs'): Promise<boolean> {
    const root = this._root();
    if (!root) {
      return false;
    }
    const done = await this._run('resolve', async () => {
      const status = await api.resolveConflict(
        root,
        files,
        side,
        this._options()
      );
      this._applyStatus(status);
      return true;
    });
    return done ?? false;
  }

  /**
   * Continue, abort or skip the operation in progress (reset ends a bisect).
   */
  async operationAction(action: api.GitOperationAction): Promise<boolean> {
    const root = this._root();
    const operation = this._status?.operation;
    if (!root || !operation) {
      return false;
    }
    const done = await this._run('operation', async () => {
      const result = await api.operationAction(
        root,
        operation,
        action,
        this._options()
      );
      this._identityNeeded = false;
      this._notice = result.output.trim() || null;
      this._setSkipped('operation', result.hooks_skipped);
      this._applyStatus(result.status);
      this._headChanged.emit();
      return true;
    });
    return done ?? false;
  }

  /**
   * Set user.name and user.email (for this repository, or globally).
   */
  async saveIdentity(
    name: string,
    email: string,
    scope: 'local' | 'global'
  ): Promise<boolean> {
    const root = this._root();
    if (!root) {
      return false;
    }
    const done = await this._run('identity', async () => {
      await api.setIdentity(root, { name, email, scope }, this._options());
      this._identityNeeded = false;
      return true;
    });
    return done ?? false;
  }

  /**
   * Commit the index; resolves the new commit, or null after an error.
   */
  async commit(
    message: string,
    flags: { amend?: boolean; signoff?: boolean }
  ): Promise<api.IGitCommitResult | null> {
    const root = this._root();
    if (!root) {
      return null;
    }
    return this._run('commit', async () => {
      const result = await api.commit(root, message, flags, this._options());
      this._identityNeeded = false;
      this._notice = null;
      this._setSkipped('commit', result.hooks_skipped);
      this._applyStatus(result.status);
      this._headChanged.emit();
      return result;
    });
  }

  /**
   * Fetch, pull or push.
   */
  async remote(operation: api.GitRemoteOperation): Promise<boolean> {
    const root = this._root();
    if (!root) {
      return false;
    }
    const result = await this._run(operation, async () => {
      const answer = await api.remoteOperation(
        operation,
        root,
        {},
        this._options()
      );
      this._notice = answer.output.trim() || null;
      this._setSkipped(operation, answer.hooks_skipped);
      this._applyStatus(answer.status);
      this._headChanged.emit();
      return true;
    });
    return result ?? false;
  }

  /**
   * Read the branches (for the switcher).
   */
  async loadBranches(): Promise<api.IGitBranches | null> {
    const root = this._root();
    if (!root) {
      return null;
    }
    try {
      this._branches = await api.getBranches(root, this._options());
      this._emit();
      return this._branches;
    } catch (error) {
      this._fail('branch', error);
      return null;
    }
  }

  /**
   * Switch branch; a remote branch gets a local tracking branch.
   */
  async checkout(branch: string): Promise<boolean> {
    const root = this._root();
    if (!root) {
      return false;
    }
    const done = await this._run('checkout', async () => {
      const status = await api.checkout(root, branch, this._options());
      this._applyStatus(status);
      this._branches = null;
      this._headChanged.emit();
      return true;
    });
    return done ?? false;
  }

  /**
   * Create a branch at HEAD and switch to it.
   */
  async createBranch(name: string): Promise<boolean> {
    const root = this._root();
    if (!root) {
      return false;
    }
    const done = await this._run('branch', async () => {
      this._branches = await api.createBranch(
        root,
        name,
        { checkout: true },
        this._options()
      );
      this._headChanged.emit();
      return true;
    });
    if (done) {
      await this.refresh();
    }
    return done ?? false;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._watch?.dispose();
    if (this._timer !== null) {
      clearTimeout(this._timer);
    }
    Signal.clearData(this);
  }

  private _root(): string | null {
    return this._repository?.root ?? null;
  }

  private _setSkipped(operation: GitOperation, hooks?: string[]): void {
    this._skipped = hooks && hooks.length ? { operation, hooks } : null;
  }

  private _options(): api.IGitCallOptions {
    return { settings: this._settings };
  }

  private async _read(resolve: boolean): Promise<void> {
    const path = this._path;
    try {
      if (resolve) {
        if (this._state !== 'ready') {
          this._state = 'loading';
          this._emit();
        }
        const repository = await api.getRepository(
          path || '.',
          this._options()
        );
        if (path !== this._path) {
          this._refreshAgain = true;
          this._resolvePending = true;
          return;
        }
        const moved = repository.root !== this._repository?.root;
        this._repository = repository;
        if (moved) {
          this._status = null;
          this._branches = null;
          this._identityNeeded = false;
          this._selected = null;
          this._diff = null;
          this._selection = LineSelection.empty;
          this._watchRepository(repository);
        }
      }
      const root = this._root();
      if (!root) {
        return;
      }
      const status = await api.getStatus(root, this._options());
      if (path !== this._path) {
        return;
      }
      this._state = 'ready';
      this._noneReason = null;
      this._applyStatus(status);
    } catch (error) {
      if (path !== this._path) {
        return;
      }
      if (error instanceof TeraxAPIError && NONE_REASONS.has(error.reason)) {
        this._state = 'none';
        // A repository git would find but Terax does not open says why.
        this._noneReason =
          error.reason === 'not_a_repository' ? null : errorMessage(error);
        this._repository = null;
        this._status = null;
        this._selected = null;
        this._diff = null;
        this._watch?.dispose();
        this._watch = null;
      } else if (this._state !== 'ready') {
        this._state = 'error';
        this._fail('refresh', error);
      } else {
        this._fail('refresh', error);
      }
    } finally {
      this._emit();
    }
  }

  private _watchRepository(repository: api.IGitRepository): void {
    this._watch?.dispose();
    this._watch = null;
    if (!this._watcher) {
      return;
    }
    const folder = repository.relative_root ?? repository.root;
    this._watch = this._watcher.subscribe(folder, () => this.scheduleRefresh());
  }

  /**
   * Take a status the server returned and keep the open diff in step.
   */
  private _applyStatus(status: api.IGitStatus): void {
    this._status = status;
    const selected = this._selected;
    if (selected) {
      const still = status[selected.group].some(e => e.path === selected.path);
      if (!still) {
        // Follow the file to the group it moved to (all staged, ...).
        const group = (
          ['unstaged', 'staged', 'untracked', 'conflicted'] as const
        ).find(g => status[g].some(e => e.path === selected.path));
        if (group) {
          this._selected = { path: selected.path, group };
        } else {
          this._selected = null;
          this._diff = null;
          this._selection = LineSelection.empty;
        }
      }
      if (this._selected) {
        void this._loadDiff();
      }
    }
    this._emit();
  }

  private async _loadDiff(): Promise<void> {
    const selected = this._selected;
    const root = this._root();
    if (!selected || !root) {
      return;
    }
    const token = ++this._diffToken;
    this._diffLoading = true;
    this._emit();
    try {
      const diff = await api.getDiff(
        root,
        selected.path,
        sourceOf(selected.group),
        this._options()
      );
      if (token !== this._diffToken) {
        return;
      }
      const same = this._diff?.fingerprint === diff.fingerprint;
      this._diff = diff;
      this._diffError = null;
      this._selection = same
        ? this._selection.restrict(diff.hunks)
        : LineSelection.empty;
    } catch (error) {
      if (token !== this._diffToken) {
        return;
      }
      this._diff = null;
      this._diffError = errorMessage(error);
    } finally {
      if (token === this._diffToken) {
        this._diffLoading = false;
        this._emit();
      }
    }
  }

  private async _change(
    operation: 'stage' | 'unstage' | 'discard',
    change: api.GitChangeRequest
  ): Promise<boolean> {
    const root = this._root();
    if (!root) {
      return false;
    }
    const done = await this._run(operation, async () => {
      let status: api.IGitStatus;
      if (operation === 'discard') {
        const first = await api.discard(
          root,
          change,
          undefined,
          this._options()
        );
        if (first.done) {
          status = first.status;
        } else {
          if (!(await this._confirmDiscard(first.confirmation))) {
            return false;
          }
          const second = await api.discard(
            root,
            change,
            first.confirmation.confirm,
            this._options()
          );
          if (!second.done) {
            throw new Error(second.confirmation.message);
          }
          status = second.status;
        }
      } else {
        const call = operation === 'stage' ? api.stage : api.unstage;
        status = await call(root, change, this._options());
      }
      this._selection = LineSelection.empty;
      this._applyStatus(status);
      return true;
    });
    return done ?? false;
  }

  private async _run<T>(
    operation: GitOperation,
    work: () => Promise<T>
  ): Promise<T | null> {
    this._busy.add(operation);
    this._error = null;
    this._emit();
    try {
      return await work();
    } catch (error) {
      this._fail(operation, error);
      if (error instanceof TeraxAPIError && error.reason === 'stale_diff') {
        // The file changed under the selection: show what it is now.
        void this.refresh();
      }
      return null;
    } finally {
      this._busy.delete(operation);
      this._emit();
    }
  }

  private _fail(
    operation: GitOperation | 'refresh' | 'diff',
    error: unknown
  ): void {
    this._error = {
      title: this._titles[operation],
      message: errorMessage(error),
      reason: error instanceof TeraxAPIError ? error.reason : ''
    };
    if (this._error.reason === 'identity_unknown') {
      this._identityNeeded = true;
    }
    this._emit();
  }

  private _emit(): void {
    if (!this._disposed) {
      this._changed.emit();
    }
  }

  private readonly _settings: ServerConnection.ISettings | undefined;
  private readonly _watcher: FileWatcher | null;
  private readonly _confirmDiscard: ConfirmDiscard;
  private readonly _confirmTrust: ConfirmTrust | null;
  private readonly _titles: OperationTitles;
  private readonly _changed = new Signal<this, void>(this);
  private readonly _headChanged = new Signal<this, void>(this);
  private readonly _busy = new Set<GitOperation>();
  private _path = '';
  private _started = false;
  private _state: RepositoryState = 'loading';
  private _noneReason: string | null = null;
  private _repository: api.IGitRepository | null = null;
  private _status: api.IGitStatus | null = null;
  private _branches: api.IGitBranches | null = null;
  private _error: IGitError | null = null;
  private _notice: string | null = null;
  private _skipped: ISkippedHooks | null = null;
  private _identityNeeded = false;
  private _selected: ISelectedFile | null = null;
  private _diff: api.IGitFileDiff | null = null;
  private _diffLoading = false;
  private _diffError: string | null = null;
  private _diffToken = 0;
  private _selection = LineSelection.empty;
  private _refreshing = false;
  private _refreshAgain = false;
  private _resolvePending = false;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _watch: IDisposable | null = null;
  private _disposed = false;
}

/**
 * A namespace for GitModel statics.
 */
export namespace GitModel {
  export interface IOptions {
    settings?: ServerConnection.ISettings;
    /** File-change events; without it the panel refreshes only on demand. */
    watcher?: FileWatcher | null;
    confirmDiscard: ConfirmDiscard;
    /** Asks before trusting a repository; without it, trusting does not ask. */
    confirmTrust?: ConfirmTrust;
    titles: OperationTitles;
  }
}
