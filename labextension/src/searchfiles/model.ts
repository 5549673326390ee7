/**
 * State of the Search in Files panel: the query and the streamed results.
 */
import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { GrepEvent, IGrepLine, IGrepQuery, IGrepSummary } from '../api/fs';
import { errorMessage, isAbort, TeraxAPIError } from '../api/request';
import { splitGlobs } from '../common/globs';

/**
 * Runs one content search; the model aborts `signal` when a newer search
 * supersedes it.
 */
export type GrepFunction = (
  query: IGrepQuery,
  signal: AbortSignal
) => AsyncIterable<GrepEvent>;

/**
 * What the user typed and toggled.
 */
export interface ISearchOptions {
  query: string;
  regex: boolean;
  matchCase: boolean;
  wholeWord: boolean;
  /** Comma-separated globs. */
  include: string;
  /** Comma-separated globs. */
  exclude: string;
}

/**
 * The matches of one file, in the order the server sent them.
 */
export interface IFileResult {
  readonly path: string;
  readonly matches: readonly IGrepLine[];
  /** The file has more matches than the per-file limit. */
  readonly truncated: boolean;
}

/**
 * Where the model is in its request cycle.
 */
export type SearchStatus = 'idle' | 'searching' | 'done' | 'error';

/**
 * The Search in Files model.
 */
export class SearchModel implements IDisposable {
  constructor(options: SearchModel.IOptions) {
    this._grep = options.grep;
    this._debounceMs = options.debounceMs ?? 250;
    this._flushMs = options.flushMs ?? 50;
  }

  /**
   * Emitted when anything the view shows changes (at most every few tens of
   * milliseconds while results stream in).
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get options(): Readonly<ISearchOptions> {
    return this._options;
  }

  get results(): readonly IFileResult[] {
    return this._results;
  }

  /**
   * Matches received so far in this search.
   */
  get matchCount(): number {
    return this._matchCount;
  }

  get summary(): IGrepSummary | null {
    return this._summary;
  }

  get status(): SearchStatus {
    return this._status;
  }

  /**
   * The server's message when the search failed.
   */
  get error(): string | null {
    return this._error;
  }

  /**
   * Why it failed (`invalid_pattern`, ...), when the server said.
   */
  get errorReason(): string {
    return this._errorReason;
  }

  /**
   * Limits sent with each search.
   */
  get limits(): SearchModel.ILimits {
    return this._limits;
  }

