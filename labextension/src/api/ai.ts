/**
 * REST client of the agent (`/terax/api/ai/...`) and the URL of a session's
 * events WebSocket.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type {
  AiApproval,
  AiCompletion,
  AiCompletionRequest,
  AiEvent
} from './openapi';
import { API_NAMESPACE, apiURL, requestAPI } from './request';

/**
 * An auto-approve rule: calls of `tool` (or `*`), optionally only for paths
 * matching a glob or commands starting with given words.
 */
export interface IAiRule {
  tool: string;
  path?: string;
  command_prefix?: string;
}

/**
 * A todo of the agent's list.
 */
export interface IAiTodo {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
}

/**
 * A session as listed.
 */
export interface IAiSessionSummary {
  id: string;
  title: string;
  agent: string;
  provider: string | null;
  model: string | null;
  plan_mode: boolean;
  rules: IAiRule[];
  todos: IAiTodo[];
  created_at: number;
  updated_at: number;
  running: boolean;
}

/**
 * A run in progress.
 */
export interface IAiRun {
  id: string;
  agent: string;
  provider: string;
  model: string;
  plan_mode: boolean;
  steps: number;
  started_at: number;
}

/**
 * One hunk of a proposed edit.
 */
export type IAiHunk = IAiProposal['hunks'][number];

/**
 * The exact change a mutating tool call proposes.
 */
export type IAiProposal = AiApproval['proposal'];

export type AiApprovalStatus = AiApproval['status'];

/**
 * An approval: pending (waiting on the user), queued (plan mode), or decided.
 */
export type IAiApproval = AiApproval;

/**
 * A session with what a view needs to show it after a reload.
 */
export interface IAiSession extends IAiSessionSummary {
  run: IAiRun | null;
  pending_approvals: IAiApproval[];
  plan: IAiApproval[];
  usage: {
    input_tokens: number;
    output_tokens: number;
    cached_tokens: number;
    /** US dollars at the session model's prices (null without prices). */
    cost?: number | null;
  };
  /** The number of the session's last event: connect the events with `after`. */
  last_seq: number;
}

/**
 * A tool call the model made.
 */
export interface IAiToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  arguments_error?: string | null;
}

/**
 * A stored message.
 */
export interface IAiMessage {
  id: number;
  run_id: string | null;
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  reasoning: string;
  tool_calls: IAiToolCall[];
  tool_call_id: string | null;
  name: string | null;
  is_error: boolean;
  status: 'streaming' | 'complete' | 'cut';
  created_at: number;
}

/**
 * A stored tool call with its outcome.
 */
export interface IAiToolCallRecord {
  id: string;
  session_id: string;
  run_id: string | null;
  name: string;
  arguments: Record<string, unknown>;
  status: string;
  result: string | null;
  data: Record<string, unknown> | null;
  is_error: boolean;
  started_at: number;
  ended_at: number | null;
  duration_ms: number | null;
}

/**
 * A frame of the events WebSocket (declared on the server, services/ai/wire.py).
 */
export type IAiEvent = AiEvent;

/**
 * A model provider.
 */
export interface IAiProvider {
  id: string;
  label: string;
  kind: 'openai' | 'anthropic';
  base_url: string;
  key_name: string | null;
  local: boolean;
  product: string | null;
  source: 'builtin' | 'config' | 'user';
  /** Whether its key is set (never the key). */
  key_set: boolean;
}

/**
 * A model and what it can do.
 */
export interface IAiModel {
  provider: string;
  id: string;
  label: string;
  context_window: number;
  max_output_tokens: number;
  tools: boolean;
  reasoning: boolean;
  /** Reads images: tool results (notebook plots) show them to it. */
  vision: boolean;
  source: string;
  /** US dollars per million input tokens (null: unknown, no cost shown). */
  input_price: number | null;
  /** US dollars per million output tokens. */
  output_price: number | null;
}

/**
 * What a user may say about a model (its context and prices).
 */
export type AiModelDetails = Pick<IAiModel, 'provider' | 'id'> &
  Partial<
    Pick<
      IAiModel,
      | 'label'
      | 'context_window'
      | 'max_output_tokens'
      | 'tools'
      | 'reasoning'
      | 'vision'
      | 'input_price'
      | 'output_price'
    >
  >;

/**
 * An agent: a prompt and the tools it may use.
 */
export interface IAiAgent {
  name: string;
  description: string;
  prompt: string;
  tools: string[];
  subagent: boolean;
  builtin: boolean;
  max_steps: number | null;
}

