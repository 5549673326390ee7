/**
 * The conversation of an AI session as the panel shows it, DOM-free: built
 * from what the server stores (messages, tool-call records, the session) and
 * then kept current by the session's events (a reducer, idempotent on the
 * events' sequence numbers). Also the composer's small parsers.
 */
export * from './composer';
export * from './events';
export * from './stored';
export * from './turns';
export * from './types';
export * from './views';
export * from './workflow';
