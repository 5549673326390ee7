/**
 * Search in Files: content search across the workspace, streamed.
 */
export * from './model';
export * from './navigate';
export * from './tokens';
export * from './widget';
