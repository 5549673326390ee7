import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import * as api from '../api/ai';
import type { IAiApproval, IAiSession } from '../api/ai';
import {
  FakeSocket,
  flush,
  SID,
  session as aiSession,
  settings
} from '../testing/ai';
import { SessionEventHub, sessionEvents } from './events';
import { AiSessionModel } from './model';
import { ReviewModel } from './review/model';

// The REST client is faked; the hub, the panel's session model and the
// review model are real, over a fake WebSocket class.
vi.mock('../api/ai', () => ({
  getSession: vi.fn(),
  getMessages: vi.fn(),
  getToolCalls: vi.fn(),
  getApproval: vi.fn(),
  decide: vi.fn(),
  eventsURL: vi.fn()
}));

const rest = vi.mocked(api);

function session(lastSeq: number): IAiSession {
  return aiSession({
    usage: { input_tokens: 0, output_tokens: 0, cached_tokens: 0 },
    last_seq: lastSeq
  });
}

function approval(status: 'pending' | 'approved'): IAiApproval {
  return {
    id: 'a1',
    session_id: SID,
    run_id: 'r1',
    call_id: 'c1',
    tool: 'bash',
    proposal: {
      tool: 'bash',
      kind: 'command',
      summary: 'ls',
      payload: { command: 'ls' },
      path: null,
      command: 'ls',
      diff: null,
      hunks: []
    },
    status,
    decision: null,
    decided_by: null,
    created_at: 1_700_000_000,
    decided_at: null,
    auto_rule: null
  };
}

beforeEach(() => {
  FakeSocket.instances = [];
  vi.stubGlobal('requestAnimationFrame', () => 0);
  vi.stubGlobal('cancelAnimationFrame', () => undefined);
  rest.eventsURL.mockImplementation(
    (id, after) => `ws://localhost:8888/ai/${id}/events?after=${after}`
  );
  rest.getSession.mockResolvedValue(session(3));
  rest.getMessages.mockResolvedValue([]);
  rest.getToolCalls.mockResolvedValue([]);
  rest.getApproval.mockResolvedValue(approval('pending'));
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.clearAllMocks();
});

describe('SessionEventHub', () => {
  it('has no subscription for a session no socket follows', () => {
    const hub = new SessionEventHub();
    expect(hub.follows(SID)).toBe(false);
    expect(
      hub.subscribe(
        SID,
        () => undefined,
        () => undefined
      )
    ).toBeNull();
  });

  it('hands every frame of a feed to its subscribers, even past one that throws', () => {
    const hub = new SessionEventHub();
    const feed = hub.feed(SID);
    const seen: string[] = [];
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    hub.subscribe(
      SID,
      () => {
        throw new Error('boom');
      },
      () => undefined
    );
    hub.subscribe(
      SID,
      frame => seen.push(frame),
      () => undefined
    );
    hub.subscribe(
      'other',
      frame => seen.push(`other ${frame}`),
      () => {}
    );
    feed.emit('a');
    feed.emit('b');
    expect(seen).toEqual(['a', 'b']);
    expect(error).toHaveBeenCalledTimes(2);
    error.mockRestore();
  });

  it('ends the subscriptions when the last feed of the session stops', () => {
    const hub = new SessionEventHub();
    const first = hub.feed(SID);
    const second = hub.feed(SID);
    const ended = vi.fn();
    const seen: string[] = [];
    hub.subscribe(SID, frame => seen.push(frame), ended);
    first.dispose();
    expect(ended).not.toHaveBeenCalled();
    second.emit('still');
    second.dispose();
    expect(ended).toHaveBeenCalledTimes(1);
    expect(hub.follows(SID)).toBe(false);
    second.emit('late');
    expect(seen).toEqual(['still']);
  });

  it('stops calling a disposed subscription', () => {
    const hub = new SessionEventHub();
    const feed = hub.feed(SID);
    const ended = vi.fn();
    const seen: string[] = [];
    const subscription = hub.subscribe(SID, f => seen.push(f), ended);
    subscription?.dispose();
    feed.emit('x');
    feed.dispose();
    expect(seen).toEqual([]);
    expect(ended).not.toHaveBeenCalled();
  });
});

describe('one events socket per session', () => {
  it('a review of the session the panel follows opens no socket of its own', async () => {
    const panel = new AiSessionModel({ id: SID, settings });
    await panel.load();
    expect(FakeSocket.instances).toHaveLength(1);
    expect(sessionEvents.follows(SID)).toBe(true);

    const review = new ReviewModel({ approvalId: 'a1', settings });
    await review.load();
    await flush();
    expect(review.mode).toBe('pending');
    expect(FakeSocket.instances).toHaveLength(1);

    // The approval is decided elsewhere: the panel's socket tells the review.
    rest.getApproval.mockResolvedValue(approval('approved'));
    FakeSocket.instances[0].receive({
      type: 'approval_resolved',
      seq: 4,
      session_id: SID,
      time: 0,
      approval: approval('approved')
    });
    await flush();
    expect(rest.getApproval).toHaveBeenCalledTimes(2);
    expect(review.mode).toBe('decided');

    review.dispose();
    panel.dispose();
    expect(sessionEvents.follows(SID)).toBe(false);
  });

  it('the review drops a replayed frame and opens its own socket when the panel stops following', async () => {
    const panel = new AiSessionModel({ id: SID, settings });
    await panel.load();
    const review = new ReviewModel({ approvalId: 'a1', settings });
    await review.load();
    const socket = FakeSocket.instances[0];
    const frame = {
      type: 'approval_resolved',
      seq: 5,
      session_id: SID,
      time: 0,
      approval: approval('approved')
    };
    socket.receive(frame);
    await flush();
    expect(rest.getApproval).toHaveBeenCalledTimes(2);
    socket.receive(frame); // a replay after a reconnect of the panel
    await flush();
    expect(rest.getApproval).toHaveBeenCalledTimes(2);

    panel.dispose();
    await flush();
    expect(FakeSocket.instances).toHaveLength(2);
    expect(FakeSocket.instances[1].url).toBe(
      `ws://localhost:8888/ai/${SID}/events?after=5`
    );
    review.dispose();
    expect(FakeSocket.instances[1].closed).toBe(true);
  });

  it('a review with no panel on its session opens its own socket, as before', async () => {
    const review = new ReviewModel({ approvalId: 'a1', settings });
    await review.load();
    await flush();
    expect(FakeSocket.instances).toHaveLength(1);
    expect(FakeSocket.instances[0].url).toBe(
      `ws://localhost:8888/ai/${SID}/events?after=3`
    );
    review.dispose();
  });
});
