/**
 * The page's GPU terminal renderers: which panes hold one of the few WebGL
 * contexts (see `common/rendererpool.ts` for the policy).
 */
import { DisposableDelegate, type IDisposable } from '@lumino/disposable';

import { RendererPool } from '../common/terminal/rendererpool';

/**
 * A view that can draw with WebGL.
 */
export interface IGpuHolder {
  /** Load the WebGL renderer; false when it cannot be created. */
  attachGpu(): boolean;
  /** Dispose the WebGL renderer (xterm falls back to the DOM renderer). */
  detachGpu(): void;
}

/**
 * How long a hidden view keeps its renderer (a quick tab switch back and
 * forth should not rebuild the glyph atlas).
 */
const HIDDEN_RELEASE_MS = 20_000;

/**
 * Hands out the page's WebGL renderers.
 */
export class RendererManager {
  constructor(capacity: number) {
    this._pool = new RendererPool(capacity);
  }

  /**
   * Whether WebGL worked at all on this page (false after a failure to
   * create a context: every view then uses the DOM renderer).
   */
  get available(): boolean {
    return this._available;
  }

  /**
   * How many panes hold a renderer now.
   */
  get live(): number {
    return this._pool.holders.length;
  }

  register(id: string, holder: IGpuHolder): IDisposable {
    this._holders.set(id, holder);
    return new DisposableDelegate(() => {
      this._clearTimer(id);
      this._holders.delete(id);
      this._grant(this._pool.forget(id));
    });
  }

  setCapacity(capacity: number): void {
    for (const id of this._pool.setCapacity(capacity)) {
      this._holders.get(id)?.detachGpu();
    }
  }

  /**
   * A view came on screen.
   */
  shown(id: string): void {
    this._clearTimer(id);
    if (!this._available) {
      return;
    }
    const { granted, evict } = this._pool.request(id);
    if (evict !== null) {
      this._clearTimer(evict);
      this._holders.get(evict)?.detachGpu();
    }
    if (granted) {
      this._attach(id);
    }
  }

  /**
   * A view left the screen; it gives its renderer back after a while.
   */
  hidden(id: string): void {
    this._pool.setVisible(id, false);
    if (!this._pool.holds(id) || this._timers.has(id)) {
      return;
    }
    this._timers.set(
      id,
      setTimeout(() => {
        this._timers.delete(id);
        if (this._pool.holds(id)) {
          this._holders.get(id)?.detachGpu();
          this._grant(this._pool.release(id));
        }
      }, HIDDEN_RELEASE_MS)
    );
  }

  /**
   * A view's GPU context was lost: it draws with the DOM renderer now.
   */
  lost(id: string): void {
    this._clearTimer(id);
    this._grant(this._pool.release(id));
  }

  private _attach(id: string): void {
    const holder = this._holders.get(id);
    if (holder && !holder.attachGpu()) {
      this._available = false;
      for (const other of [...this._pool.holders]) {
        this._pool.release(other);
        if (other !== id) {
          this._holders.get(other)?.detachGpu();
        }
      }
    }
  }

  private _grant(id: string | null): void {
    if (id !== null) {
      this._attach(id);
    }
  }

  private _clearTimer(id: string): void {
    const timer = this._timers.get(id);
    if (timer !== undefined) {
      clearTimeout(timer);
      this._timers.delete(id);
    }
  }

  private readonly _pool: RendererPool;
  private readonly _holders = new Map<string, IGpuHolder>();
  private readonly _timers = new Map<string, ReturnType<typeof setTimeout>>();
  private _available = true;
}
