/**
 * The conversation kept current by the session's events: a reducer,
 * idempotent on the events' sequence numbers.
 */

import type { AiEventAnswerCut, AiEventFinish } from '../../../api/openapi';
import { addUsage, newCard, newTurn, recordStatus } from './turns';
import type {
  ChatPart,
  IChatApproval,
  IChatError,
  IChatEvent,
  IChatState,
  IToolCard,
  ITurn,
  ITurnCut,
  IUsage
} from './types';

/**
 * The run an event belongs to (events of a plan or of the session have none).
 */
function runOf(event: IChatEvent): string | undefined {
  return 'run_id' in event ? event.run_id : undefined;
}

/**
 * The `agent` call whose sub-agent produced the event, if one did.
 */
function parentOf(event: IChatEvent): string | null {
  return ('parent_call_id' in event && event.parent_call_id) || null;
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
  const parent = parentOf(event);
  if (parent) {
    return updateTool(state, parent, card => ({
      ...card,
      children: change(card.children)
    }));
  }
  return updateTurn(state, runOf(event), turn => ({
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
 * The fields of an error: an `error` event's, or a failed request's body.
 */
export interface IErrorFields {
  message?: unknown;
  reason?: unknown;
  retry_after?: unknown;
  provider?: unknown;
}

/**
 * The error of an `error` event (or of a failed request, whose body is
 * checked here since no schema has vouched for it).
 */
export function chatError(
  fields: IErrorFields,
  runId: string | null = null
): IChatError {
  const text = (value: unknown): string | null =>
    typeof value === 'string' && value ? value : null;
  return {
    message: text(fields.message) ?? 'Something went wrong.',
    reason: text(fields.reason) ?? 'error',
    retryAfter:
      typeof fields.retry_after === 'number' &&
      Number.isFinite(fields.retry_after)
        ? fields.retry_after
        : null,
    provider: text(fields.provider),
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
  const parent = parentOf(event);
  switch (event.type) {
    case 'run_started': {
      const runId = event.run.id || event.run_id || null;
      const steps = event.run.steps;
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
        const turn = newTurn(runId, event.prompt);
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
      const index = event.index;
      return updateTurn({ ...state, step: index }, event.run_id, turn => ({
        ...turn,
        step: index
      }));
    }
    case 'text_delta':
    case 'reasoning_delta': {
      const text = event.text;
      if (!text) {
        return state;
      }
      const kind = event.type === 'text_delta' ? 'text' : 'reasoning';
      return updateParts(state, event, parts => appendText(parts, kind, text));
    }
    case 'tool_call_streaming':
    case 'tool_call_started': {
      const callId = event.call_id;
      if (!callId) {
        return state;
      }
      const existing = state.tools[callId];
      const card: IToolCard = {
        ...(existing ?? newCard(callId, event.name, parent)),
        name: event.name || (existing?.name ?? '')
      };
      if (event.type === 'tool_call_started') {
        card.arguments = event.arguments;
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
      return updateTool(state, event.call_id, card => ({
        ...card,
        status: recordStatus(event.status || 'done'),
        isError: event.is_error,
        durationMs: event.duration_ms,
        result: event.content,
        truncated: event.truncated,
        data: event.data
      }));
    }
    case 'approval_requested': {
      const approval = event.approval;
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
      const approval = event.approval;
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
      const id = event.approval_id;
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
      const approval = event.approval;
      if (!approval.call_id) {
        return state;
      }
      const rule = event.rule;
      return updateTool(state, approval.call_id, card => ({
        ...card,
        approvalId: approval.id,
        approval: 'auto',
        autoRule: rule
      }));
    }
    case 'plan_item_queued': {
      const approval = event.approval;
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
      const outcomes = event.outcomes;
      const failed = outcomes.filter(o => o.is_error || o.status === 'failed');
      const applied = outcomes.filter(o => o.status !== 'failed');
      const denied = applied.filter(o => o.status === 'denied').length;
      let text = `Plan applied: ${applied.length - denied} of ${
        state.plan.length || outcomes.length
      } changes.`;
      if (event.stopped) {
        text += ' Stopped at a failed item; the rest is still queued.';
      }
      const gone = new Set(applied.map(o => o.approval_id));
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
            approval: outcome.status || 'approved',
            isError: outcome.is_error,
            result: outcome.result || (card.result ?? '')
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
        input: event.input_tokens,
        output: event.output_tokens,
        cached: event.cached_tokens,
        cost: event.cost
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
          text: `Stopped after ${event.limit} steps (the limit).`,
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
      return { ...state, todos: event.todos };
    case 'suggestion': {
      const { command, explanation } = event;
      return command
        ? { ...state, suggestion: { command, explanation } }
        : state;
    }
    case 'rules':
      return { ...state, rules: event.rules };
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
      const reason = event.reason || 'stop';
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
        cut: turn.cut ?? (event.cut !== undefined ? turnCut(event) : null)
      }));
    }
    case 'deleted':
      return { ...state, deleted: true, running: false };
    default:
      return state;
  }
}

/**
 * How an answer was cut: from `answer_cut`, or the `finish` that repeats it.
 */
function turnCut(event: AiEventAnswerCut | AiEventFinish): ITurnCut {
  return {
    reason: event.cut || event.reason || 'length',
    tools: event.tools ?? [],
    limit: event.max_output_tokens ?? null,
    continueLimit: event.continue_max_output_tokens ?? null
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
