/**
 * The AI side panel: sessions, the streamed chat, approvals, plan review
 * and provider settings.
 */
export * from './chat';
export * from './composer';
export * from './css';
export * from './icons';
export * from './markdown';
export * from './model';
export * from './panel';
export * from './panelmodel';
export * from './settings';
export * from './tokens';
