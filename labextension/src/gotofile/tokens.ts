/**
 * Public tokens of the Go to File feature.
 */
import { Token } from '@lumino/coreutils';

/**
 * The quick-open overlay, for other features that want to open it.
 */
export interface IGoToFile {
  /**
   * Show the overlay, optionally with a query already typed.
   */
  open(query?: string): void;
  /**
   * Hide the overlay.
   */
  close(): void;
  /**
   * Whether the overlay is showing.
   */
  readonly isOpen: boolean;
}

/**
 * The Go to File service token.
 */
export const IGoToFile = new Token<IGoToFile>(
  'terax-jupyter:IGoToFile',
  'Opens the Go to File (quick open) overlay.'
);