  set limits(value: SearchModel.ILimits) {
    this._limits = { ...value };
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  isCollapsed(path: string): boolean {
    return this._collapsed.has(path);
  }

  toggleCollapsed(path: string): void {
    if (!this._collapsed.delete(path)) {
      this._collapsed.add(path);
    }
    this._changed.emit();
  }

  setCollapsed(path: string, collapsed: boolean): void {
    if (collapsed !== this._collapsed.has(path)) {
      this.toggleCollapsed(path);
    }
  }

  collapseAll(): void {
    for (const result of this._results) {
      this._collapsed.add(result.path);
    }
    this._changed.emit();
  }

  expandAll(): void {
    this._collapsed.clear();
    this._changed.emit();
  }

  /**
   * Change what to search for; a changed query searches after a pause in
   * typing, a toggle searches at once.
   */
  update(options: Partial<ISearchOptions>, immediate = false): void {
    const next = { ...this._options, ...options };
    const same = (Object.keys(next) as Array<keyof ISearchOptions>).every(
      key => next[key] === this._options[key]
    );
    if (same && !immediate) {
      return;
    }
    this._options = next;
    this._changed.emit();
    if (immediate) {
      void this.search();
    } else {
      this._schedule();
    }
  }

  /**
   * Run the search now, replacing (and aborting) any running one.
   */
  async search(): Promise<void> {
    this._clearTimer();
    this._controller?.abort();
    const generation = ++this._generation;
    const query = this._buildQuery();
    this._results = [];
    this._collapsed.clear();
    this._matchCount = 0;
    this._summary = null;
    this._error = null;
    this._errorReason = '';
    if (!query) {
      this._controller = null;
      this._status = 'idle';
      this._emitNow();
      return;
    }
    const controller = new AbortController();
    this._controller = controller;
    this._status = 'searching';
    this._emitNow();
    try {
      for await (const event of this._grep(query, controller.signal)) {
        if (generation !== this._generation) {
          return;
        }
        if (event.type === 'file') {
          this._results.push({
            path: event.path,
            matches: event.matches,
            truncated: event.truncated
          });
          this._matchCount += event.matches.length;
          this._emitSoon();
        } else if (event.type === 'summary') {
          this._summary = event;
        }
      }
      if (generation !== this._generation) {
        return;
      }
      this._status = 'done';
    } catch (error) {
      if (
        generation !== this._generation ||
        isAbort(error, controller.signal)
      ) {
        return;
      }
      this._error = errorMessage(error);
      this._errorReason = error instanceof TeraxAPIError ? error.reason : '';
      this._status = 'error';
    } finally {
      if (this._controller === controller) {
        this._controller = null;
      }
    }
    this._emitNow();
  }

  /**
   * Stop a pending or running search, keeping what arrived.
   */
  cancel(): void {
    this._clearTimer();
    if (this._controller) {
      this._generation++;
      this._controller.abort();
      this._controller = null;
      this._status = 'done';
      this._emitNow();
    }
  }

  /**
   * Forget the query and the results.
   */
  clear(): void {
    this.cancel();
    this._options = { ...this._options, query: '' };
    void this.search();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._clearTimer();
    this._controller?.abort();
    if (this._flushTimer !== null) {
      clearTimeout(this._flushTimer);
    }
    Signal.clearData(this);
  }

  private _buildQuery(): IGrepQuery | null {
    const options = this._options;
    if (!options.query) {
      return null;
    }
    return {
      pattern: options.query,
      regex: options.regex,
      case: options.matchCase ? 'sensitive' : 'insensitive',
      word: options.wholeWord,
      include: splitGlobs(options.include),
      exclude: splitGlobs(options.exclude),
      maxResults: this._limits.maxResults,
      maxPerFile: this._limits.maxPerFile
    };
  }

  private _schedule(): void {
    this._clearTimer();
    this._timer = setTimeout(() => {
      this._timer = null;
      void this.search();
    }, this._debounceMs);
  }

  private _clearTimer(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _emitSoon(): void {
    if (this._flushTimer === null) {
      this._flushTimer = setTimeout(() => {
        this._flushTimer = null;
        if (!this._isDisposed) {
          this._changed.emit();
        }
      }, this._flushMs);
    }
  }

  private _emitNow(): void {
    if (this._flushTimer !== null) {
      clearTimeout(this._flushTimer);
      this._flushTimer = null;
    }
    if (!this._isDisposed) {
      this._changed.emit();
    }
  }

  private readonly _grep: GrepFunction;
  private readonly _debounceMs: number;
  private readonly _flushMs: number;
  private readonly _changed = new Signal<this, void>(this);
  private readonly _collapsed = new Set<string>();
  private _limits: SearchModel.ILimits = { maxResults: 2000, maxPerFile: 200 };
  private _options: ISearchOptions = {
    query: '',
    regex: false,
    matchCase: false,
    wholeWord: false,
    include: '',
    exclude: ''
  };
  private _results: IFileResult[] = [];
  private _matchCount = 0;
  private _summary: IGrepSummary | null = null;
  private _status: SearchStatus = 'idle';
  private _error: string | null = null;
  private _errorReason = '';
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _flushTimer: ReturnType<typeof setTimeout> | null = null;
  private _controller: AbortController | null = null;
  private _generation = 0;
  private _isDisposed = false;
}

/**
 * A namespace for SearchModel statics.
 */
export namespace SearchModel {
  export interface IOptions {
    grep: GrepFunction;
    /**
     * Pause in typing before a search runs (ms).
     */
    debounceMs?: number;
    /**
     * Longest wait before streamed results are shown (ms).
     */
    flushMs?: number;
  }

  export interface ILimits {
    maxResults: number;
    maxPerFile: number;
  }
}