/**
 * The answer of a connection test (failures are answers, not errors).
 */
export interface IConnectionTest {
  ok: boolean;
  latency_ms: number | null;
  models: string[];
  message: string | null;
  reason: string | null;
}

/**
 * What a user answers to an approval.
 */
export interface IAiDecision {
  decision: 'approve' | 'deny';
  /** Approve only these hunks of an edit. */
  hunks?: number[];
  /** Passed on to the agent. */
  message?: string;
}

const JSON_HEADERS = { 'Content-Type': 'application/json' };

function post<T>(endpoint: string, body: unknown, method = 'POST'): Promise<T> {
  return requestAPI<T>(endpoint, {
    method,
    body: JSON.stringify(body),
    headers: JSON_HEADERS
  });
}

function sessionPath(id: string, rest = ''): string {
  return `ai/sessions/${encodeURIComponent(id)}${rest}`;
}

// -- sessions ----------------------------------------------------------------

export async function listSessions(
  query?: string,
  limit = 100
): Promise<IAiSessionSummary[]> {
  const answer = await requestAPI<{ sessions: IAiSessionSummary[] }>(
    'ai/sessions',
    { query: { q: query || undefined, limit } }
  );
  return answer.sessions;
}

export function createSession(
  fields: Partial<
    Pick<IAiSession, 'title' | 'agent' | 'provider' | 'model' | 'plan_mode'>
  > = {}
): Promise<IAiSession> {
  return post<IAiSession>('ai/sessions', fields);
}

export function getSession(id: string): Promise<IAiSession> {
  return requestAPI<IAiSession>(sessionPath(id));
}

export function updateSession(
  id: string,
  fields: Partial<
    Pick<IAiSession, 'title' | 'agent' | 'provider' | 'model' | 'plan_mode'>
  >
): Promise<IAiSession> {
  return post<IAiSession>(sessionPath(id), fields, 'PATCH');
}

export async function deleteSession(id: string): Promise<void> {
  await requestAPI<void>(sessionPath(id), { method: 'DELETE' });
}

export async function getMessages(id: string): Promise<IAiMessage[]> {
  const answer = await requestAPI<{ messages: IAiMessage[] }>(
    sessionPath(id, '/messages')
  );
  return answer.messages;
}

export async function getToolCalls(id: string): Promise<IAiToolCallRecord[]> {
  const answer = await requestAPI<{ tool_calls: IAiToolCallRecord[] }>(
    sessionPath(id, '/tool-calls')
  );
  return answer.tool_calls;
}

export function startRun(
  id: string,
  prompt: string,
  options: Partial<
    Pick<IAiSession, 'agent' | 'provider' | 'model' | 'plan_mode'>
  > & { max_output_tokens?: number } = {}
): Promise<IAiRun> {
  return post<IAiRun>(sessionPath(id, '/runs'), { prompt, ...options });
}

/**
 * Replay a saved browser workflow in the session with no model call (a
 * destructive one asks for approval like the agent's tool does).
 */
export function startReplay(
  id: string,
  workflow: string,
  inputs: Record<string, string>
): Promise<IAiRun> {
  return post<IAiRun>(sessionPath(id, '/runs'), {
    replay: { workflow, inputs }
  });
}

export async function cancelRun(id: string): Promise<void> {
  await post<unknown>(sessionPath(id, '/cancel'), {});
}

export function setRules(id: string, rules: IAiRule[]): Promise<IAiSession> {
  return post<IAiSession>(sessionPath(id, '/rules'), { rules }, 'PUT');
}

// -- approvals and plans -----------------------------------------------------

export async function listApprovals(
  id: string,
  status?: AiApprovalStatus
): Promise<IAiApproval[]> {
  const answer = await requestAPI<{ approvals: IAiApproval[] }>(
    sessionPath(id, '/approvals'),
    { query: { status } }
  );
  return answer.approvals;
}

export function getApproval(approvalId: string): Promise<IAiApproval> {
  return requestAPI<IAiApproval>(
    `ai/approvals/${encodeURIComponent(approvalId)}`
  );
}

export function decide(
  approvalId: string,
  decision: IAiDecision
): Promise<IAiApproval & { delivered: boolean }> {
  return post(`ai/approvals/${encodeURIComponent(approvalId)}`, decision);
}

export async function getPlan(id: string): Promise<IAiApproval[]> {
  const answer = await requestAPI<{ items: IAiApproval[] }>(
    sessionPath(id, '/plan')
  );
  return answer.items;
}

export interface IPlanOutcome {
  approval_id: string;
  tool: string;
  summary: string;
  status: string;
  result: string;
  is_error: boolean;
}

