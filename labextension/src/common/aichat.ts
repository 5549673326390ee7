/**
 * The conversation of an AI session as the panel shows it, DOM-free: built
 * from what the server stores (messages, tool-call records, the session) and
 * then kept current by the session's events (a reducer, idempotent on the
 * events' sequence numbers). Also the composer's small parsers.
 */

// -- what the server sends (structural subsets of src/api/ai.ts) -------------

/**
 * Token counts.
 */
export interface IUsage {
  input: number;
  output: number;
  cached: number;
  /** US dollars, when the model has prices (null: unknown). */
  cost: number | null;
}

/**
 * An auto-approve rule.
 */
export interface IChatRule {
  tool: string;
  path?: string;
  command_prefix?: string;
}

/**
 * A todo of the agent's list.
 */
export interface IChatTodo {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
}

/**
 * An approval (pending, queued in a plan, or decided).
 */
export interface IChatApproval {
  id: string;
  run_id: string | null;
  call_id: string | null;
  tool: string;
  status: string;
  proposal: {
    tool: string;
    kind: string;
    summary: string;
    path: string | null;
    command: string | null;
    diff: string | null;
    hunks: ReadonlyArray<{ index: number; header: string; lines: string[] }>;
    payload?: Record<string, unknown>;
  };
  decision: {
    status?: string;
    hunks?: number[] | null;
    message?: string | null;
  } | null;
  auto_rule?: IChatRule | null;
}

/**
 * A stored message.
 */
export interface IStoredMessage {
  id: number;
  run_id: string | null;
  role: string;
  content: string;
  reasoning?: string;
  tool_calls?: ReadonlyArray<{
    id: string;
    name: string;
    arguments: Record<string, unknown>;
  }>;
  tool_call_id?: string | null;
  is_error?: boolean;
  status: string;
}

/**
 * A stored tool call with its outcome.
 */
export interface IStoredToolCall {
  id: string;
  run_id: string | null;
  name: string;
  arguments: Record<string, unknown>;
  status: string;
  result: string | null;
  data: Record<string, unknown> | null;
  is_error: boolean;
  duration_ms: number | null;
}

/**
 * The parts of a session the conversation needs.
 */
export interface IStoredSession {
  id: string;
  plan_mode: boolean;
  rules: IChatRule[];
  todos: IChatTodo[];
  run: { id: string; steps: number } | null;
  pending_approvals: IChatApproval[];
  plan: IChatApproval[];
  usage: {
    input_tokens: number;
    output_tokens: number;
    cached_tokens: number;
    cost?: number | null;
  };
  last_seq: number;
}

/**
 * An event of the session's WebSocket.
 */
export interface IChatEvent {
  type: string;
  seq: number;
  run_id?: string;
  parent_call_id?: string;
  [key: string]: unknown;
}

// -- the conversation --------------------------------------------------------

/**
 * Where a tool call is.
 */
export type ToolStatus =
  | 'streaming'
  | 'running'
  | 'pending_approval'
  | 'queued'
  | 'done'
  | 'error'
  | 'denied'
  | 'cancelled';

/**
 * A piece of an answer, in order.
 */
export type ChatPart =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'tool'; callId: string }
  | { kind: 'note'; text: string; tone: 'info' | 'warning' };

/**
 * A tool call as a card (a sub-agent's calls and text are its children).
 */
export interface IToolCard {
  callId: string;
  name: string;
  arguments: Record<string, unknown> | null;
  status: ToolStatus;
  isError: boolean;
  durationMs: number | null;
  result: string | null;
  truncated: boolean;
  data: Record<string, unknown> | null;
  approvalId: string | null;
  /** How its approval ended: approved, partially_approved, denied, expired, auto. */
  approval: string | null;
  autoRule: IChatRule | null;
  parentCallId: string | null;
  children: ChatPart[];
}

/**
 * An actionable failure.
 */
