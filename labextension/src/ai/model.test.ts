import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import * as api from '../api/ai';
import type {
  IAiApproval,
  IAiMessage,
  IAiRun,
  IAiSession,
  IAiToolCallRecord
} from '../api/ai';
import { TeraxAPIError } from '../api/request';
import type { IChatEvent } from '../common/ai/chat';
import { FakeSocket, flush, session, settings, SID } from '../testing/ai';
import { AiSessionModel, CONTINUE_PROMPT, requestError } from './model';

// The layer under test is the live model; the REST client below it is faked
// (the event reducer of ../common/ai stays real).
vi.mock('../api/ai', () => ({
  getSession: vi.fn(),
  getMessages: vi.fn(),
  getToolCalls: vi.fn(),
  startRun: vi.fn(),
  cancelRun: vi.fn(),
  decide: vi.fn(),
  applyPlan: vi.fn(),
  discardPlan: vi.fn(),
  setRules: vi.fn(),
  updateSession: vi.fn(),
  eventsURL: vi.fn()
}));

const rest = vi.mocked(api);

// -- fixtures ------------------------------------------------------------------

function run(id = 'r2'): IAiRun {
  return {
    id,
    agent: 'build',
    provider: 'openai',
    model: 'gpt-test',
    plan_mode: false,
    steps: 1,
    started_at: 1_700_000_200
  };
}

function message(
  id: number,
  role: IAiMessage['role'],
  content: string,
  fields: Partial<IAiMessage> = {}
): IAiMessage {
  return {
    id,
    run_id: 'r1',
    role,
    content,
    reasoning: '',
    tool_calls: [],
    tool_call_id: null,
    name: null,
    is_error: false,
    status: 'complete',
    created_at: 1_700_000_000 + id,
    ...fields
  };
}

const MESSAGES: IAiMessage[] = [
  message(1, 'user', 'hello'),
  message(2, 'assistant', 'Looking.', {
    tool_calls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.py' } }]
  }),
  message(3, 'tool', 'print(1)', { tool_call_id: 'c1', name: 'read_file' }),
  message(4, 'assistant', 'It prints 1.')
];

const RECORDS: IAiToolCallRecord[] = [
  {
    id: 'c1',
    session_id: SID,
    run_id: 'r1',
    name: 'read_file',
    arguments: { path: 'a.py' },
    status: 'done',
    result: 'print(1)',
    data: null,
    is_error: false,
    started_at: 1_700_000_001,
    ended_at: 1_700_000_002,
    duration_ms: 12
  }
];

function approval(
  id: string,
  callId: string,
  status: IAiApproval['status'] = 'pending'
): IAiApproval {
  return {
    id,
    session_id: SID,
    run_id: 'r2',
    call_id: callId,
    tool: 'write_file',
    proposal: {
      tool: 'write_file',
      kind: 'write',
      summary: 'Write b.py',
      path: 'b.py',
      command: null,
      diff: '+x = 1\n',
      hunks: [],
      payload: {}
    },
    status,
    decision: null,
    decided_by: null,
    created_at: 1_700_000_300,
    decided_at: null,
    auto_rule: null
  };
}

/**
 * An event of run r2 with the fields the model reads (hence the cast).
 */
function event(
  type: IChatEvent['type'],
  seq: number,
  fields: Record<string, unknown> = {}
): IChatEvent {
  return {
    type,
    seq,
    session_id: SID,
    time: 0,
    run_id: 'r2',
    ...fields
  } as IChatEvent;
}

/**
 * A promise settled from outside (a request still in flight).
 */
