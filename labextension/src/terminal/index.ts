/**
 * The Terax block terminal: panels of split panes, each an xterm on a
 * server session with command blocks and an editor-like input line.
 */
export * from './blocks';
export * from './css';
export * from './icons';
export * from './model';
export * from './pane';
export * from './panel';
export * from './renderers';
export * from './service';
export * from './tokens';
