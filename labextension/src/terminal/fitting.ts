/**
 * Fitting a terminal to its box: once per animation frame, on every resize
 * of the box (a split dragged, the sidebar opened) and of the widget.
 */

/**
 * Schedules the fits of one pane.
 */
export class FitScheduler {
  /**
   * @param fit Fit now (the pane checks that its box has a size).
   * @param canFit Whether there is a terminal to fit.
   */
  constructor(
    private readonly _fit: () => void,
    private readonly _canFit: () => boolean
  ) {}

  /**
   * Fit at the next animation frame (once, however often it is asked).
   */
  schedule(): void {
    if (this._frame !== null || !this._canFit()) {
      return;
    }
    this._frame = requestAnimationFrame(() => {
      this._frame = null;
      this._fit();
    });
  }

  /**
   * Drop a fit that is scheduled.
   */
  cancel(): void {
    if (this._frame !== null) {
      cancelAnimationFrame(this._frame);
      this._frame = null;
    }
  }

  /**
   * Fit whenever the element changes size (while attached).
   */
  observe(element: HTMLElement): void {
    this._observer = new ResizeObserver(() => this.schedule());
    this._observer.observe(element);
  }

  /**
   * Stop following the element's size.
   */
  unobserve(): void {
    this._observer?.disconnect();
    this._observer = null;
  }

  private _frame: number | null = null;
  private _observer: ResizeObserver | null = null;
}
