/**
 * One preview tab's state, without the DOM: where it points, its own
 * back/forward list, whether the page is loading, and the proxy's error
 * when the dev server could not be reached.
 */
import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  NavigationHistory,
  displayAddress,
  parseTarget,
  sameTarget,
  targetOfProxyPath,
  type PreviewTarget
} from '../common/preview';

/**
 * The proxy's answer when it could not show the dev server (read from the
 * marker its error page carries).
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
 * The model of one preview tab.
 */
export class PreviewModel implements IDisposable {
  constructor(options: PreviewModel.IOptions) {
    this._basePath = options.basePath;
    this._proxyURL = options.proxyURL;
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

  /**
   * The frame's URL: the proxy's for a local page, the page's own else.
   */
  get frameSrc(): string {
    const target = this.target;
    return target.kind === 'local'
      ? this._proxyURL(target.port, target.path)
      : target.url;
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
   * The frame finished loading. `location` is its path, query and fragment
   * when the page is the server's own (a local preview), so links followed
   * inside the page join the history; `error` is the proxy's when it
   * answered with its error page.
   */
  frameLoaded(location: string | null, error: IPreviewError | null): void {
    if (location !== null && !this.isExternal) {
      const shown = targetOfProxyPath(this._basePath, location);
      if (shown && !sameTarget(shown, this.target)) {
        this._history.visit(shown);
      }
    }
    this._loading = false;
    this._error = error;
    this._changed.emit();
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    Signal.clearData(this);
  }

  private _load(reload: boolean): void {
    this._loading = true;
    this._changed.emit();
    this._navigationRequested.emit({ src: this.frameSrc, reload });
  }

  private readonly _basePath: string;
  private readonly _proxyURL: (port: number, path: string) => string;
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
    /** The server's base URL path (`/user/alice/`), to read the frame's location. */
    basePath: string;
    /** The absolute URL of a proxied page. */
    proxyURL: (port: number, path: string) => string;
  }
}
