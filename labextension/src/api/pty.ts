/**
 * REST client of the terminal area (`/terax/api/pty/...`) and the URL of a
 * session's stream WebSocket.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { API_NAMESPACE, fetchAPI, requestAPI, TeraxAPIError } from './request';

/**
 * Where the shell is in its prompt/command cycle (`starting` until the shell
 * integration first speaks, and for ever without it).
 */
export type ShellPhase = 'starting' | 'prompt' | 'input' | 'running';

/**
 * A terminal session as the server describes it.
 */
export interface ITerminalSession {
  id: string;
  name: string;
  shell: string;
  cwd: string;
  title: string;
  pid: number;
  columns: number;
  rows: number;
  created_at: number;
  /** Views attached right now. */
  clients: number;
  phase: ShellPhase;
  /** The shell integration has spoken (blocks and cwd are reported). */
  integrated: boolean;
  /** A full-screen program owns the screen. */
  alt_screen: boolean;
  exited: boolean;
  exit_code: number | null;
  agent: { name: string; state: string } | null;
  /** How many blocks the session remembers. */
  blocks: number;
}

/**
 * One command and where its output lies in the session's stream.
 */
export interface IBlock {
  id: number;
  command: string;
  cwd: string | null;
  output_start: number;
  output_end: number | null;
  exit_code: number | null;
  /** Seconds since the epoch. */
  started_at: number;
  ended_at: number | null;
  duration_ms: number | null;
  running: boolean;
}

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
 * JSON control messages the stream sends (text frames).
 */
export type StreamMessage =
  | { type: 'attached'; session: ITerminalSession; nonce: string }
  | { type: 'replayed' }
  | { type: 'block'; event: 'start' | 'end'; block: IBlock }
  | { type: 'prompt' }
  | { type: 'input' }
  | { type: 'cwd'; cwd: string }
  | { type: 'title'; title: string }
  | { type: 'alt_screen'; active: boolean }
  | { type: 'agent'; agent: string; state: string }
  | { type: 'notify'; message: string }
  | { type: 'notice'; kind: string; bytes?: number; message: string }
  | { type: 'renamed'; name: string }
  | { type: 'exit'; code: number | null }
  | { type: 'closed' };

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
