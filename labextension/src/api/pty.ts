/**
 * REST client of the terminal area (`/terax/api/pty/...`) and the URL of a
 * session's stream WebSocket.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type {
  Block,
  PtyClientMessage,
  PtyServerMessage,
  TerminalSession
} from './openapi';
import { API_NAMESPACE, fetchAPI, requestAPI, TeraxAPIError } from './request';

/**
 * Where the shell is in its prompt/command cycle (`starting` until the shell
 * integration first speaks, and for ever without it).
 */
export type ShellPhase = TerminalSession['phase'];

/**
 * A terminal session as the server describes it.
 */
export type ITerminalSession = TerminalSession;

/**
 * One command and where its output lies in the session's stream.
 */
export type IBlock = Block;

/**
 * The text of one block's output.
 */
export interface IBlockText {
  block: IBlock;
  text: string;
  /** The start of the output is no longer in the scrollback. */
  truncated: boolean;
  format: 'plain' | 'rendered';
}

/**
 * A command the history offers for what was typed.
 */
export interface IHistorySuggestion {
  command: string;
  match: 'recent' | 'prefix' | 'fuzzy';
}

/**
 * Options of {@link createSession}.
 */
export interface ICreateSessionOptions {
  cwd?: string;
  shell?: string;
  name?: string;
  columns?: number;
  rows?: number;
}

/**
 * JSON control messages the stream sends (text frames), declared on the
 * server (services/pty/wire.py).
 */
export type StreamMessage = PtyServerMessage;

/**
 * JSON control messages a client sends (text frames).
 */
export type ClientMessage = PtyClientMessage;

/**
 * A signal a client may send to the terminal's foreground program.
 */
export type SignalName = Extract<ClientMessage, { type: 'signal' }>['name'];

const settingsOrDefault = (
  settings?: ServerConnection.ISettings
): ServerConnection.ISettings => settings ?? ServerConnection.makeSettings();

/**
 * The sessions the server runs, oldest first.
 */
export async function listSessions(
  settings?: ServerConnection.ISettings
): Promise<ITerminalSession[]> {
  const body = await requestAPI<{ sessions: ITerminalSession[] }>(
    'pty/sessions',
    { settings }
  );
  return body.sessions;
}

/**
 * Start a shell (in `cwd`, the server root when absent).
 */
export function createSession(
  options: ICreateSessionOptions = {},
  settings?: ServerConnection.ISettings
): Promise<ITerminalSession> {
  return requestAPI<ITerminalSession>('pty/sessions', {
    method: 'POST',
    body: JSON.stringify(options),
    settings
  });
}

/**
 * One session; rejects with reason `not_found` when it is gone.
 */
export function getSession(
  id: string,
  settings?: ServerConnection.ISettings
): Promise<ITerminalSession> {
  return requestAPI<ITerminalSession>(
    `pty/sessions/${encodeURIComponent(id)}`,
    { settings }
  );
}

/**
 * Give a session a new name.
 */
export function renameSession(
  id: string,
  name: string,
  settings?: ServerConnection.ISettings
): Promise<ITerminalSession> {
  return requestAPI<ITerminalSession>(
    `pty/sessions/${encodeURIComponent(id)}`,
    { method: 'PATCH', body: JSON.stringify({ name }), settings }
  );
}

/**
 * End a session's whole process group.
 */
export async function deleteSession(
  id: string,
  settings?: ServerConnection.ISettings
): Promise<void> {
  await requestAPI<void>(`pty/sessions/${encodeURIComponent(id)}`, {
    method: 'DELETE',
    settings
  });
}

/**
 * The blocks a session remembers, oldest first.
 */
export async function listBlocks(
  id: string,
  settings?: ServerConnection.ISettings
): Promise<IBlock[]> {
  const body = await requestAPI<{ blocks: IBlock[] }>(
    `pty/sessions/${encodeURIComponent(id)}/blocks`,
    { settings }
  );
  return body.blocks;
}

/**
 * The output of one block, as plain text (escapes stripped) or rendered at
 * the session's width.
 */
export function getBlockText(
  id: string,
  block: number,
  format: 'plain' | 'rendered' = 'plain',
  settings?: ServerConnection.ISettings
): Promise<IBlockText> {
  return requestAPI<IBlockText>(
    `pty/sessions/${encodeURIComponent(id)}/blocks/${block}`,
    { query: { format }, settings }
  );
}

/**
 * Commands from the shells' history for what was typed: prefix matches
 * (newest first), then fuzzy ones; the most recent ones for an empty text.
 */
export async function suggestCommands(
  typed: string,
  options: { limit?: number; signal?: AbortSignal } = {},
  settings?: ServerConnection.ISettings
): Promise<IHistorySuggestion[]> {
  const body = await requestAPI<{ suggestions: IHistorySuggestion[] }>(
    'pty/history',
    {
      query: { q: typed, limit: options.limit ?? 20 },
      signal: options.signal,
      settings
    }
  );
  return body.suggestions;
}

/**
 * The URL of a session's stream, with the token where the page's settings
 * append one (as `@jupyterlab/services` does for terminals and kernels).
 *
 * With `acks` the view promises `{"type": "ack", "bytes"}` messages for the
 * output it has shown, and the server paces the program by those (not by
 * what the browser's socket buffered), so Ctrl+C stops a flood at once.
 */
export function streamURL(
  id: string,
  size: { columns: number; rows: number },
  settings?: ServerConnection.ISettings,
  acks = true
): string {
  const resolved = settingsOrDefault(settings);
  const params: Record<string, string> = {
    columns: String(size.columns),
    rows: String(size.rows)
  };
  if (acks) {
    params.acks = '1';
  }
  if (resolved.appendToken && resolved.token) {
    params.token = resolved.token;
  }
  return (
    URLExt.join(
      resolved.wsUrl,
      API_NAMESPACE,
      'pty',
      encodeURIComponent(id),
      'stream'
    ) + URLExt.objectToQueryString(params)
  );
}

/**
 * Why the server refuses a stream of the session now, or `null` when it does
 * not. A browser hides the HTTP answer to a failed WebSocket handshake, so
 * this asks the stream's address with a plain GET: the server answers it as
 * it answers the handshake (503 `too_many_connections` with a message for the
 * user when a cap is reached, else a 400 for the missing upgrade).
 */
export async function streamRefusal(
  id: string,
  settings?: ServerConnection.ISettings
): Promise<TeraxAPIError | null> {
  try {
    await fetchAPI(`pty/${encodeURIComponent(id)}/stream`, {
      settings: settingsOrDefault(settings)
    });
  } catch (error) {
    if (
      error instanceof TeraxAPIError &&
      error.reason === 'too_many_connections'
    ) {
      return error;
    }
  }
  return null;
}
