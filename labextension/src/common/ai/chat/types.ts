/**
 * The conversation of an AI session as the panel shows it: what the server
 * sends (its events and approvals are the types generated from the server's
 * OpenAPI document; the stored records are structural subsets of src/api/ai.ts)
 * and the state built from it.
 */

import type {
  AiApproval,
  AiEvent,
  AiEventTodos,
  AiRule
} from '../../../api/openapi';

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
export type IChatRule = AiRule;

/**
 * A todo of the agent's list.
 */
export type IChatTodo = AiEventTodos['todos'][number];

/**
 * An approval (pending, queued in a plan, or decided).
 */
export type IChatApproval = AiApproval;

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
 * An event of the session's WebSocket (declared on the server, services/ai/wire.py).
 */
export type IChatEvent = AiEvent;

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