function deferred<T>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
} {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function apiError(message: string, reason: string): TeraxAPIError {
  return new TeraxAPIError(
    new Response(null, { status: 400, statusText: 'Bad Request' }),
    message,
    reason
  );
}

// -- the fake events socket and animation frames -------------------------------

function sockets(): FakeSocket[] {
  return FakeSocket.instances;
}

function lastSocket(): FakeSocket {
  const all = FakeSocket.instances;
  expect(all.length).toBeGreaterThan(0);
  return all[all.length - 1];
}

const frames = new Map<number, (time: number) => void>();
let nextFrame = 1;

/** Run the pending animation frames. */
function runFrame(): void {
  const pending = [...frames.values()];
  frames.clear();
  pending.forEach(callback => callback(0));
}

function url(after: number): string {
  return `ws://localhost:8888/terax/api/ai/sessions/${SID}/events?after=${after}`;
}

interface IHarness {
  model: AiSessionModel;
  /** `changed` emissions since the last reset. */
  changes: () => number;
  reset: () => void;
}

function create(): IHarness {
  const model = new AiSessionModel({ id: SID, settings });
  let count = 0;
  model.changed.connect(() => {
    count++;
  });
  return {
    model,
    changes: () => count,
    reset: () => {
      count = 0;
    }
  };
}

/**
 * A model loaded and connected (socket open), with the change count and the
 * REST call history cleared.
 */
async function loaded(
  fields: Partial<IAiSession> = {}
): Promise<IHarness & { socket: FakeSocket }> {
  rest.getSession.mockResolvedValue(session(fields));
  const harness = create();
  await harness.model.load();
  const socket = lastSocket();
  socket.open();
  runFrame();
  vi.clearAllMocks();
  defaults();
  harness.reset();
  return { ...harness, socket };
}

function defaults(): void {
  rest.eventsURL.mockImplementation((id, after) => {
    return `ws://localhost:8888/terax/api/ai/sessions/${id}/events?after=${after}`;
  });
  rest.getMessages.mockResolvedValue(MESSAGES);
  rest.getToolCalls.mockResolvedValue(RECORDS);
  rest.startRun.mockResolvedValue(run());
  rest.cancelRun.mockResolvedValue(undefined);
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  vi.stubGlobal('requestAnimationFrame', (callback: (time: number) => void) => {
    const id = nextFrame++;
    frames.set(id, callback);
    return id;
  });
  vi.stubGlobal('cancelAnimationFrame', (id: number) => {
    frames.delete(id);
  });
  vi.resetAllMocks();
  FakeSocket.instances = [];
  frames.clear();
  rest.getSession.mockResolvedValue(session());
  defaults();
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

// -- tests ---------------------------------------------------------------------

describe('AiSessionModel.load', () => {
  it('loads through REST, builds the chat, then follows the events after the last seq', async () => {
    const pending = deferred<IAiSession>();
    rest.getSession.mockReturnValue(pending.promise);
    const { model } = create();
    expect(model.loading).toBe(false);

    const loading = model.load();
    expect(model.loading).toBe(true);
    expect(sockets()).toHaveLength(0);

    pending.resolve(session({ last_seq: 7 }));
    await loading;

    expect(model.loading).toBe(false);
    expect(rest.getSession).toHaveBeenCalledWith(SID);
    expect(rest.getMessages).toHaveBeenCalledWith(SID);
    expect(rest.getToolCalls).toHaveBeenCalledWith(SID);
    expect(model.session?.title).toBe('Greeting');
    expect(model.state.turns).toHaveLength(1);
    expect(model.state.turns[0].prompt).toBe('hello');
    expect(model.state.turns[0].parts).toEqual([
      { kind: 'text', text: 'Looking.' },
      { kind: 'tool', callId: 'c1' },
      { kind: 'text', text: 'It prints 1.' }
    ]);
    expect(model.state.tools.c1.status).toBe('done');
    expect(model.state.lastSeq).toBe(7);
    expect(model.state.error).toBeNull();

    expect(sockets()).toHaveLength(1);
    expect(rest.eventsURL).toHaveBeenCalledWith(SID, 7, settings);
    expect(lastSocket().url).toBe(url(7));
    expect(model.connection).toBe('connecting');
    lastSocket().open();
    expect(model.connection).toBe('open');
  });

  it('does not connect before the messages and tool calls are in', async () => {
    const messages = deferred<IAiMessage[]>();
    rest.getMessages.mockReturnValue(messages.promise);
    const { model } = create();
    const loading = model.load();
    await flush();
    expect(rest.getToolCalls).toHaveBeenCalled();
    expect(sockets()).toHaveLength(0);
    expect(model.loading).toBe(true);
    messages.resolve(MESSAGES);
    await loading;
    expect(sockets()).toHaveLength(1);
  });

  it('shows a failed load as an error banner and still connects', async () => {
    rest.getSession.mockRejectedValue(
      apiError('No such session.', 'not_found')
    );
    const { model } = create();
    await model.load();

    expect(model.loading).toBe(false);
    expect(model.state.error).toMatchObject({
      message: 'No such session.',
      reason: 'not_found'
    });
    expect(model.state.turns).toEqual([]);
    expect(sockets()).toHaveLength(1);
    expect(lastSocket().url).toBe(url(0));
  });

  it('announces loading and its end in one coalesced change', async () => {
    const { model, changes } = create();
    await model.load();
    expect(changes()).toBe(0);
    runFrame();
    expect(changes()).toBe(1);
    expect(model.loading).toBe(false);
  });
});

describe('AiSessionModel events', () => {
  it('applies the events of a run to the chat', async () => {
    const { model, socket } = await loaded();
    socket.receive(
      event('run_started', 4, { run: { id: 'r2', steps: 0 }, prompt: 'more' })
    );
    socket.receive(event('step', 5, { index: 1 }));
    socket.receive(event('text_delta', 6, { text: 'Sure, ' }));
    socket.receive(event('text_delta', 7, { text: 'here.' }));

    expect(model.state.running).toBe(true);
    expect(model.state.runId).toBe('r2');
    expect(model.state.lastSeq).toBe(7);
    expect(model.state.turns).toHaveLength(2);
    const turn = model.state.turns[1];
    expect(turn.prompt).toBe('more');
    expect(turn.running).toBe(true);
    expect(turn.parts).toEqual([{ kind: 'text', text: 'Sure, here.' }]);
  });

  it('emits one change per frame for a burst of events', async () => {
    const { socket, changes } = await loaded();
    socket.receive(
      event('run_started', 4, { run: { id: 'r2', steps: 0 }, prompt: 'more' })
    );
    for (let seq = 5; seq < 25; seq++) {
      socket.receive(event('text_delta', seq, { text: 'x' }));
    }
    expect(changes()).toBe(0);
    runFrame();
    expect(changes()).toBe(1);
    // The timer fallback of the same emission was cleared.
    await vi.advanceTimersByTimeAsync(1000);
    expect(changes()).toBe(1);

    socket.receive(event('text_delta', 25, { text: 'y' }));
    runFrame();
    expect(changes()).toBe(2);
  });

  it('emits after 100 ms when no frame comes (background tab)', async () => {
    const { socket, changes } = await loaded();
    socket.receive(event('text_delta', 4, { text: 'a' }));
    socket.receive(event('text_delta', 5, { text: 'b' }));
    await vi.advanceTimersByTimeAsync(99);
    expect(changes()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(changes()).toBe(1);
    // The frame of the same emission was cancelled.
    expect(frames.size).toBe(0);
  });

  it('ignores events already applied and frames that are not JSON', async () => {
    const { model, socket, changes } = await loaded();
    const before = model.state;
    socket.receive(event('text_delta', 3, { text: 'old' }));
    socket.receive('not json');
    expect(model.state).toBe(before);
    runFrame();
    await vi.advanceTimersByTimeAsync(200);
    expect(changes()).toBe(0);
  });

  it('keeps the session rules in step with a rules event', async () => {
    const { model, socket } = await loaded();
    const rules = [{ tool: 'read_file' }];
    socket.receive(event('rules', 4, { rules }));
    expect(model.state.rules).toEqual(rules);
    expect(model.session?.rules).toEqual(rules);
  });
});

describe('AiSessionModel reconnection', () => {
  async function expectReconnectAfter(ms: number): Promise<FakeSocket> {
    const count = sockets().length;
    await vi.advanceTimersByTimeAsync(ms - 1);
    await flush();
    expect(sockets()).toHaveLength(count);
    await vi.advanceTimersByTimeAsync(1);
    await flush();
    expect(sockets()).toHaveLength(count + 1);
    return lastSocket();
  }

  it('retries a dropped socket after a backoff, replaying after the last event applied', async () => {
    const { model, socket, changes } = await loaded();
    socket.receive(
      event('run_started', 4, { run: { id: 'r2', steps: 0 }, prompt: 'more' })
    );
    socket.receive(event('text_delta', 5, { text: 'ab' }));
    runFrame();
    const emitted = changes();

    socket.drop();
    expect(model.connection).toBe('retrying');
    runFrame();
    expect(changes()).toBe(emitted + 1);
    expect(rest.getSession).not.toHaveBeenCalled();

    rest.getSession.mockResolvedValue(session({ last_seq: 5 }));
    const second = await expectReconnectAfter(500);
    expect(rest.getSession).toHaveBeenCalledTimes(1);
    expect(rest.getMessages).not.toHaveBeenCalled();
    expect(second.url).toBe(url(5));
    expect(model.connection).toBe('retrying');

    second.open();
    expect(model.connection).toBe('open');
    second.receive(event('text_delta', 6, { text: 'c' }));
    expect(model.state.lastSeq).toBe(6);
    expect(model.state.turns[1].parts).toEqual([{ kind: 'text', text: 'abc' }]);
  });

  it('backs off 500, 1000, 2000, 5000, then 10000 ms while the server is down', async () => {
    const { socket } = await loaded();
    rest.getSession.mockClear();
    rest.getSession.mockRejectedValue(new TypeError('Failed to fetch'));
    const count = sockets().length;
    socket.drop();
    let checks = 0;
    for (const ms of [500, 1000, 2000, 5000, 10000, 10000]) {
      await vi.advanceTimersByTimeAsync(ms - 1);
      await flush();
      expect(rest.getSession).toHaveBeenCalledTimes(checks);
      await vi.advanceTimersByTimeAsync(1);
      await flush();
      expect(rest.getSession).toHaveBeenCalledTimes(++checks);
    }
    // No socket is tried while the server does not answer.
    expect(sockets()).toHaveLength(count);
    // It answers again: the socket replays after the last event applied.
    rest.getSession.mockResolvedValue(session());
    const next = await expectReconnectAfter(10000);
    expect(next.url).toBe(url(3));
  });

  it('does not follow a restarted server before its reload succeeded', async () => {
    const { model, socket } = await loaded();
    socket.receive(event('text_delta', 4, { text: 'a' }));
    socket.drop();
    rest.getSession.mockResolvedValue(session({ last_seq: 2 }));
    rest.getMessages.mockRejectedValueOnce(new TypeError('Failed to fetch'));
    const count = sockets().length;
    // The reload fails: no socket after the old numbering's seq 4.
    await vi.advanceTimersByTimeAsync(500);
    await flush();
    expect(sockets()).toHaveLength(count);
    expect(model.connection).toBe('retrying');
    // The next try reloads, then follows the new numbering.
    const next = await expectReconnectAfter(1000);
    expect(next.url).toBe(url(2));
    next.open();
    next.receive(event('run_started', 3, { run: { id: 'r3', steps: 0 } }));
    expect(model.state.running).toBe(true);
  });

  it('resets the backoff once a socket opens', async () => {
    const { model, socket } = await loaded();
    socket.drop();
    let next = await expectReconnectAfter(500);
    next.drop();
    next = await expectReconnectAfter(1000);
    next.drop();
    next = await expectReconnectAfter(2000);

    next.open();
    expect(model.connection).toBe('open');
    next.drop();
    next = await expectReconnectAfter(500);
    expect(model.connection).toBe('retrying');
    next.open();
    expect(model.connection).toBe('open');
  });

  it('reloads through REST before connecting when the server restarted', async () => {
    const { model, socket } = await loaded();
    socket.receive(event('text_delta', 4, { text: 'a' }));
    socket.receive(event('text_delta', 5, { text: 'b' }));
    expect(model.state.lastSeq).toBe(5);
    socket.drop();

    // The restarted server numbers its events from 0 again.
    rest.getSession.mockResolvedValue(session({ last_seq: 2 }));
    const messages = deferred<IAiMessage[]>();
    rest.getMessages.mockReturnValue(messages.promise);
    await vi.advanceTimersByTimeAsync(500);
    await flush();
    expect(rest.getMessages).toHaveBeenCalledTimes(1);
    expect(sockets()).toHaveLength(1);

    messages.resolve([
      ...MESSAGES,
      message(5, 'user', 'again', { run_id: 'r9' })
    ]);
    await flush();
    expect(sockets()).toHaveLength(2);
    expect(lastSocket().url).toBe(url(2));
    expect(model.state.lastSeq).toBe(2);
    expect(model.state.turns.map(t => t.prompt)).toEqual(['hello', 'again']);

    // The new numbering is followed, not ignored as already seen.
    lastSocket().receive(event('text_delta', 3, { text: 'new', run_id: 'r9' }));
    expect(model.state.lastSeq).toBe(3);
    expect(model.state.turns[1].parts).toEqual([{ kind: 'text', text: 'new' }]);
  });

  it('does not reload through REST when the server kept its numbering', async () => {
    const { socket } = await loaded();
    socket.receive(event('text_delta', 4, { text: 'a' }));
    socket.drop();
    rest.getSession.mockResolvedValue(session({ last_seq: 9 }));
    const next = await expectReconnectAfter(500);
    expect(rest.getMessages).not.toHaveBeenCalled();
    expect(next.url).toBe(url(4));
  });

  it('reconnects at once after the last applied event on overflow', async () => {
    const { model, socket, changes } = await loaded();
    socket.receive(event('text_delta', 4, { text: 'a' }));
    socket.receive(event('text_delta', 5, { text: 'b' }));
    runFrame();
    const emitted = changes();
    socket.receive({ type: 'overflow', seq: 5 });
    // The panel hears that the connection is being made again.
    expect(model.connection).toBe('connecting');
    runFrame();
    expect(changes()).toBe(emitted + 1);

    expect(socket.closed).toBe(true);
    expect(sockets()).toHaveLength(2);
    expect(lastSocket().url).toBe(url(5));
    expect(model.state.stale).toBe(false);
    expect(rest.getSession).not.toHaveBeenCalled();
    expect(rest.getMessages).not.toHaveBeenCalled();

    // The old socket's own close does not start another connection.
    socket.drop();
    await vi.advanceTimersByTimeAsync(20_000);
    await flush();
    expect(sockets()).toHaveLength(2);
  });

  it('reloads through REST, then reconnects, when events were missed (resync)', async () => {
    const { model, socket } = await loaded();
    rest.getSession.mockResolvedValue(session({ last_seq: 40 }));
    const messages = deferred<IAiMessage[]>();
    rest.getMessages.mockReturnValue(messages.promise);

    socket.receive({ type: 'resync', seq: 40, session_id: SID });
    expect(socket.closed).toBe(true);
    expect(model.connection).toBe('idle');
    await flush();
    expect(rest.getMessages).toHaveBeenCalledTimes(1);
    expect(sockets()).toHaveLength(1);

    messages.resolve(MESSAGES);
    await flush();
    expect(model.state.stale).toBe(false);
    expect(model.state.lastSeq).toBe(40);
    expect(sockets()).toHaveLength(2);
    expect(lastSocket().url).toBe(url(40));

    // The closed socket's own close does not start another connection.
    socket.drop();
    await vi.advanceTimersByTimeAsync(20_000);
    await flush();
    expect(sockets()).toHaveLength(2);
  });
});

describe('AiSessionModel deletion and run ends', () => {
  it('emits deleted and stops following a deleted session', async () => {
    const { model, socket } = await loaded();
    let deleted = 0;
    model.deleted.connect(() => {
      deleted++;
    });
    socket.receive(event('deleted', 4));

    expect(deleted).toBe(1);
    expect(model.state.deleted).toBe(true);
    expect(socket.closed).toBe(true);
    expect(model.connection).toBe('idle');

    socket.drop();
    await vi.advanceTimersByTimeAsync(60_000);
    await flush();
    expect(sockets()).toHaveLength(1);
    expect(rest.getSession).not.toHaveBeenCalled();
  });

  it('does not reconnect a deleted session when its socket closes', async () => {
    const { model, socket } = await loaded();
    const onclose = socket.onclose;
    socket.receive(event('deleted', 4));
    expect(model.state.deleted).toBe(true);
    onclose?.({ code: 1000 });
    await vi.advanceTimersByTimeAsync(60_000);
    await flush();
    expect(sockets()).toHaveLength(1);
    expect(model.connection).toBe('idle');
  });

  it('emits runEnded on a run finish and reloads the session title', async () => {
    const { model, socket, changes } = await loaded({ title: '' });
    const ended: string[] = [];
    model.runEnded.connect((_, reason) => {
      ended.push(reason);
    });
    socket.receive(
      event('run_started', 4, { run: { id: 'r2', steps: 0 }, prompt: 'more' })
    );
    socket.receive(event('text_delta', 5, { text: 'done' }));
    runFrame();
    const emitted = changes();

    rest.getSession.mockResolvedValue(session({ title: 'More', last_seq: 6 }));
    socket.receive(event('finish', 6, { reason: 'stop' }));

    expect(ended).toEqual(['stop']);
    expect(model.state.running).toBe(false);
    expect(model.state.turns[1].finish).toBe('stop');
    expect(rest.getSession).toHaveBeenCalledWith(SID);
    expect(rest.getMessages).not.toHaveBeenCalled();
    await flush();
    expect(model.session?.title).toBe('More');
    runFrame();
    expect(changes()).toBe(emitted + 1);
  });

  it('passes the finish reason on', async () => {
    const { model, socket } = await loaded();
    const ended: string[] = [];
    model.runEnded.connect((_, reason) => {
      ended.push(reason);
    });
    socket.receive(event('finish', 4, { reason: 'cancelled' }));
    expect(ended).toEqual(['cancelled']);
  });

  it('reloads the messages when a run it was loaded in the middle of ends', async () => {
    const { model, socket } = await loaded({ run: run('r1'), last_seq: 3 });
    expect(model.state.running).toBe(true);
    rest.getSession.mockResolvedValue(session({ last_seq: 4 }));
    const count = sockets().length;
    socket.receive(event('finish', 4, { reason: 'stop', run_id: 'r1' }));
    await flush();
    expect(rest.getMessages).toHaveBeenCalledTimes(1);
    expect(rest.getToolCalls).toHaveBeenCalledTimes(1);
    expect(model.state.running).toBe(false);
    // The socket was closed for the reload and follows after its snapshot.
    expect(socket.closed).toBe(true);
    expect(sockets()).toHaveLength(count + 1);
    const next = lastSocket();
    expect(next.url).toBe(url(4));
    next.open();

    // Only once: the next finish just reloads the title.
    vi.clearAllMocks();
    defaults();
    next.receive(event('finish', 5, { reason: 'stop' }));
    await flush();
    expect(rest.getSession).toHaveBeenCalledTimes(1);
    expect(rest.getMessages).not.toHaveBeenCalled();
  });

  it('loses no event of a next run that starts during the reload at a finish', async () => {
    const { model, socket } = await loaded({ run: run('r1'), last_seq: 3 });
    rest.getSession.mockResolvedValue(session({ last_seq: 4 }));
    const messages = deferred<IAiMessage[]>();
    rest.getMessages.mockReturnValueOnce(messages.promise);
    socket.receive(event('finish', 4, { reason: 'stop', run_id: 'r1' }));
    // Sent while the reload is pending: the closed socket does not apply it.
    socket.receive(event('run_started', 5, { run: { id: 'r2', steps: 0 } }));
    messages.resolve(MESSAGES);
    await flush();
    const next = lastSocket();
    expect(next.url).toBe(url(4));
    next.open();
    // The server replays what came after the snapshot.
    next.receive(event('run_started', 5, { run: { id: 'r2', steps: 0 } }));
    next.receive(event('text_delta', 6, { text: 'fresh' }));
    expect(model.state.running).toBe(true);
    expect(model.state.lastSeq).toBe(6);
  });

  it('ends a run once even when its finish arrives again', async () => {
    const { model, socket } = await loaded({ run: run('r1'), last_seq: 3 });
    rest.getSession.mockResolvedValue(session({ last_seq: 4 }));
    socket.receive(event('finish', 4, { reason: 'stop', run_id: 'r1' }));
    await flush();
    const next = lastSocket();
    next.open();
    const ended: string[] = [];
    model.runEnded.connect((_, reason) => ended.push(reason));
    vi.clearAllMocks();
    defaults();
    next.receive(event('finish', 4, { reason: 'stop', run_id: 'r1' }));
    next.receive(event('finish', 2, { reason: 'stop', run_id: 'r1' }));
    await flush();
    expect(ended).toEqual([]);
    expect(rest.getSession).not.toHaveBeenCalled();
  });
});

describe('AiSessionModel.send', () => {
  it('starts a run with the trimmed prompt', async () => {
    const { model } = await loaded();
    const started = deferred<IAiRun>();
    rest.startRun.mockReturnValue(started.promise);

    const sending = model.send('  explain a.py \n');
    expect(model.busy).toBe(true);
    expect(rest.startRun).toHaveBeenCalledWith(SID, 'explain a.py');
    started.resolve(run());
    expect(await sending).toBe(true);
    expect(model.busy).toBe(false);
    // Titled already: no reload of the session.
    expect(rest.getSession).not.toHaveBeenCalled();
  });

  it('continues with a higher output limit for that run only', async () => {
    const { model } = await loaded();
    rest.startRun.mockResolvedValue(run());
    expect(await model.continueWithLimit(8192)).toBe(true);
    expect(rest.startRun).toHaveBeenCalledWith(SID, CONTINUE_PROMPT, {
      max_output_tokens: 8192
    });
    await model.send('next');
    expect(rest.startRun).toHaveBeenLastCalledWith(SID, 'next');
  });

  it('refuses an empty prompt', async () => {
    const { model } = await loaded();
    expect(await model.send('')).toBe(false);
    expect(await model.send('  \n\t ')).toBe(false);
    expect(rest.startRun).not.toHaveBeenCalled();
    expect(model.busy).toBe(false);
  });

  it('refuses while a run is going', async () => {
    const { model, socket } = await loaded();
    socket.receive(
      event('run_started', 4, { run: { id: 'r2', steps: 0 }, prompt: 'more' })
    );
    expect(model.state.running).toBe(true);
    expect(await model.send('another')).toBe(false);
    expect(rest.startRun).not.toHaveBeenCalled();
  });

  it('shows the reason of a refused run and returns false', async () => {
    const { model, changes } = await loaded();
    rest.startRun.mockRejectedValue(
      apiError('Set OPENAI_API_KEY to use openai.', 'missing_key')
    );
    expect(await model.send('hi')).toBe(false);
    expect(model.busy).toBe(false);
    expect(model.state.error).toMatchObject({
      message: 'Set OPENAI_API_KEY to use openai.',
      reason: 'missing_key'
    });
    runFrame();
    expect(changes()).toBe(1);
  });

  it('shows a network failure as request_failed', async () => {
    const { model } = await loaded();
    rest.startRun.mockRejectedValue(new TypeError('Failed to fetch'));
    expect(await model.send('hi')).toBe(false);
    expect(model.state.error).toMatchObject({
      message: 'Failed to fetch',
      reason: 'request_failed'
    });
  });

  it('clears the previous error banner', async () => {
    const { model } = await loaded();
    model.setError(requestError(apiError('Rate limited.', 'rate_limited')));
    expect(model.state.error?.reason).toBe('rate_limited');
    expect(await model.send('hi')).toBe(true);
    expect(model.state.error).toBeNull();
  });

  it('reloads the title after the first prompt of an untitled session', async () => {
    const { model } = await loaded({ title: '' });
    rest.getSession.mockResolvedValue(session({ title: 'Explain a.py' }));
    expect(await model.send('explain a.py')).toBe(true);
    expect(rest.getSession).toHaveBeenCalledWith(SID);
    expect(model.session?.title).toBe('Explain a.py');
  });
});

describe('AiSessionModel.dispose', () => {
  it('closes the socket and never reconnects', async () => {
    const { model, socket } = await loaded();
    const onclose = socket.onclose;
    model.dispose();
    expect(model.isDisposed).toBe(true);
    expect(socket.closed).toBe(true);
    expect(model.connection).toBe('idle');

    // The close arrives after the model is gone.
    onclose?.({ code: 1000 });
    socket.drop();
    await vi.advanceTimersByTimeAsync(60_000);
    await flush();
    expect(sockets()).toHaveLength(1);
    expect(rest.getSession).not.toHaveBeenCalled();
  });

  it('cancels a pending retry', async () => {
    const { model, socket } = await loaded();
    socket.drop();
    expect(model.connection).toBe('retrying');
    model.dispose();
    await vi.advanceTimersByTimeAsync(60_000);
    await flush();
    expect(rest.getSession).not.toHaveBeenCalled();
    expect(sockets()).toHaveLength(1);
  });

  it('does not connect when disposed during a reconnect', async () => {
    const { model, socket } = await loaded();
    const check = deferred<IAiSession>();
    rest.getSession.mockReturnValue(check.promise);
    socket.drop();
    await vi.advanceTimersByTimeAsync(500);
    expect(rest.getSession).toHaveBeenCalledTimes(1);
    model.dispose();
    check.resolve(session());
    await flush();
    expect(sockets()).toHaveLength(1);
  });

  it('does not connect when disposed during the load', async () => {
    const check = deferred<IAiSession>();
    rest.getSession.mockReturnValue(check.promise);
    const { model } = create();
    const loading = model.load();
    model.dispose();
    check.resolve(session());
    await loading;
    expect(sockets()).toHaveLength(0);
    expect(model.session).toBeNull();
    expect(model.loading).toBe(false);
  });

  it('stops emitting changes, pending ones included', async () => {
    const { model, socket, changes } = await loaded();
    socket.receive(event('text_delta', 4, { text: 'a' }));
    expect(frames.size).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    model.dispose();
    expect(frames.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    runFrame();
    await vi.advanceTimersByTimeAsync(1000);
    model.setError(null);
    model.dismissSuggestion();
    runFrame();
    await vi.advanceTimersByTimeAsync(1000);
    expect(changes()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('AiSessionModel.approvalStatus', () => {
  it('tells pending, queued and unknown approvals apart', async () => {
    const { model, socket } = await loaded({
      run: run('r2'),
      pending_approvals: [approval('a1', 'c1')]
    });
    expect(model.approvalStatus('a1')).toBe('pending');
    expect(model.approvalStatus('a2')).toBeNull();

    socket.receive(
      event('plan_item_queued', 4, { approval: approval('a2', 'c2', 'queued') })
    );
    expect(model.approvalStatus('a2')).toBe('queued');

    socket.receive(
      event('approval_resolved', 5, {
        approval: approval('a1', 'c1', 'approved')
      })
    );
    expect(model.approvalStatus('a1')).toBeNull();
    expect(model.approvalStatus('a2')).toBe('queued');
    expect(model.approvalStatus('nope')).toBeNull();
  });
});

describe('requestError', () => {
  it('keeps the reason of an API error and marks others request_failed', () => {
    expect(requestError(apiError('Nope.', 'forbidden'))).toMatchObject({
      message: 'Nope.',
      reason: 'forbidden'
    });
    expect(requestError('boom')).toMatchObject({
      message: 'boom',
      reason: 'request_failed'
    });
  });
});