export interface IChatError {
  message: string;
  /** bad_key, missing_key, provider_unreachable, rate_limited, ... */
  reason: string;
  retryAfter: number | null;
  provider: string | null;
  runId: string | null;
}

/**
 * How an answer ended that the model did not end itself.
 */
export interface ITurnCut {
  /** length (the output limit) or content_filter (the provider's filter). */
  reason: string;
  /** The tool calls the limit cut off (none of them ran). */
  tools: string[];
  /** The output limit of the run, in tokens. */
  limit: number | null;
  /** A higher limit to continue with, or null when there is none. */
  continueLimit: number | null;
}

/**
 * A prompt and the answer to it.
 */
export interface ITurn {
  key: string;
  runId: string | null;
  /** Null for an answer whose prompt is not stored. */
  prompt: string | null;
  parts: ChatPart[];
  /** Tokens of this turn (known for turns seen live). */
  usage: IUsage | null;
  running: boolean;
  step: number;
  /** stop, max_steps, output_limit, length, cancelled, error, ... */
  finish: string | null;
  /** Set when the output limit or a content filter ended the answer. */
  cut: ITurnCut | null;
  error: IChatError | null;
}

/**
 * A command the agent suggests the user runs.
 */
export interface IChatSuggestion {
  command: string;
  explanation: string;
}

/**
 * Everything the chat view shows.
 */
export interface IChatState {
  sessionId: string;
  turns: ITurn[];
  tools: Readonly<Record<string, IToolCard>>;
  /** Approvals waiting on the user. */
  approvals: IChatApproval[];
  /** Queued plan items (plan mode). */
  plan: IChatApproval[];
  planMode: boolean;
  running: boolean;
  runId: string | null;
  step: number;
  /** Tokens of the whole session. */
  usage: IUsage;
  /** The last error, until the next run starts or it is dismissed. */
  error: IChatError | null;
  todos: IChatTodo[];
  rules: IChatRule[];
  suggestion: IChatSuggestion | null;
  /** The number of the last event applied. */
  lastSeq: number;
  /** Events were missed (resync, overflow): reload through REST. */
  stale: boolean;
  deleted: boolean;
}

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

const NOTE = /^\[([\s\S]*)\]$/;
const CUT_OFF = 'The answer was cut off.';

