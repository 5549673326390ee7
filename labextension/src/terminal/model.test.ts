import type { ServerConnection } from '@jupyterlab/services';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import * as api from '../api/pty';
import type { ITerminalSession } from '../api/pty';
import { TeraxAPIError } from '../api/request';
import { type IOutputChunk, TerminalSessionModel } from './model';

// The layer under test is the live model; the REST client below it is faked.
vi.mock('../api/pty', () => ({
  getSession: vi.fn(),
  streamRefusal: vi.fn(),
  streamURL: vi.fn(() => 'ws://localhost:8888/terax/api/pty/t1/stream')
}));

const rest = vi.mocked(api);

const SESSION: ITerminalSession = {
  id: 't1',
  name: 'Terminal 1',
  shell: 'bash',
  cwd: '/work',
  title: '',
  pid: 42,
  columns: 80,
  rows: 24,
  created_at: 1_700_000_000,
  clients: 0,
  phase: 'prompt',
  integrated: true,
  alt_screen: false,
  exited: false,
  exit_code: null,
  agent: null,
  blocks: 2
} as ITerminalSession;

const REFUSAL =
  'This terminal is already shown in 16 views, the most one terminal may have at once.';

class FakeSocket {
  static instances: FakeSocket[] = [];

  constructor(readonly url: string) {
    FakeSocket.instances.push(this);
  }

  binaryType = '';
  readyState = 0;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: unknown) => void) | null = null;
  closed = false;

  send(): void {}

  close(): void {
    this.closed = true;
  }

  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }

  receive(data: unknown): void {
    this.onmessage?.({
      data:
        typeof data === 'object' && !(data instanceof ArrayBuffer)
          ? JSON.stringify(data)
          : data
    });
  }

  /** The handshake failed, or the connection was lost (a browser says 1006). */
  drop(): void {
    this.readyState = 3;
    this.onclose?.({ code: 1006 });
  }
}

const settings = {
  WebSocket: FakeSocket,
  wsUrl: 'ws://localhost:8888/'
} as unknown as ServerConnection.ISettings;

function lastSocket(): FakeSocket {
  const all = FakeSocket.instances;
  expect(all.length).toBeGreaterThan(0);
  return all[all.length - 1];
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise(resolve => setImmediate(resolve));
  }
}

function refused(): TeraxAPIError {
  return new TeraxAPIError(
    new Response(null, { status: 503, statusText: 'Service Unavailable' }),
    REFUSAL,
    'too_many_connections'
  );
}

beforeEach(() => {
  FakeSocket.instances = [];
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  vi.stubGlobal('WebSocket', { OPEN: 1 });
  rest.getSession.mockResolvedValue({ ...SESSION });
  rest.streamRefusal.mockResolvedValue(null);
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.clearAllMocks();
});

describe('a view the server turns away', () => {
  it('says why and stops reconnecting', async () => {
    const model = new TerminalSessionModel({ session: SESSION, settings });
    const notices: string[] = [];
    model.notice.connect((_, text) => notices.push(text));
    rest.streamRefusal.mockResolvedValue(refused());
    model.connect({ columns: 80, rows: 24 });
    lastSocket().drop(); // the handshake got a 503; the browser only says "closed"
    await vi.advanceTimersByTimeAsync(300);
    await settle();
    expect(rest.streamRefusal).toHaveBeenCalledWith('t1', settings);
    expect(model.status).toBe('refused');
    expect(model.refusal).toBe(REFUSAL);
    expect(notices).toEqual([REFUSAL]);
    // No retry loop: time passes and no socket is opened.
    await vi.advanceTimersByTimeAsync(60_000);
    await settle();
    expect(FakeSocket.instances).toHaveLength(1);
    // Asked again (the user clicked), it tries once more, and attaches.
    rest.streamRefusal.mockResolvedValue(null);
    model.connect({ columns: 80, rows: 24 });
    expect(FakeSocket.instances).toHaveLength(2);
    const socket = lastSocket();
    socket.open();
    socket.receive({ type: 'attached', session: SESSION, nonce: 'n' });
    expect(model.status).toBe('connected');
    expect(model.refusal).toBe('');
    model.dispose();
  });

  it('keeps reconnecting after a failed handshake that was not a refusal', async () => {
    const model = new TerminalSessionModel({ session: SESSION, settings });
    model.connect({ columns: 80, rows: 24 });
    lastSocket().drop();
    await vi.advanceTimersByTimeAsync(300);
    await settle();
    expect(rest.streamRefusal).toHaveBeenCalledTimes(1);
    expect(model.status).toBe('reconnecting');
    expect(FakeSocket.instances).toHaveLength(2);
    model.dispose();
  });

  it('does not ask why when a connection that was attached drops', async () => {
    const model = new TerminalSessionModel({ session: SESSION, settings });
    model.connect({ columns: 80, rows: 24 });
    const socket = lastSocket();
    socket.open();
    socket.receive({ type: 'attached', session: SESSION, nonce: 'n' });
    socket.drop();
    await vi.advanceTimersByTimeAsync(300);
    await settle();
    expect(rest.streamRefusal).not.toHaveBeenCalled();
    expect(FakeSocket.instances).toHaveLength(2);
    model.dispose();
  });
});

describe('the scrollback replay', () => {
  it('is every binary frame until replayed, then live output', () => {
    const model = new TerminalSessionModel({ session: SESSION, settings });
    const chunks: IOutputChunk[] = [];
    model.output.connect((_, chunk) => chunks.push(chunk));
    model.connect({ columns: 80, rows: 24 });
    const socket = lastSocket();
    socket.open();
    socket.receive({ type: 'attached', session: SESSION, nonce: 'n' });
    socket.receive(new Uint8Array([1, 2]).buffer);
    socket.receive(new Uint8Array([3]).buffer);
    socket.receive({ type: 'replayed' });
    socket.receive(new Uint8Array([4]).buffer);
    expect(chunks.map(c => [Array.from(c.data), c.replay, !!c.last])).toEqual([
      [[1, 2], true, false],
      [[3], true, false],
      [[], true, true],
      [[4], false, false]
    ]);
    model.dispose();
  });
});
