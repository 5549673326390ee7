/**
 * State of the History panel: the commits loaded so far (pages fetched with
 * the server's cursor as the list scrolls), the filters, the selected commit
 * with its detail and the diff of one of its files.
 */
import type { ServerConnection } from '@jupyterlab/services';
import type { IDisposable } from '@lumino/disposable';
import { type ISignal, Signal } from '@lumino/signaling';

import * as api from '../api/git';
import { errorMessage, isAbort, TeraxAPIError } from '../api/request';
import { type Lanes, pageTops } from '../common/gitgraph';

/**
 * The search fields of the history.
 */
export interface IHistoryFilters {
  /** Text in the message. */
  query: string;
  author: string;
  /** Repository-relative path. */
  file: string;
  /** One ref, or "" for the refs of `refs`. */
  ref: string;
  /** Which refs the graph starts from when no `ref` is given. */
  refs: api.GitLogRefs;
}

const EMPTY_FILTERS: IHistoryFilters = {
  query: '',
  author: '',
  file: '',
  ref: '',
  refs: 'branches'
};

/** Where the choice of refs is remembered (per browser, for every repository). */
const REFS_KEY = 'terax:git-history-refs';
const REFS: readonly string[] = ['branches', 'all', 'local'];

/**
 * The refs choice remembered from the last time, as `{ ref, refs }`.
 */
export function rememberedRefs(
  storage: Pick<Storage, 'getItem'> | null = safeStorage()
): Pick<IHistoryFilters, 'ref' | 'refs'> {
  let value: string | null = null;
  try {
    value = storage?.getItem(REFS_KEY) ?? null;
  } catch {
    // Storage refused (a sandboxed frame): the default.
  }
  if (value === 'HEAD') {
    return { ref: 'HEAD', refs: 'branches' };
  }
  return {
    ref: '',
    refs: value && REFS.includes(value) ? (value as api.GitLogRefs) : 'branches'
  };
}

function safeStorage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

function rememberRefs(filters: IHistoryFilters): void {
  try {
    safeStorage()?.setItem(REFS_KEY, filters.ref ? 'HEAD' : filters.refs);
  } catch {
    // Not remembered; the choice still applies now.
  }
}

/**
 * The History panel's model.
 */
export class HistoryModel implements IDisposable {
  constructor(options: HistoryModel.IOptions) {
    this._settings = options.settings;
    this.root = options.root;
    this._pageSize = options.pageSize ?? 300;
    this._debounceMs = options.debounceMs ?? 250;
  }

  /** The repository's work tree (absolute). */
  readonly root: string;

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  get commits(): readonly api.IGitCommit[] {
    return this._commits;
  }

  /**
   * The lane colours at the top of each commit's row (empty without the
   * graph); rows that change no lane share one array.
   */
  get laneTops(): readonly Lanes[] {
    return this._tops;
  }

  /** More pages exist. */
  get hasMore(): boolean {
    return this._cursor !== null;
  }

  get loading(): boolean {
    return this._loading;
  }

  get error(): string | null {
    return this._error;
  }

  /** False when a filter made the server leave out the lanes. */
  get graphEnabled(): boolean {
    return this._graph;
  }

  get filters(): IHistoryFilters {
    return this._filters;
  }

  /** Whether any filter is set. */
  get filtered(): boolean {
    const f = this._filters;
    return !!(f.query || f.author || f.file);
  }

  /** Index of the selected commit in `commits`, or -1. */
  get selectedIndex(): number {
    return this._selectedOid
      ? this._commits.findIndex(c => c.oid === this._selectedOid)
      : -1;
  }

  get selectedOid(): string | null {
    return this._selectedOid;
  }

  get detail(): api.IGitCommitDetail | null {
    return this._detail;
  }

  get detailLoading(): boolean {
    return this._detailLoading;
  }

  get detailError(): string | null {
    return this._detailError;
  }

  /** The file of the selected commit whose diff is open. */
  get openFile(): string | null {
    return this._openFile;
  }

  get fileDiff(): api.IGitFileDiff | null {
    return this._fileDiff;
  }

  get fileDiffError(): string | null {
    return this._fileDiffError;
  }

  /**
   * Change filters; the list reloads after a short pause (at once when
   * `immediate`).
   */
  setFilters(change: Partial<IHistoryFilters>, immediate = false): void {
    this._filters = { ...this._filters, ...change };
    if ('ref' in change || 'refs' in change) {
      rememberRefs(this._filters);
    }
    this._changed.emit();
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    if (immediate) {
      void this.reload();
    } else {
      this._timer = setTimeout(() => {
        this._timer = null;
        void this.reload();
      }, this._debounceMs);
    }
  }

  clearFilters(): void {
    // The search is cleared; which refs are drawn is a view choice and stays.
    const { ref, refs } = this._filters;
    this.setFilters({ ...EMPTY_FILTERS, ref, refs }, true);
  }

  /**
   * Load the first page again (after a commit or a filter change); the
   * selection stays when its commit is still listed.
   */
  async reload(): Promise<void> {
    this._abort?.abort();
    this._cursor = null;
    await this._load(true);
  }

  /**
   * Load the next page, unless one is loading or none is left.
   */
  async loadMore(): Promise<void> {
    if (this._loading || this._cursor === null) {
      return;
    }
    await this._load(false);
  }

