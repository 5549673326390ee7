/**
 * Go to File: quick open by fuzzy file name.
 */
export * from './model';
export * from './tokens';
export * from './widget';
