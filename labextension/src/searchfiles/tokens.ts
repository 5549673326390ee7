/**
 * Public tokens of the Search in Files feature.
 */
import { Token } from '@lumino/coreutils';

/**
 * The search panel, for other features that want to start a search.
 */
export interface ISearchInFiles {
  /**
   * Show the panel and focus its query; search for `query` when given.
   */
  show(query?: string): void;
}

/**
 * The Search in Files service token.
 */
export const ISearchInFiles = new Token<ISearchInFiles>(
  'terax-jupyter:ISearchInFiles',
  'Shows the Search in Files panel.'
);
