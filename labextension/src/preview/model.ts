/**
 * One preview tab's state, without the DOM: where it points, its own
 * back/forward list, whether the page is loading, and the proxy's error
 * when the dev server could not be reached.
 *
 * A local page is framed from its preview address (a capability path) and
 * runs sandboxed, without Jupyter's origin: the tab cannot look into it, so
 * after each load it asks the server what the frame loaded (the page a
 * link led to, or the proxy's error).
 */
import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  NavigationHistory,
  displayAddress,
  parseTarget,
  sameTarget,
  type PreviewTarget
} from '../common/preview/address';

/**
 * The proxy's answer when it could not show the dev server.
 */
export interface IPreviewError {
  status: number;
  reason: string;
  message: string;
}

/**
 * A navigation the view performs.
 */
export interface INavigation {
  /** The frame's URL. */
  src: string;
  /** The page to load (the view reloads the same page otherwise). */
  reload: boolean;
}

/**
 * What the server says a local frame loaded.
 */
export interface IFrameState {
  /** Path and query on the dev server. */
  path: string;
  error: IPreviewError | null;
}

/**
 * The model of one preview tab.
 */
export class PreviewModel implements IDisposable {
  constructor(options: PreviewModel.IOptions) {
    this._frameURL = options.frameURL;
    this._frameState = options.frameState;
    this._history = new NavigationHistory(options.target, sameTarget);
    this._loading = true;
  }

  get target(): PreviewTarget {
    return this._history.current;
  }

  /**
   * The port of a local preview, else null.
   */
  get port(): number | null {
    const target = this.target;
    return target.kind === 'local' ? target.port : null;
  }

  get isExternal(): boolean {
    return this.target.kind === 'external';
  }

  /**
   * What the address bar shows (`http://localhost:5173/app`).
   */
  get address(): string {
    return displayAddress(this.target);
  }

  /**
   * Short, for the tab (`localhost:5173`, `example.com`).
   */
  get label(): string {
    const target = this.target;
    if (target.kind === 'local') {
      return `localhost:${target.port}`;
    }
    return target.url.replace(/^https?:\/\//, '').replace(/[/?#].*$/, '');
  }

  get canGoBack(): boolean {
    return this._history.canGoBack;
  }

  get canGoForward(): boolean {
    return this._history.canGoForward;
  }

  get loading(): boolean {
    return this._loading;
  }

  get error(): IPreviewError | null {
    return this._error;
  }

  /**
   * Anything above changed.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * The view should load a page in the frame.
   */
  get navigationRequested(): ISignal<this, INavigation> {
    return this._navigationRequested;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Load the first page (once the view listens).
   */
  start(): void {
    this._load(false);
  }

  /**
   * Go to an address; false when it means nothing the preview can show.
   */
  navigate(address: string | PreviewTarget): boolean {
    const target = typeof address === 'string' ? parseTarget(address) : address;
    if (!target) {
      return false;
    }
    this._history.visit(target);
    this._load(false);
    return true;
  }

  back(): void {
    if (this._history.back()) {
      this._load(false);
    }
  }

  forward(): void {
    if (this._history.forward()) {
      this._load(false);
    }
  }

  reload(): void {
    this._load(true);
  }

  /**
   * The frame finished loading. For a local page the server says what it
   * loaded: a link followed inside the page joins the history, and the
   * proxy's error shows over the frame.
   */
  async frameLoaded(): Promise<void> {
    const target = this.target;
    const load = this._loads;
    // The first load after the tab set the frame's address is that page; a
    // later one is a page the frame went to by itself (a link, a form).
    const own = this._ownLoadPending;
    this._ownLoadPending = false;
    if (target.kind === 'external') {
      this._settle(load, null);
      return;
    }
    let state: IFrameState | null = null;
    try {
      state = await this._frameState(target.port);
    } catch {
      // The server is unreachable: the frame shows what it got.
    }
    if (load !== this._loads || this._isDisposed) {
      return; // another page was asked for meanwhile
    }
    // The fragment never reaches the server: the same page is the same target.
    const [page] = splitFragment(target.path);
    const same = state !== null && state.path === page;
    if (state && !own && !same) {
      this._history.visit({
        kind: 'local',
        port: target.port,
        path: state.path
      });
    }
    // A page the tab asked for and then left may be what the server saw last:
    // its error is not this page's.
    this._settle(load, state && (same || !own) ? state.error : null);
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    Signal.clearData(this);
  }

  private _load(reload: boolean): void {
    const load = ++this._loads;
    const target = this.target;
    this._loading = true;
    this._changed.emit();
    if (target.kind === 'external') {
      this._navigationRequested.emit({ src: target.url, reload });
      return;
    }
    this._frameURL(target.port, target.path).then(
      src => {
        if (load === this._loads && !this._isDisposed) {
          this._ownLoadPending = true;
          this._navigationRequested.emit({ src, reload });
        }
      },
      (reason: unknown) => this._settle(load, errorOf(reason))
    );
  }

  private _settle(load: number, error: IPreviewError | null): void {
    if (load !== this._loads || this._isDisposed) {
      return;
    }
    this._loading = false;
    this._error = error;
    this._changed.emit();
  }

  private readonly _frameURL: (port: number, path: string) => Promise<string>;
  private readonly _frameState: (port: number) => Promise<IFrameState | null>;
  private _loads = 0;
  private _ownLoadPending = false;
  private readonly _history: NavigationHistory<PreviewTarget>;
  private _loading: boolean;
  private _error: IPreviewError | null = null;
  private _isDisposed = false;
  private readonly _changed = new Signal<this, void>(this);
  private readonly _navigationRequested = new Signal<this, INavigation>(this);
}

/**
 * A namespace for PreviewModel statics.
 */
export namespace PreviewModel {
  export interface IOptions {
    /** The first page. */
    target: PreviewTarget;
    /**
     * The frame's URL for a local page (its preview address); rejects with
     * the server's error when the port cannot be previewed.
     */
    frameURL: (port: number, path: string) => Promise<string>;
    /** What the server says the frame loaded last (null: nothing yet). */
    frameState: (port: number) => Promise<IFrameState | null>;
  }
}

function splitFragment(path: string): [string, string] {
  const hash = path.indexOf('#');
  return hash === -1 ? [path, ''] : [path.slice(0, hash), path.slice(hash)];
}

/**
 * A failed request as the error card shows it.
 */
function errorOf(reason: unknown): IPreviewError {
  const value = reason as {
    message?: unknown;
    reason?: unknown;
    response?: { status?: unknown };
  };
  const status =
    typeof value?.response?.status === 'number' ? value.response.status : 0;
  return {
    status,
    reason: typeof value?.reason === 'string' ? value.reason : 'error',
    message:
      typeof value?.message === 'string' && value.message
        ? value.message
        : String(reason)
  };
}
