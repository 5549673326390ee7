/**
 * State of the Go to File overlay: the query, the hits and the active one.
 */
import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { IFileMatch, IFileSearchResponse, IIndexFacts } from '../api/fs';
import { errorMessage, isAbort } from '../api/request';
import { moveActive } from '../common/listnav';

/**
 * Runs one file-name search; the model aborts `signal` when a newer query
 * supersedes it.
 */
export type FileSearchFunction = (
  query: string,
  signal: AbortSignal
) => Promise<IFileSearchResponse>;

/**
 * Where the model is in its request cycle.
 */
export type GoToFileStatus = 'idle' | 'loading' | 'ready' | 'error';

/**
 * The Go to File model.
 */
export class GoToFileModel implements IDisposable {
  constructor(options: GoToFileModel.IOptions) {
    this._search = options.search;
    this._debounceMs = options.debounceMs ?? 40;
  }

  /**
   * Emitted whenever anything the view shows changes.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get query(): string {
    return this._query;
  }

  /**
   * The hits of the latest answered query, best first.
   */
  get results(): readonly IFileMatch[] {
    return this._results;
  }

  /**
   * The query those results answer (may lag behind `query` while loading).
   */
  get resultsQuery(): string {
    return this._resultsQuery;
  }

  get activeIndex(): number {
    return this._activeIndex;
  }

  get activeItem(): IFileMatch | null {
    return this._results[this._activeIndex] ?? null;
  }

  get status(): GoToFileStatus {
    return this._status;
  }

  /**
   * The server's message when the last search failed.
   */
  get error(): string | null {
    return this._error;
  }

  /**
   * Facts about the file index from the last answer.
   */
  get facts(): IIndexFacts | null {
    return this._facts;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Change the query; the search runs after a short pause in typing.
   */
  setQuery(query: string): void {
    if (query === this._query) {
      return;
    }
    this._query = query;
    this._changed.emit();
    this._schedule();
  }

  /**
   * Search now for the current query (when the overlay opens).
   */
  refresh(): Promise<void> {
    this._clearTimer();
    return this._run();
  }

  /**
   * Move the active hit by `delta` (wrapping for single steps).
   */
  moveActive(delta: number): void {
    this.setActive(moveActive(this._activeIndex, delta, this._results.length));
  }

  setActive(index: number): void {
    const next =
      this._results.length === 0
        ? -1
        : Math.max(0, Math.min(this._results.length - 1, index));
    if (next !== this._activeIndex) {
      this._activeIndex = next;
      this._changed.emit();
    }
  }

  /**
   * Stop any pending or running search.
   */
  cancel(): void {
    this._clearTimer();
    this._controller?.abort();
    this._controller = null;
    if (this._status === 'loading') {
      this._status = this._error ? 'error' : 'ready';
      this._changed.emit();
    }
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this.cancel();
    Signal.clearData(this);
  }

  private _schedule(): void {
    this._clearTimer();
    this._timer = setTimeout(() => {
      this._timer = null;
      void this._run();
    }, this._debounceMs);
  }

  private _clearTimer(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private async _run(): Promise<void> {
    this._controller?.abort();
    const controller = new AbortController();
    this._controller = controller;
    const generation = ++this._generation;
    const query = this._query;
    this._status = 'loading';
    this._changed.emit();
    try {
      const response = await this._search(query, controller.signal);
      if (generation !== this._generation || this._isDisposed) {
        return;
      }
      this._results = response.results;
      this._resultsQuery = query;
      this._facts = {
        total_files: response.total_files,
        truncated: response.truncated,
        engine: response.engine,
        index_age_s: response.index_age_s,
        index_build_ms: response.index_build_ms,
        refreshing: response.refreshing
      };
      this._error = null;
      this._activeIndex = this._results.length > 0 ? 0 : -1;
      this._status = 'ready';
    } catch (error) {
      if (generation !== this._generation || this._isDisposed) {
        return;
      }
      if (isAbort(error, controller.signal)) {
        return;
      }
      this._results = [];
      this._resultsQuery = query;
      this._activeIndex = -1;
      this._error = errorMessage(error);
      this._status = 'error';
    } finally {
      if (this._controller === controller) {
        this._controller = null;
      }
    }
    this._changed.emit();
  }

  private readonly _search: FileSearchFunction;
  private readonly _debounceMs: number;
  private readonly _changed = new Signal<this, void>(this);
  private _query = '';
  private _results: readonly IFileMatch[] = [];
  private _resultsQuery = '';
  private _activeIndex = -1;
  private _status: GoToFileStatus = 'idle';
  private _error: string | null = null;
  private _facts: IIndexFacts | null = null;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _controller: AbortController | null = null;
  private _generation = 0;
  private _isDisposed = false;
}

/**
 * A namespace for GoToFileModel statics.
 */
export namespace GoToFileModel {
  export interface IOptions {
    search: FileSearchFunction;
    /**
     * Pause in typing before a search runs (ms).
     */
    debounceMs?: number;
  }
}