  /**
   * Select a commit by index and load its detail.
   */
  select(index: number): void {
    const commit = this._commits[index];
    if (!commit || commit.oid === this._selectedOid) {
      return;
    }
    this._selectedOid = commit.oid;
    this._openFile = null;
    this._fileDiff = null;
    this._fileDiffError = null;
    this._changed.emit();
    void this._loadDetail(commit.oid);
  }

  /**
   * Show the diff of one file of the selected commit (again: hide it).
   */
  async openFileDiff(file: string): Promise<void> {
    const oid = this._selectedOid;
    if (!oid) {
      return;
    }
    if (this._openFile === file) {
      this._openFile = null;
      this._fileDiff = null;
      this._changed.emit();
      return;
    }
    this._openFile = file;
    this._fileDiff = null;
    this._fileDiffError = null;
    this._changed.emit();
    try {
      const diff = await api.getDiff(this.root, file, 'commit', {
        commit: oid,
        settings: this._settings
      });
      if (this._openFile === file && this._selectedOid === oid) {
        this._fileDiff = diff;
      }
    } catch (error) {
      if (this._openFile === file) {
        this._fileDiffError = errorMessage(error);
      }
    }
    this._changed.emit();
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._abort?.abort();
    if (this._timer !== null) {
      clearTimeout(this._timer);
    }
    Signal.clearData(this);
  }

  /**
   * Load the first page (`first`) or the next one. A first load goes on
   * until `atLeast` commits are there, and the list changes in one step.
   */
  private async _load(first: boolean, atLeast = 0): Promise<void> {
    const abort = new AbortController();
    this._abort = abort;
    this._loading = true;
    this._error = null;
    this._changed.emit();
    const filters = this._filters;
    const loaded = this._commits.length;
    let refsMoved = false;
    try {
      let commits = first ? [] : this._commits;
      let tops = first ? [] : this._tops;
      let cursor = first ? null : this._cursor;
      let graph = this._graph;
      do {
        const page = await api.getLog(
          this.root,
          {
            ref: filters.ref,
            refs: filters.ref ? undefined : filters.refs,
            query: filters.query.trim(),
            author: filters.author.trim(),
            file: filters.file.trim(),
            cursor,
            limit: this._pageSize
          },
          { signal: abort.signal, settings: this._settings }
        );
        if (abort.signal.aborted) {
          return;
        }
        commits = commits.length ? [...commits, ...page.commits] : page.commits;
        cursor = page.cursor;
        graph = page.graph !== false;
        if (graph) {
          // Each page carries the lanes above its first row: its rows are
          // read from them, whatever was loaded before.
          const rows = page.commits.map(c => c.graph ?? []);
          const added = pageTops(page.lanes ?? [], rows);
          tops = tops.length ? [...tops, ...added] : added;
        } else {
          tops = [];
        }
      } while (cursor !== null && commits.length < atLeast);
      this._commits = commits;
      this._tops = tops;
      this._cursor = cursor;
      this._graph = graph;
      if (first) {
        const keep = this._commits.some(c => c.oid === this._selectedOid);
        if (!keep) {
          this._selectedOid = null;
          this._detail = null;
          this._openFile = null;
          this._fileDiff = null;
        }
      }
    } catch (error) {
      if (isAbort(error, abort.signal)) {
        // A newer load took over.
      } else if (
        !first &&
        error instanceof TeraxAPIError &&
        error.reason === 'history_changed'
      ) {
        // The refs moved since the first page (a fetch, a branch made in a
        // terminal; HEAD did not move, or the list would have reloaded):
        // the cursor is stale. Lay the list out again as far as it was,
        // plus the page that was asked for, so that scrolling goes on.
        refsMoved = true;
      } else {
        this._error = errorMessage(error);
      }
    } finally {
      if (this._abort === abort) {
        this._loading = false;
        this._abort = null;
        if (!refsMoved) {
          this._changed.emit();
        }
      }
    }
    if (refsMoved && this._abort === null && !this._disposed) {
      await this._load(true, loaded + 1);
    }
  }

  private async _loadDetail(oid: string): Promise<void> {
    this._detailLoading = true;
    this._detailError = null;
    this._changed.emit();
    try {
      const detail = await api.getCommit(this.root, oid, {
        settings: this._settings
      });
      if (this._selectedOid === oid) {
        this._detail = detail;
      }
    } catch (error) {
      if (this._selectedOid === oid) {
        this._detail = null;
        this._detailError = errorMessage(error);
      }
    } finally {
      if (this._selectedOid === oid) {
        this._detailLoading = false;
        this._changed.emit();
      }
    }
  }

  private readonly _settings: ServerConnection.ISettings | undefined;
  private readonly _pageSize: number;
  private readonly _debounceMs: number;
  private readonly _changed = new Signal<this, void>(this);
  private _commits: api.IGitCommit[] = [];
  private _tops: Lanes[] = [];
  private _cursor: string | null = null;
  private _loading = false;
  private _error: string | null = null;
  private _graph = true;
  private _filters: IHistoryFilters = { ...EMPTY_FILTERS, ...rememberedRefs() };
  private _selectedOid: string | null = null;
  private _detail: api.IGitCommitDetail | null = null;
  private _detailLoading = false;
  private _detailError: string | null = null;
  private _openFile: string | null = null;
  private _fileDiff: api.IGitFileDiff | null = null;
  private _fileDiffError: string | null = null;
  private _abort: AbortController | null = null;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _disposed = false;
}

/**
 * A namespace for HistoryModel statics.
 */
export namespace HistoryModel {
  export interface IOptions {
    root: string;
    settings?: ServerConnection.ISettings;
    pageSize?: number;
    debounceMs?: number;
  }
}
