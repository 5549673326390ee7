/**
 * The administrator's policy: token, model, icon and classes.
 */
export { CSS as PolicyCSS } from './css';
export * from './icons';
export * from './model';
export * from './tokens';
