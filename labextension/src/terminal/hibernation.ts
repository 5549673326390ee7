/**
 * When a hidden pane hibernates: after the configured minutes out of view,
 * and while a command runs, again every minute until it has ended.
 */

/**
 * How often a hidden, busy pane checks again whether it may hibernate.
 */
const HIBERNATE_RETRY_MS = 60_000;

/**
 * The hibernation timer of one pane.
 */
export class HibernationTimer {
  constructor(private readonly _pane: HibernationTimer.IPane) {}

  /**
   * The pane was hidden: hibernate after the configured minutes (never
   * when they are 0).
   */
  schedule(): void {
    this.cancel();
    const minutes = this._pane.afterMinutes();
    if (!(minutes > 0)) {
      return;
    }
    this._timer = setTimeout(() => this._try(), minutes * 60_000);
  }

  /**
   * The pane was shown (or is gone): no hibernation.
   */
  cancel(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _try(): void {
    this._timer = null;
    const pane = this._pane;
    if (pane.isVisible() || pane.isDisposed()) {
      return;
    }
    if (pane.busy()) {
      this._timer = setTimeout(() => this._try(), HIBERNATE_RETRY_MS);
      return;
    }
    pane.hibernate();
  }

  private _timer: ReturnType<typeof setTimeout> | null = null;
}

/**
 * The namespace of {@link HibernationTimer}.
 */
export namespace HibernationTimer {
  /**
   * The pane, as its timer sees it.
   */
  export interface IPane {
    /** The minutes out of view before it hibernates (0: never). */
    afterMinutes(): number;
    isVisible(): boolean;
    isDisposed(): boolean;
    /** A command runs (a hibernating pane would lose its screen). */
    busy(): boolean;
    hibernate(): void;
  }
}
