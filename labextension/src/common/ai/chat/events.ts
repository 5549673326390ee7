/**
 * The conversation kept current by the session's events: a reducer,
 * idempotent on the events' sequence numbers.
 */

import { addUsage, newCard, newTurn, recordStatus } from './turns';
import type {
  ChatPart,
  IChatApproval,
  IChatError,
  IChatEvent,
  IChatRule,
  IChatState,
  IChatTodo,
  IToolCard,
  ITurn,
  ITurnCut,
  IUsage
} from './types';

function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function obj(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function lastTurnIndex(state: IChatState, runId: string | undefined): number {
  if (runId) {
    for (let i = state.turns.length - 1; i >= 0; i--) {
      if (state.turns[i].runId === runId) {
        return i;
      }
    }
  }
  return state.turns.length - 1;
}

function updateTurn(
  state: IChatState,
  runId: string | undefined,
  change: (turn: ITurn) => ITurn
): IChatState {
  let index = lastTurnIndex(state, runId);
  let turns = state.turns;
  if (index < 0) {
    turns = [newTurn(runId ?? null, null)];
    index = 0;
  }
  const next = turns.slice();
  next[index] = change(turns[index]);
  return { ...state, turns: next };
}

function updateTool(
  state: IChatState,
  callId: string,
  change: (card: IToolCard) => IToolCard
): IChatState {
  const card = state.tools[callId];
  if (!card) {
    return state;
  }
  return { ...state, tools: { ...state.tools, [callId]: change(card) } };
}

/**
 * Change the parts an event goes to: the turn's, or a sub-agent card's.
 */
function updateParts(
  state: IChatState,
  event: IChatEvent,
  change: (parts: ChatPart[]) => ChatPart[]
): IChatState {
  const parent = event.parent_call_id;
  if (parent) {
    return updateTool(state, parent, card => ({
      ...card,
      children: change(card.children)
    }));
  }
  return updateTurn(state, event.run_id, turn => ({
    ...turn,
    parts: change(turn.parts)
  }));
}

function appendText(
  parts: ChatPart[],
  kind: 'text' | 'reasoning',
  text: string
): ChatPart[] {
  const last = parts[parts.length - 1];
  if (last && last.kind === kind) {
    return [...parts.slice(0, -1), { kind, text: last.text + text }];
  }
  return [...parts, { kind, text }];
}

function withoutApproval(list: IChatApproval[], id: string): IChatApproval[] {
  return list.some(a => a.id === id) ? list.filter(a => a.id !== id) : list;
}

function withApproval(
  list: IChatApproval[],
  approval: IChatApproval
): IChatApproval[] {
  return [...list.filter(a => a.id !== approval.id), approval];
}

function asApproval(value: unknown): IChatApproval | null {
  const approval = obj(value);
  return approval && typeof approval.id === 'string'
    ? (approval as unknown as IChatApproval)
    : null;
}

function endTools(
  tools: Readonly<Record<string, IToolCard>>,
  parts: ChatPart[]
): Readonly<Record<string, IToolCard>> {
  let next = tools;
  const visit = (list: ChatPart[]): void => {
    for (const part of list) {
      if (part.kind !== 'tool') {
        continue;
      }
      const card = next[part.callId];
      if (!card) {
        continue;
      }
      if (['streaming', 'running', 'pending_approval'].includes(card.status)) {
        if (next === tools) {
          next = { ...tools };
        }
        (next as Record<string, IToolCard>)[part.callId] = {
          ...card,
          status: 'cancelled'
        };
      }
      visit(card.children);
    }
  };
  visit(parts);
  return next;
}

/**
 * The error of an `error` event (or a failed request).
 */
export function chatError(
  fields: Record<string, unknown>,
  runId: string | null = null
): IChatError {
  return {
    message: str(fields.message, 'Something went wrong.'),
    reason: str(fields.reason, 'error'),
    retryAfter: num(fields.retry_after),
    provider: typeof fields.provider === 'string' ? fields.provider : null,
    runId
  };
}

/**
 * Apply one event; events already applied (by `seq`) change nothing.
 */
export function applyEvent(state: IChatState, event: IChatEvent): IChatState {
  if (event.type === 'resync' || event.type === 'overflow') {
    return { ...state, stale: true };
  }
  if (event.seq <= state.lastSeq) {
    return state;
  }
  const next = reduce(state, event);
  return next.lastSeq === event.seq ? next : { ...next, lastSeq: event.seq };
}

/**
 * Apply events in order.
 */
export function applyEvents(
  state: IChatState,
  events: readonly IChatEvent[]
): IChatState {
  return events.reduce(applyEvent, state);
}

function reduce(state: IChatState, event: IChatEvent): IChatState {
  const parent = event.parent_call_id ?? null;
  switch (event.type) {
    case 'run_started': {
      const run = obj(event.run);
      const runId = str(run?.id, event.run_id ?? '') || null;
      const steps = num(run?.steps) ?? 0;
      let next: IChatState = {
        ...state,
        running: true,
        runId,
        step: steps,
        error: null,
        suggestion: null
      };
      const index = runId
        ? state.turns.findIndex(turn => turn.runId === runId)
        : -1;
      if (index < 0) {
        const turn = newTurn(runId, str(event.prompt));
        turn.running = true;
        next = { ...next, turns: [...state.turns, turn] };
      } else {
        next = updateTurn(next, runId ?? undefined, turn => ({
          ...turn,
          running: true
        }));
      }
      return next;
    }
    case 'step': {
      if (parent) {
        return state;
      }
      const index = num(event.index) ?? state.step + 1;
      return updateTurn({ ...state, step: index }, event.run_id, turn => ({
        ...turn,
        step: index
      }));
    }
    case 'text_delta':
    case 'reasoning_delta': {
      const text = str(event.text);
      if (!text) {
        return state;
      }
      const kind = event.type === 'text_delta' ? 'text' : 'reasoning';
      return updateParts(state, event, parts => appendText(parts, kind, text));
    }
    case 'tool_call_streaming':
    case 'tool_call_started': {
      const callId = str(event.call_id);
      if (!callId) {
        return state;
      }
      const existing = state.tools[callId];
      const card: IToolCard = {
        ...(existing ?? newCard(callId, str(event.name), parent)),
        name: str(event.name, existing?.name ?? '')
      };
      if (event.type === 'tool_call_started') {
        card.arguments = obj(event.arguments) ?? {};
        card.status = 'running';
      }
      const next = { ...state, tools: { ...state.tools, [callId]: card } };
      return existing
        ? next
        : updateParts(next, event, parts => [
            ...parts,
            { kind: 'tool', callId }
          ]);
    }
    case 'tool_call_finished': {
      const callId = str(event.call_id);
      const status = str(event.status, 'done');
      return updateTool(state, callId, card => ({
        ...card,
        status: recordStatus(status),
        isError: Boolean(event.is_error),
        durationMs: num(event.duration_ms),
        result: str(event.content),
        truncated: Boolean(event.truncated),
        data: obj(event.data)
      }));
    }
    case 'approval_requested': {
      const approval = asApproval(event.approval);
      if (!approval) {
        return state;
      }
      const next = {
        ...state,
        approvals: withApproval(state.approvals, approval)
      };
      return approval.call_id
        ? updateTool(next, approval.call_id, card => ({
            ...card,
            status: 'pending_approval',
            approvalId: approval.id
          }))
        : next;
    }
    case 'approval_resolved': {
      const approval = asApproval(event.approval);
      if (!approval) {
        return state;
      }
      const next = {
        ...state,
        approvals: withoutApproval(state.approvals, approval.id)
      };
      return approval.call_id
        ? updateTool(next, approval.call_id, card => ({
            ...card,
            approval: approval.status,
            status: card.status === 'pending_approval' ? 'running' : card.status
          }))
        : next;
    }
    case 'approval_expired': {
      const id = str(event.approval_id);
      const approval = state.approvals.find(a => a.id === id);
      const next = {
        ...state,
        approvals: withoutApproval(state.approvals, id)
      };
      return approval?.call_id
        ? updateTool(next, approval.call_id, card => ({
            ...card,
            approval: 'expired'
          }))
        : next;
    }
    case 'auto_approved': {
      const approval = asApproval(event.approval);
      if (!approval?.call_id) {
        return state;
      }
      const rule = obj(event.rule) as IChatRule | null;
      return updateTool(state, approval.call_id, card => ({
        ...card,
        approvalId: approval.id,
        approval: 'auto',
        autoRule: rule
      }));
    }
    case 'plan_item_queued': {
      const approval = asApproval(event.approval);
      if (!approval) {
        return state;
      }
      const next = { ...state, plan: withApproval(state.plan, approval) };
      return approval.call_id
        ? updateTool(next, approval.call_id, card => ({
            ...card,
            status: 'queued',
            approvalId: approval.id
          }))
        : next;
    }
    case 'plan_applied': {
      const outcomes = Array.isArray(event.outcomes)
        ? (event.outcomes as Array<Record<string, unknown>>)
        : [];
      const failed = outcomes.filter(o => o.is_error || o.status === 'failed');
      const applied = outcomes.filter(o => o.status !== 'failed');
      const denied = applied.filter(o => o.status === 'denied').length;
      let text = `Plan applied: ${applied.length - denied} of ${
        state.plan.length || outcomes.length
      } changes.`;
      if (event.stopped) {
        text += ' Stopped at a failed item; the rest is still queued.';
      }
      const gone = new Set(applied.map(o => str(o.approval_id)));
      let next: IChatState = {
        ...state,
        plan: state.plan.filter(a => !gone.has(a.id))
      };
      for (const outcome of outcomes) {
        const approval = state.plan.find(a => a.id === outcome.approval_id);
        if (approval?.call_id) {
          const stillQueued = outcome.status === 'failed';
          next = updateTool(next, approval.call_id, card => ({
            ...card,
            status: stillQueued
              ? 'queued'
              : outcome.status === 'denied'
                ? 'denied'
                : outcome.is_error
                  ? 'error'
                  : 'done',
            approval: str(outcome.status, 'approved'),
            isError: Boolean(outcome.is_error),
            result: str(outcome.result, card.result ?? '')
          }));
        }
      }
      return updateTurn(next, undefined, turn => ({
        ...turn,
        parts: [
          ...turn.parts,
          { kind: 'note', text, tone: failed.length ? 'warning' : 'info' }
        ]
      }));
    }
    case 'plan_discarded': {
      let next: IChatState = { ...state, plan: [] };
      for (const approval of state.plan) {
        if (approval.call_id) {
          next = updateTool(next, approval.call_id, card => ({
            ...card,
            status: 'denied',
            approval: 'discarded'
          }));
        }
      }
      return updateTurn(next, undefined, turn => ({
        ...turn,
        parts: [
          ...turn.parts,
          { kind: 'note', text: 'Plan discarded.', tone: 'info' }
        ]
      }));
    }
    case 'usage': {
      const usage: IUsage = {
        input: num(event.input_tokens) ?? 0,
        output: num(event.output_tokens) ?? 0,
        cached: num(event.cached_tokens) ?? 0,
        cost: num(event.cost)
      };
      return updateTurn(
        { ...state, usage: addUsage(state.usage, usage) },
        event.run_id,
        turn => ({ ...turn, usage: addUsage(turn.usage, usage) })
      );
    }
    case 'compaction':
      return parent
        ? state
        : updateParts(state, event, parts => [
            ...parts,
            {
              kind: 'note',
              text: 'Older context was shortened to fit the model.',
              tone: 'info'
            }
          ]);
    case 'step_limit':
      return updateParts(state, event, parts => [
        ...parts,
        {
          kind: 'note',
          text: `Stopped after ${num(event.limit) ?? '?'} steps (the limit).`,
          tone: 'warning'
        }
      ]);
    case 'answer_cut': {
      const cut = turnCut(event);
      return parent
        ? updateParts(state, event, parts => [
            ...parts,
            { kind: 'note', text: cutNote(cut), tone: 'warning' }
          ])
        : updateTurn(state, event.run_id, turn => ({ ...turn, cut }));
    }
    case 'todos':
      return Array.isArray(event.todos)
        ? { ...state, todos: event.todos as IChatTodo[] }
        : state;
    case 'suggestion': {
      const command = str(event.command);
      return command
        ? {
            ...state,
            suggestion: { command, explanation: str(event.explanation) }
          }
        : state;
    }
    case 'rules':
      return Array.isArray(event.rules)
        ? { ...state, rules: event.rules as IChatRule[] }
        : state;
    case 'error': {
      if (parent) {
        return state;
      }
      const error = chatError(event, event.run_id ?? null);
      return updateTurn({ ...state, error }, event.run_id, turn => ({
        ...turn,
        error
      }));
    }
    case 'finish': {
      if (parent) {
        return state;
      }
      const reason = str(event.reason, 'stop');
      const index = lastTurnIndex(state, event.run_id);
      const ended = index >= 0 ? state.turns[index] : null;
      const tools = ended ? endTools(state.tools, ended.parts) : state.tools;
      const next: IChatState = {
        ...state,
        tools,
        running: false,
        runId: null,
        approvals: state.approvals.filter(a => a.run_id !== event.run_id)
      };
      return updateTurn(next, event.run_id, turn => ({
        ...turn,
        running: false,
        finish: reason,
        // The finish repeats the cut (a client that joined after answer_cut).
        cut: turn.cut ?? (typeof event.cut === 'string' ? turnCut(event) : null)
      }));
    }
    case 'deleted':
      return { ...state, deleted: true, running: false };
    default:
      return state;
  }
}

function turnCut(event: IChatEvent): ITurnCut {
  const tools = Array.isArray(event.tools)
    ? event.tools.filter((t): t is string => typeof t === 'string')
    : [];
  return {
    reason: str(event.cut ?? event.reason, 'length'),
    tools,
    limit: num(event.max_output_tokens),
    continueLimit: num(event.continue_max_output_tokens)
  };
}

/**
 * What the panel says of an answer the model did not end itself.
 */
export function cutNote(cut: ITurnCut): string {
  const limit =
    cut.limit !== null ? ` (${cut.limit.toLocaleString('en-US')} tokens)` : '';
  if (cut.reason === 'content_filter') {
    return "The provider's content filter stopped the answer.";
  }
  if (cut.tools.length) {
    const calls = cut.tools.join(', ');
    return (
      `The output limit${limit} cut off the call to ${calls} before its ` +
      'arguments were complete, so nothing was run.'
    );
  }
  return `The answer was cut off at the output limit${limit}.`;
}

/**
 * A failure the panel met itself (a request that failed).
 */
export function withError(
  state: IChatState,
  error: IChatError | null
): IChatState {
  return { ...state, error };
}
