/**
 * Review of an AI edit: the current file beside the proposed one, hunk by
 * hunk, and the decision sent back to the agent.
 */
export * from './icons';
export * from './mergeview';
export * from './model';
export * from './notebookapply';
export * from './selection';
export * from './widget';
