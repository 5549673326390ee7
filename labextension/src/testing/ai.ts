/**
 * Fixtures of the AI unit tests: a session as the server sends it, a fake
 * WebSocket class and the server settings that use it. The build leaves this
 * folder out (tsconfig.json); only tests import it.
 */
import type { ServerConnection } from '@jupyterlab/services';

import type { IAiSession } from '../api/ai';

export const SID = 's1';

/**
 * The session `SID` (idle, three events seen), with `fields` changed.
 */
export function session(fields: Partial<IAiSession> = {}): IAiSession {
  return {
    id: SID,
    title: 'Greeting',
    agent: 'build',
    provider: 'openai',
    model: 'gpt-test',
    plan_mode: false,
    rules: [],
    todos: [],
    created_at: 1_700_000_000,
    updated_at: 1_700_000_100,
    running: false,
    run: null,
    pending_approvals: [],
    plan: [],
    usage: { input_tokens: 10, output_tokens: 5, cached_tokens: 0 },
    last_seq: 3,
    ...fields
  };
}

/**
 * A WebSocket the test drives: every one made is in `instances`.
 */
export class FakeSocket {
  static instances: FakeSocket[] = [];

  constructor(readonly url: string) {
    FakeSocket.instances.push(this);
  }

  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: unknown) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  closed = false;

  close(): void {
    this.closed = true;
  }

  /** The server accepted the connection. */
  open(): void {
    this.onopen?.({});
  }

  /** The server sent a frame (an object is sent as its JSON). */
  receive(frame: object | string): void {
    this.onmessage?.({
      data: typeof frame === 'string' ? frame : JSON.stringify(frame)
    });
  }

  /** The connection was lost. */
  drop(): void {
    this.closed = true;
    this.onclose?.({ code: 1006 });
  }
}

/**
 * Server settings whose sockets are `FakeSocket`s.
 */
export const settings = {
  WebSocket: FakeSocket,
  wsUrl: 'ws://localhost:8888/'
} as unknown as ServerConnection.ISettings;

/**
 * Let every pending promise chain settle (setImmediate is not faked).
 */
export function flush(): Promise<void> {
  return new Promise(resolve => setImmediate(resolve));
}
