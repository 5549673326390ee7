/**
 * Who holds one of the few GPU (WebGL) terminal renderers a page may have.
 *
 * A browser allows a page only a handful of live WebGL contexts, and each
 * holds a glyph atlas in GPU memory, so at most `capacity` terminal views get
 * one. Visible views come first: a view that becomes visible takes the slot
 * of the least recently used hidden view; when every slot is held by a
 * visible view it waits (drawing with the DOM renderer meanwhile) and gets
 * the next slot that frees up.
 */
export class RendererPool {
  constructor(capacity: number) {
    this._capacity = Math.max(0, Math.floor(capacity));
  }

  get capacity(): number {
    return this._capacity;
  }

  /**
   * Change the capacity; returns the holders that must give up their slot
   * (least recently used, hidden ones first).
   */
  setCapacity(capacity: number): string[] {
    this._capacity = Math.max(0, Math.floor(capacity));
    const evicted: string[] = [];
    while (this._holders.length > this._capacity) {
      const victim = this._victim() ?? this._holders[0];
      this._remove(victim);
      evicted.push(victim);
    }
    return evicted;
  }

  /**
   * The views holding a slot, least recently used first.
   */
  get holders(): readonly string[] {
    return this._holders;
  }

  /**
   * Views waiting for a slot, in request order.
   */
  get waiting(): readonly string[] {
    return this._waiting;
  }

  holds(id: string): boolean {
    return this._holders.includes(id);
  }

  /**
   * Tell the pool whether a view is on screen.
   */
  setVisible(id: string, visible: boolean): void {
    if (visible) {
      this._visible.add(id);
    } else {
      this._visible.delete(id);
      this._waiting = this._waiting.filter(w => w !== id);
    }
  }

  /**
   * A visible view asks for a slot. `evict` names a hidden holder that must
   * dispose its renderer first; without a grant the view waits.
   */
  request(id: string): { granted: boolean; evict: string | null } {
    this._visible.add(id);
    if (this.holds(id)) {
      this._touch(id);
      return { granted: true, evict: null };
    }
    if (this._holders.length < this._capacity) {
      this._holders.push(id);
      this._waiting = this._waiting.filter(w => w !== id);
      return { granted: true, evict: null };
    }
    const victim = this._victim();
    if (victim === null) {
      if (!this._waiting.includes(id)) {
        this._waiting.push(id);
      }
      return { granted: false, evict: null };
    }
    this._remove(victim);
    this._holders.push(id);
    this._waiting = this._waiting.filter(w => w !== id);
    return { granted: true, evict: victim };
  }

  /**
   * A view gives its slot back (hidden for a while, disposed, or its GPU
   * context was lost). Returns the waiting view that gets the slot now.
   */
  release(id: string): string | null {
    this._remove(id);
    this._waiting = this._waiting.filter(w => w !== id);
    if (this._holders.length >= this._capacity) {
      return null;
    }
    const next = this._waiting.find(w => this._visible.has(w)) ?? null;
    if (next !== null) {
      this._waiting = this._waiting.filter(w => w !== next);
      this._holders.push(next);
    }
    return next;
  }

  /**
   * Forget a view entirely.
   */
  forget(id: string): string | null {
    this._visible.delete(id);
    return this.release(id);
  }

  private _victim(): string | null {
    return this._holders.find(h => !this._visible.has(h)) ?? null;
  }

  private _touch(id: string): void {
    this._remove(id);
    this._holders.push(id);
  }

  private _remove(id: string): void {
    this._holders = this._holders.filter(h => h !== id);
  }

  private _capacity: number;
  private _holders: string[] = [];
  private _waiting: string[] = [];
  private readonly _visible = new Set<string>();
}
