/**
 * The pieces of a conversation: an empty one, a new turn, a new tool card,
 * usage added up.
 */

import type { IChatState, IToolCard, ITurn, IUsage, ToolStatus } from './types';

const ZERO: IUsage = { input: 0, output: 0, cached: 0, cost: null };

/**
 * An empty conversation.
 */
export function emptyChat(sessionId: string): IChatState {
  return {
    sessionId,
    turns: [],
    tools: {},
    approvals: [],
    plan: [],
    planMode: false,
    running: false,
    runId: null,
    step: 0,
    usage: ZERO,
    error: null,
    todos: [],
    rules: [],
    suggestion: null,
    lastSeq: 0,
    stale: false,
    deleted: false
  };
}

export const NOTE = /^\[([\s\S]*)\]$/;
export const CUT_OFF = 'The answer was cut off.';

export function recordStatus(status: string): ToolStatus {
  switch (status) {
    case 'running':
    case 'pending_approval':
    case 'queued':
    case 'done':
    case 'error':
    case 'denied':
      return status;
    default:
      return 'done';
  }
}

export function newCard(
  callId: string,
  name: string,
  parentCallId: string | null = null
): IToolCard {
  return {
    callId,
    name,
    arguments: null,
    status: 'streaming',
    isError: false,
    durationMs: null,
    result: null,
    truncated: false,
    data: null,
    approvalId: null,
    approval: null,
    autoRule: null,
    parentCallId,
    children: []
  };
}

export function newTurn(runId: string | null, prompt: string | null): ITurn {
  return {
    key: runId ?? `turn-${Math.random().toString(36).slice(2, 10)}`,
    runId,
    prompt,
    parts: [],
    usage: null,
    running: false,
    step: 0,
    finish: null,
    cut: null,
    error: null
  };
}

export function addUsage(a: IUsage | null, b: IUsage): IUsage {
  const base = a ?? ZERO;
  return {
    input: base.input + b.input,
    output: base.output + b.output,
    cached: base.cached + b.cached,
    cost:
      base.cost === null && b.cost === null
        ? null
        : (base.cost ?? 0) + (b.cost ?? 0)
  };
}