export function applyPlan(
  id: string,
  decisions: Record<string, IAiDecision> = {}
): Promise<{
  outcomes: IPlanOutcome[];
  stopped: boolean;
  remaining: IAiApproval[];
}> {
  return post(sessionPath(id, '/plan'), { action: 'apply', decisions });
}

export function discardPlan(id: string): Promise<{ discarded: number }> {
  return post(sessionPath(id, '/plan'), { action: 'discard' });
}

// -- providers, models, agents ---------------------------------------------

export async function listProviders(): Promise<IAiProvider[]> {
  return (await providerState()).providers;
}

/**
 * The providers, and the provider and model new sessions get on the server
 * (null when the administrator set none).
 */
export interface IAiProviderState {
  providers: IAiProvider[];
  default_provider?: string | null;
  default_model?: string | null;
}

export function providerState(): Promise<IAiProviderState> {
  return requestAPI<IAiProviderState>('ai/providers');
}

export function putProvider(
  id: string,
  fields: Partial<
    Pick<
      IAiProvider,
      'label' | 'kind' | 'base_url' | 'key_name' | 'local' | 'product'
    >
  >
): Promise<IAiProvider> {
  return post<IAiProvider>(
    `ai/providers/${encodeURIComponent(id)}`,
    fields,
    'PUT'
  );
}

export async function providerModels(id: string): Promise<IAiModel[]> {
  const answer = await requestAPI<{ models: IAiModel[] }>(
    `ai/providers/${encodeURIComponent(id)}/models`
  );
  return answer.models;
}

export function testConnection(
  id: string,
  model?: string
): Promise<IConnectionTest> {
  return post<IConnectionTest>(
    `ai/providers/${encodeURIComponent(id)}/test`,
    model ? { model } : {}
  );
}

export async function listModels(provider?: string): Promise<IAiModel[]> {
  const answer = await requestAPI<{ models: IAiModel[] }>('ai/models', {
    query: { provider }
  });
  return answer.models;
}

/**
 * Describe a model (or correct a built-in's numbers); kept on the server.
 */
export function describeModel(details: AiModelDetails): Promise<IAiModel> {
  return post<IAiModel>('ai/models', details);
}

/**
 * Where a screenshot the agent took is served (an image URL for the chat).
 */
export function screenshotURL(
  id: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): string {
  return apiURL(`browser/screenshots/${encodeURIComponent(id)}`, settings);
}

export async function listAgents(): Promise<IAiAgent[]> {
  const answer = await requestAPI<{ agents: IAiAgent[] }>('ai/agents');
  return answer.agents;
}

export function putAgent(
  name: string,
  fields: Pick<IAiAgent, 'prompt' | 'tools'> & { description?: string }
): Promise<IAiAgent> {
  return post<IAiAgent>(`ai/agents/${encodeURIComponent(name)}`, fields, 'PUT');
}

export async function deleteAgent(name: string): Promise<void> {
  await requestAPI<void>(`ai/agents/${encodeURIComponent(name)}`, {
    method: 'DELETE'
  });
}

/**
 * Set a provider key on the server (it never comes back).
 */
export async function setKey(name: string, value: string): Promise<void> {
  await post<unknown>(`secrets/${encodeURIComponent(name)}`, { value }, 'PUT');
}

/**
 * The URL of a session's events WebSocket, replaying the events after
 * `after`, with the token where the page's settings append one.
 */
export function eventsURL(
  sessionId: string,
  after: number,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): string {
  const params: Record<string, string> = { after: String(after) };
  if (settings.appendToken && settings.token) {
    params.token = settings.token;
  }
  return (
    URLExt.join(
      settings.wsUrl,
      API_NAMESPACE,
      'ai',
      'sessions',
      encodeURIComponent(sessionId),
      'events'
    ) + URLExt.objectToQueryString(params)
  );
}

/**
 * A request for an inline completion: the text around the cursor.
 */
export type ICompletionRequest = AiCompletionRequest;

/**
 * An inline completion: the text to insert at the cursor.
 */
export type ICompletion = AiCompletion;

/**
 * Ask the configured model what to insert at the cursor.
 */
export function complete(
  request: ICompletionRequest,
  options: { signal?: AbortSignal; settings?: ServerConnection.ISettings } = {}
): Promise<ICompletion> {
  return requestAPI<ICompletion>('ai/complete', {
    method: 'POST',
    body: JSON.stringify(request),
    headers: JSON_HEADERS,
    ...options
  });
}
