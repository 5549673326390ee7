/**
 * The web preview: a main-area tab showing a dev server of this machine
 * through the server's proxy, or an external page in a sandbox.
 */
export * from './css';
export * from './icons';
export * from './model';
export * from './tokens';
export * from './widget';