function recordStatus(status: string): ToolStatus {
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

function newCard(
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

function newTurn(runId: string | null, prompt: string | null): ITurn {
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

function addUsage(a: IUsage | null, b: IUsage): IUsage {
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

// -- the reducer -------------------------------------------------------------

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

// -- views of the state ------------------------------------------------------

/**
 * What an error banner offers.
 */
export type ErrorAction = 'settings' | 'test' | 'retry' | 'new-session' | null;

/**
 * The action that fixes an error of this reason.
 */
export function errorAction(reason: string): ErrorAction {
  switch (reason) {
    case 'bad_key':
    case 'missing_key':
    case 'key_not_for_url': // a server key is not sent to this address: set your own
    case 'model_not_found':
    case 'no_model':
      return 'settings';
    case 'provider_unreachable':
      return 'test';
    case 'rate_limited':
    case 'provider_timeout':
    case 'stream_cut':
      return 'retry';
    case 'context_too_long':
      return 'new-session';
    default:
      return null;
  }
}

/**
 * The name of the key an error asks to set (`Set OPENAI_API_KEY ...`).
 */
export function keyNameIn(message: string): string | null {
  const match = /\b([A-Z][A-Z0-9_]*_(?:API_)?KEY)\b/.exec(message);
  return match ? match[1] : null;
}

/**
 * Token counts, short: 950, 12.3k, 1.2M.
 */
/**
 * A cost in US dollars, with the precision a turn's cost needs.
 */
export function formatCost(dollars: number): string {
  if (dollars === 0) {
    return '$0';
  }
  if (dollars < 0.01) {
    return `$${dollars.toFixed(4)}`;
  }
  return `$${dollars.toFixed(dollars < 1 ? 3 : 2)}`;
}

export function formatTokens(count: number): string {
  if (count < 1000) {
    return String(count);
  }
  if (count < 1_000_000) {
    const k = count / 1000;
    return `${k < 10 ? k.toFixed(1) : Math.round(k)}k`;
  }
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/**
 * A one-line summary of a tool call's arguments (its path, command or
 * pattern), for the card's header.
 */
export function toolSubject(
  card: Pick<IToolCard, 'name' | 'arguments'>
): string {
  const args = card.arguments ?? {};
  const keys = [
    'command',
    'path',
    'pattern',
    'agent',
    'id',
    'query',
    'url',
    'name',
    'ref',
    'text_contains',
    'title_contains',
    'key'
  ];
  for (const key of keys) {
    const value = args[key];
    if (typeof value === 'string' && value) {
      const line = value.split('\n')[0];
      return line.length > 80 ? `${line.slice(0, 77)}…` : line;
    }
  }
  return '';
}

/**
 * Whether an approval shows a diff review (edits and writes) rather than a
 * plain Approve/Deny.
 */
export function isEditApproval(approval: IChatApproval): boolean {
  return (
    approval.proposal.kind === 'edit' || approval.proposal.kind === 'write'
  );
}

/**
 * What the approval card of a browser workflow shows: where it runs (scope,
 * origin, version, side effect, the page it starts on) and the exact steps.
 */
export interface IWorkflowApprovalDetails {
  scope: string;
  origin: string;
  version: number;
  sideEffect: string;
  previousVersion: number | null;
  previousSideEffect: string | null;
  page: string | null;
  steps: string[];
  /**
   * The values the run will type, by input name: what the approval is for as
   * much as the steps are. ``secret`` ones (typed into a password-like field,
   * or named so) are shown masked.
   */
  inputs: IWorkflowInput[];
}

export interface IWorkflowInput {
  name: string;
  value: string;
  secret: boolean;
}

const SECRET_WORDS = /pass|secret|token|pin\b|otp|code|key|credential/i;

function workflowInputs(inputs: unknown, steps: unknown[]): IWorkflowInput[] {
  if (!inputs || typeof inputs !== 'object' || Array.isArray(inputs)) {
    return [];
  }
  const result: IWorkflowInput[] = [];
  for (const [name, raw] of Object.entries(inputs as Record<string, unknown>)) {
    const value = textOf(raw);
    if (value === `{{${name}}}`) {
      continue; // only the placeholder is left (after a restart): nothing to show
    }
    const target = steps
      .map(step => (step ?? {}) as Record<string, unknown>)
      .find(step => step.kind === 'type' && step.value === `{{${name}}}`);
    const secret =
      SECRET_WORDS.test(name) || SECRET_WORDS.test(textOf(target?.name));
    result.push({ name, value, secret });
  }
  return result.sort((a, b) => a.name.localeCompare(b.name));
}

const PLACEHOLDER = /^\{\{[A-Za-z_][A-Za-z0-9_]{0,63}\}\}$/;

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * One step as a line: typed text only ever as its {{placeholder}} (the server
 * sends nothing else; anything that is not one is not shown).
 */
export function workflowStepText(step: unknown): string {
  const fields = (step ?? {}) as Record<string, unknown>;
  const target = `${textOf(fields.role)} '${textOf(fields.name)}'`;
  switch (fields.kind) {
    case 'navigate':
      return `open ${textOf(fields.url)}`;
    case 'click':
      return `click ${target}`;
    case 'type': {
      const value = textOf(fields.value);
      return `type ${PLACEHOLDER.test(value) ? value : '(a value)'} into ${target}`;
    }
    default:
      return textOf(fields.kind) || '(a step)';
  }
}

/**
 * The details of a browser-workflow approval (a replay, or a save that
 * replaces a destructive workflow or lowers a side effect), or null for any
 * other proposal.
 */
export function workflowApprovalDetails(
  proposal: IChatApproval['proposal']
): IWorkflowApprovalDetails | null {
  if (proposal.kind !== 'replay' && proposal.kind !== 'workflow') {
    return null;
  }
  const shown = proposal.payload?.shown as Record<string, unknown> | undefined;
  if (!shown || typeof shown !== 'object') {
    return null;
  }
  const number = (value: unknown): number | null =>
    typeof value === 'number' ? value : null;
  const url = textOf(shown.url);
  const title = textOf(shown.title);
  return {
    scope: textOf(shown.scope),
    origin: textOf(shown.origin),
    version: number(shown.version) ?? 0,
    sideEffect: textOf(shown.side_effect),
    previousVersion: number(shown.previous_version),
    previousSideEffect: textOf(shown.previous_side_effect) || null,
    page: url ? (title ? `${url} (${title})` : url) : null,
    steps: Array.isArray(shown.steps) ? shown.steps.map(workflowStepText) : [],
    inputs: workflowInputs(
      proposal.payload?.inputs,
      Array.isArray(shown.steps) ? shown.steps : []
    )
  };
}

// -- the composer ------------------------------------------------------------

/**
 * A slash command typed alone in the composer.
 */
export type SlashCommand = 'plan' | 'init' | 'new' | 'clear' | null;

/**
 * The slash command a prompt is, if it is one.
 */
export function slashCommand(text: string): SlashCommand {
  const match = /^\/(plan|init|new|clear)\s*$/.exec(text.trim());
  return match ? (match[1] as SlashCommand) : null;
}

/**
 * `/replay <workflow> [name=value ...]`: replay a saved browser workflow with
 * no model call. Values may be quoted ("two words" or 'two words').
 */
export interface IReplayCommand {
  workflow: string;
  inputs: Record<string, string>;
}

/**
 * The replay a prompt asks for; null when it is no `/replay`; an error
 * message when it is one but cannot be read.
 */
export function replayCommand(text: string): IReplayCommand | string | null {
  const match = /^\/replay(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) {
    return null;
  }
  const rest = (match[1] ?? '').trim();
  const word = /^([a-z0-9][a-z0-9_.-]*)(?:\s+|$)/.exec(rest);
  if (!word) {
    return 'Name the workflow: /replay <workflow> [name=value ...]';
  }
  const inputs: Record<string, string> = {};
  const pair =
    /^([A-Za-z_][A-Za-z0-9_]*)=(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s"'][^\s]*|))(?:\s+|$)/;
  let tail = rest.slice(word[0].length);
  while (tail) {
    const found = pair.exec(tail);
    if (!found) {
      return `Cannot read the inputs at "${tail.slice(0, 40)}": write name=value (quote values with spaces).`;
    }
    const value =
      found[2] !== undefined
        ? found[2].replace(/\\(.)/g, '$1')
        : (found[3] ?? found[4] ?? '');
    inputs[found[1]] = value;
    tail = tail.slice(found[0].length);
  }
  return { workflow: word[1], inputs };
}

/**
 * The prompt `/init` sends.
 */
export const INIT_PROMPT =
  'Look around this project (its layout, build and test commands, conventions) and write ' +
  'a concise TERAX.md at the workspace root for future sessions: what the project is, ' +
  'how to build, test and lint it, and the conventions to follow. Read existing docs ' +
  'first; if TERAX.md exists, improve it rather than starting over.';

/**
 * A word being typed at the caret that starts with `trigger` (`@` for a
 * file, `#` for a snippet): its start offset and the text after the trigger.
 */
export interface ITokenAtCaret {
  start: number;
  end: number;
  query: string;
}

/**
 * The `@...` or `#...` word the caret is in, if any (the trigger must start
 * the text or follow whitespace).
 */
export function tokenAtCaret(
  text: string,
  caret: number,
  trigger: '@' | '#'
): ITokenAtCaret | null {
  let start = caret;
  while (start > 0 && !/\s/.test(text[start - 1])) {
    start--;
  }
  if (text[start] !== trigger) {
    return null;
  }
  let end = caret;
  while (end < text.length && !/\s/.test(text[end])) {
    end++;
  }
  return { start, end, query: text.slice(start + 1, caret) };
}

/**
 * Replace `[start, end)` of `text` with `insert`; returns the text and the
 * caret after the insert.
 */
export function replaceRange(
  text: string,
  start: number,
  end: number,
  insert: string
): { text: string; caret: number } {
  return {
    text: text.slice(0, start) + insert + text.slice(end),
    caret: start + insert.length
  };
}

/**
 * Expand every `#name` word that names a snippet (unknown names stay).
 */
export function expandSnippets(
  text: string,
  snippets: Readonly<Record<string, string>>
): string {
  return text.replace(/(^|\s)#([\w.-]+)(?=\s|$)/g, (whole, space, name) =>
    Object.prototype.hasOwnProperty.call(snippets, name)
      ? space + snippets[name]
      : whole
  );
}

/**
 * Context attached to a prompt.
 */
export type Attachment =
  | { kind: 'file'; path: string }
  | {
      kind: 'selection';
      label: string;
      text: string;
      path?: string;
      language?: string;
    }
  | { kind: 'block'; label: string; markdown: string };

/**
 * A fence longer than any backtick run in `text`.
 */
export function fenceFor(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) {
    longest = Math.max(longest, run.length);
  }
  return '`'.repeat(Math.max(3, longest + 1));
}

/**
 * The prompt sent: the typed text, then the attachments (files by path, for
 * the agent to read; selections and blocks inline).
 */
export function promptWithAttachments(
  text: string,
  attachments: readonly Attachment[]
): string {
  if (!attachments.length) {
    return text;
  }
  const files = attachments.filter(a => a.kind === 'file');
  const sections: string[] = [text.trim()];
  if (files.length) {
    sections.push(
      'Attached files (read them as needed):\n' +
        files.map(f => `- ${(f as { path: string }).path}`).join('\n')
    );
  }
  for (const attachment of attachments) {
    if (attachment.kind === 'selection') {
      const fence = fenceFor(attachment.text);
      const where = attachment.path ? ` from ${attachment.path}` : '';
      sections.push(
        `Selected text${where}:\n${fence}${attachment.language ?? ''}\n${
          attachment.text
        }\n${fence}`
      );
    } else if (attachment.kind === 'block') {
      sections.push(`Terminal block:\n${attachment.markdown}`);
    }
  }
  return sections.filter(Boolean).join('\n\n');
}

/**
 * The headings `promptWithAttachments` puts before attached context.
 */
const CONTEXT_HEADING =
  /\n\n(?=Attached files \(read them as needed\):\n|Selected text(?: from [^\n]*)?:\n|Terminal block:\n)/;

/**
 * A sent prompt taken apart for display: what was typed, and the context
 * attached after it (null without any).
 */
export function splitPrompt(prompt: string): {
  text: string;
  context: string | null;
} {
  const match = CONTEXT_HEADING.exec(prompt);
  if (!match) {
    return { text: prompt, context: null };
  }
  return {
    text: prompt.slice(0, match.index),
    context: prompt.slice(match.index + match[0].length)
  };
}

/**
 * The prompts of a conversation, newest first (the composer's history).
 */
export function promptHistory(state: IChatState, limit = 100): string[] {
  const prompts: string[] = [];
  for (let i = state.turns.length - 1; i >= 0 && prompts.length < limit; i--) {
    const prompt = state.turns[i].prompt;
    if (prompt && !prompts.includes(prompt)) {
      prompts.push(prompt);
    }
  }
  return prompts;
}
