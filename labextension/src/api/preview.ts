/**
 * REST client of the web preview (`/terax/api/preview/...`), the proxy's
 * URLs, and the `server` messages of a terminal's stream.
 */
import { ServerConnection } from '@jupyterlab/services';

import { proxyPath } from '../common/preview/address';
import type {
  PtyServerDetected,
  PtyServerGone,
  PtyServerMessage
} from './openapi';
import { requestAPI } from './request';

/**
 * A dev server a terminal session started, as the server found it.
 */
export interface IDetectedServer {
  port: number;
  /** As printed (or `http://localhost:<port>/` when only its port was seen). */
  url: string;
  /** Where the proxy serves it, with the server's base URL. */
  proxy_path: string;
  session_id: string;
  session_name: string;
  pid: number | null;
  process: string | null;
  /** Seconds since the epoch. */
  first_seen: number;
  sources: ('output' | 'listening')[];
  /** Seen listening by a process of the session (null: not seen). */
  listening: boolean | null;
}

/**
 * A terminal's `server` message: a dev server detected, or one gone (the
 * event tells them apart; declared on the server, services/pty/wire.py).
 */
export type ServerMessage = { type: 'server' } & (
  PtyServerDetected | PtyServerGone
);

/**
 * Whether a terminal's message is about a dev server.
 */
export function isServerMessage(
  message: PtyServerMessage
): message is ServerMessage {
  return message.type === 'server';
}

/**
 * The dev servers of one terminal session, or of all of them (the server
 * looks at their listening ports again first).
 */
export async function listServers(
  sessionId?: string,
  settings?: ServerConnection.ISettings
): Promise<IDetectedServer[]> {
  const body = await requestAPI<{ servers: IDetectedServer[] }>(
    'preview/servers',
    { query: { session: sessionId }, settings }
  );
  return body.servers;
}

/**
 * The last page a preview frame loaded, as the proxy saw it (the tab cannot
 * look into its sandboxed frame).
 */
export interface IFrameNavigation {
  /** Path and query on the dev server. */
  path: string;
  status: number;
  /** The proxy's own error, when it could not show the page. */
  error: { status: number; reason: string; message: string } | null;
  /** How many pages the frame loaded with this capability. */
  count: number;
}

/**
 * A preview address: the path prefix (with its capability) a previewed
 * page is served under. The page runs sandboxed and sends no cookies; the
 * capability in its path is its credential, for this dev server only.
 */
export interface IPreviewCapability {
  target: string;
  /** Base URL included, with a trailing slash (null until a page used it after a restart). */
  prefix: string | null;
  issued: number;
  expires: number;
  navigation?: IFrameNavigation | null;
}

/**
 * The preview address of a dev server (the live one, or a new one).
 */
export async function issueCapability(
  port: number,
  settings?: ServerConnection.ISettings
): Promise<IPreviewCapability> {
  return requestAPI<IPreviewCapability>('preview/capabilities', {
    method: 'POST',
    body: JSON.stringify({ target: String(port) }),
    settings
  });
}

/**
 * The live preview address of a dev server and the last page it loaded.
 */
export async function capabilityState(
  port: number,
  settings?: ServerConnection.ISettings
): Promise<IPreviewCapability> {
  return requestAPI<IPreviewCapability>('preview/capabilities', {
    query: { target: String(port) },
    settings
  });
}

/**
 * The absolute URL of a page under a capability prefix.
 */
export function capabilityURL(
  prefix: string,
  path = '/',
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): string {
  const base = new URL(settings.baseUrl, window.location.href);
  const root = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  return base.origin + root + (path.startsWith('/') ? path : `/${path}`);
}

/**
 * The absolute URL of a proxied page for a new browser tab: the server
 * sends the browser's own navigation on to the page's preview address.
 */
export function proxyURL(
  port: number,
  path = '/',
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): string {
  const base = new URL(settings.baseUrl, window.location.href);
  return base.origin + proxyPath(base.pathname, port, path);
}
