/**
 * The conversation as the server stores it (messages, tool-call records,
 * the session), built after a reload or when switching sessions.
 */

import { CUT_OFF, newCard, newTurn, NOTE, recordStatus } from './turns';
import type {
  IChatApproval,
  IChatState,
  IStoredMessage,
  IStoredSession,
  IStoredToolCall,
  IToolCard,
  ITurn,
  ToolStatus
} from './types';

/**
 * The conversation as stored: after a reload, or when switching sessions.
 * `previous` keeps what only live events knew (usage and errors per turn).
 */
export function buildChat(
  session: IStoredSession,
  messages: readonly IStoredMessage[],
  records: readonly IStoredToolCall[],
  previous?: IChatState
): IChatState {
  const byId = new Map(records.map(record => [record.id, record]));
  const tools: Record<string, IToolCard> = {};
  const turns: ITurn[] = [];
  let turn: ITurn | null = null;
  const current = (runId: string | null): ITurn => {
    if (!turn) {
      turn = newTurn(runId, null);
      turns.push(turn);
    }
    if (!turn.runId && runId) {
      turn.runId = runId;
      turn.key = runId;
    }
    return turn;
  };

  for (const message of messages) {
    if (message.role === 'user') {
      const note = message.run_id ? null : NOTE.exec(message.content.trim());
      if (note) {
        current(null).parts.push({ kind: 'note', text: note[1], tone: 'info' });
        continue;
      }
      turn = newTurn(message.run_id, message.content);
      turns.push(turn);
    } else if (message.role === 'assistant') {
      const target = current(message.run_id);
      if (message.reasoning) {
        target.parts.push({ kind: 'reasoning', text: message.reasoning });
      }
      if (message.content) {
        target.parts.push({ kind: 'text', text: message.content });
      }
      for (const call of message.tool_calls ?? []) {
        const record = byId.get(call.id);
        const card = newCard(call.id, call.name);
        card.arguments = record?.arguments ?? call.arguments;
        card.status = record ? recordStatus(record.status) : 'running';
        card.result = record?.result ?? null;
        card.isError = record?.is_error ?? false;
        card.durationMs = record?.duration_ms ?? null;
        card.data = record?.data ?? null;
        tools[call.id] = card;
        target.parts.push({ kind: 'tool', callId: call.id });
      }
      if (message.status === 'cut' && !message.tool_calls?.length) {
        target.parts.push({ kind: 'note', text: CUT_OFF, tone: 'warning' });
      }
    } else if (message.role === 'tool' && message.tool_call_id) {
      const card = tools[message.tool_call_id];
      if (card && card.result === null) {
        card.result = message.content;
        card.isError = Boolean(message.is_error);
        if (card.status === 'running') {
          card.status = message.is_error ? 'error' : 'done';
        }
      }
    }
  }

  const mark = (approval: IChatApproval, status: ToolStatus): void => {
    const card = approval.call_id ? tools[approval.call_id] : undefined;
    if (card) {
      card.status = status;
      card.approvalId = approval.id;
    }
  };
  session.pending_approvals.forEach(a => mark(a, 'pending_approval'));
  session.plan.forEach(a => mark(a, 'queued'));

  const runId = session.run?.id ?? null;
  const kept = new Map((previous?.turns ?? []).map(t => [t.key, t]));
  for (const item of turns) {
    const live = item.runId !== null && item.runId === runId;
    item.running = live;
    item.step = live ? (session.run?.steps ?? 0) : 0;
    const before = kept.get(item.key);
    if (before) {
      item.usage = before.usage;
      item.error = before.error;
      item.finish = before.finish;
      item.cut = before.cut;
      if (before.cut) {
        // The live cut says more than the stored message's status.
        item.parts = item.parts.filter(
          part => part.kind !== 'note' || part.text !== CUT_OFF
        );
      }
    }
    if (!live) {
      for (const part of item.parts) {
        const card = part.kind === 'tool' ? tools[part.callId] : undefined;
        if (
          card &&
          (card.status === 'running' || card.status === 'streaming')
        ) {
          card.status = 'cancelled';
        }
      }
    }
  }

  return {
    sessionId: session.id,
    turns,
    tools,
    approvals: [...session.pending_approvals],
    plan: [...session.plan],
    planMode: session.plan_mode,
    running: runId !== null,
    runId,
    step: session.run?.steps ?? 0,
    usage: {
      input: session.usage.input_tokens,
      output: session.usage.output_tokens,
      cached: session.usage.cached_tokens,
      cost: session.usage.cost ?? null
    },
    error: previous?.sessionId === session.id ? previous.error : null,
    todos: [...session.todos],
    rules: [...session.rules],
    suggestion: previous?.sessionId === session.id ? previous.suggestion : null,
    lastSeq: session.last_seq,
    stale: false,
    deleted: false
  };
}
