/**
 * The conversation: turns with streamed markdown, reasoning, tool cards
 * (sub-agents nested), notes and usage; approval cards; the plan review;
 * error banners; todos, a suggested command and the auto-approve rules.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { type IAiDecision, type IAiRule, screenshotURL } from '../api/ai';
import {
  type ChatPart,
  cutNote,
  errorAction,
  formatCost,
  formatTokens,
  type IChatApproval,
  type IChatError,
  type IChatState,
  type IChatSuggestion,
  type IChatTodo,
  isEditApproval,
  type IToolCard,
  type ITurn,
  type IWorkflowApprovalDetails,
  keyNameIn,
  splitPrompt,
  toolSubject,
  workflowApprovalDetails
} from '../common/ai/chat';
import { formatDuration } from '../common/listnav';
import { CSS } from './css';
import { type ICodeActions, Markdown } from './markdown';
import { reviewSelection } from './review/selection';

/**
 * What the chat asks of the application.
 */
export interface IChatHost {
  trans: TranslationBundle;
  rendermime: IRenderMimeRegistry | null;
  code: ICodeActions;
  /** Whether the diff review (`terax:ai-review`) is there. */
  canReview(): boolean;
  review(approvalId: string): void;
  openFile(path: string): void;
}

// -- turns -------------------------------------------------------------------

interface ITurnProps {
  turn: ITurn;
  tools: IChatState['tools'];
  host: IChatHost;
  expandReasoning: boolean;
  /** Run again with this output limit (offered on the last turn only). */
  onContinue?: ((limit: number) => void) | null;
}

/**
 * One prompt and its answer.
 */
function TurnView(props: ITurnProps): JSX.Element {
  const { turn, host } = props;
  const { trans } = host;
  const finishNote =
    turn.finish === 'cancelled'
      ? trans.__('Stopped.')
      : turn.finish === 'max_steps'
        ? trans.__('Stopped at the step limit.')
        : null;
  const cut = turn.cut;
  const higher = cut?.continueLimit ?? null;
  return (
    <div className={CSS.turn} data-run={turn.runId ?? ''}>
      {turn.prompt !== null && <Prompt prompt={turn.prompt} trans={trans} />}
      <div className={CSS.answer}>
        <Parts
          parts={turn.parts}
          tools={props.tools}
          host={host}
          expandReasoning={props.expandReasoning}
          streaming={turn.running}
        />
        {turn.running && (
          <div className={CSS.working} role="status">
            <span className="jp-TeraxAi-spinner" aria-hidden="true" />
            {turn.step > 1
              ? trans.__('Working… step %1', turn.step)
              : trans.__('Working…')}
          </div>
        )}
        {finishNote && <div className={CSS.note}>{finishNote}</div>}
        {cut && (
          <div
            className={`${CSS.note} ${CSS.cutNote}`}
            data-tone="warning"
            data-cut={cut.reason}
          >
            {cutNote(cut)}
            {higher !== null && props.onContinue && !turn.running && (
              <div className={CSS.actions}>
                <button
                  type="button"
                  className={`${CSS.button} ${CSS.primary}`}
                  title={trans.__(
                    'Run again with up to %1 output tokens per step',
                    higher
                  )}
                  onClick={() => props.onContinue?.(higher)}
                >
                  {trans.__('Continue with a higher limit')}
                </button>
              </div>
            )}
          </div>
        )}
      </div>
      {turn.usage && !turn.running && (
        <div className={CSS.turnFooter}>
          {trans.__(
            '%1 in · %2 out',
            formatTokens(turn.usage.input),
            formatTokens(turn.usage.output)
          )}
          {turn.usage.cached > 0 &&
            ' · ' + trans.__('%1 cached', formatTokens(turn.usage.cached))}
          {turn.usage.cost !== null && ' · ' + formatCost(turn.usage.cost)}
          {turn.step > 1 && ' · ' + trans.__('%1 steps', turn.step)}
        </div>
      )}
    </div>
  );
}

/**
 * One prompt and its answer (re-rendered when they change).
 */
export const Turn = React.memo(TurnView);

interface IPartsProps {
  parts: ChatPart[];
  tools: IChatState['tools'];
  host: IChatHost;
  expandReasoning: boolean;
  streaming: boolean;
}

function Parts(props: IPartsProps): JSX.Element {
  const { parts, tools, host } = props;
  return (
    <>
      {parts.map((part, index) => {
        const last = index === parts.length - 1;
        switch (part.kind) {
          case 'text':
            return (
              <Markdown
                key={index}
                text={part.text}
                rendermime={host.rendermime}
                actions={host.code}
                trans={host.trans}
              />
            );
          case 'reasoning':
            return (
              <Reasoning
                key={index}
                text={part.text}
                thinking={props.streaming && last}
                open={props.expandReasoning}
                trans={host.trans}
              />
            );
          case 'tool': {
            const card = tools[part.callId];
            return card ? (
              <ToolCard
                key={part.callId}
                card={card}
                tools={tools}
                host={host}
                expandReasoning={props.expandReasoning}
              />
            ) : null;
          }
          case 'note':
            return (
              <div key={index} className={CSS.note} data-tone={part.tone}>
                {part.text}
              </div>
            );
          default:
            return null;
        }
      })}
    </>
  );
}

/**
 * A prompt as typed; what was attached to it folded away beneath.
 */
function Prompt(props: {
  prompt: string;
  trans: TranslationBundle;
}): JSX.Element {
  const { text, context } = splitPrompt(props.prompt);
  return (
    <div className={CSS.prompt} aria-label={props.trans.__('Your prompt')}>
      {text}
      {context !== null && (
        <details className={CSS.promptContext}>
          <summary>{props.trans.__('Attached context')}</summary>
          <div className={CSS.pre}>{context}</div>
        </details>
      )}
    </div>
  );
}

function Reasoning(props: {
  text: string;
  thinking: boolean;
  open: boolean;
  trans: TranslationBundle;
}): JSX.Element {
  return (
    <details className={CSS.reasoning} open={props.open || undefined}>
      <summary>
        {props.thinking
          ? props.trans.__('Thinking…')
          : props.trans.__('Reasoning')}
      </summary>
      <div className={CSS.pre}>{props.text}</div>
    </details>
  );
}

// -- tool cards --------------------------------------------------------------

function statusLabel(card: IToolCard, trans: TranslationBundle): string {
  switch (card.status) {
    case 'streaming':
      return trans.__('preparing');
    case 'running':
      return trans.__('running');
    case 'pending_approval':
      return trans.__('waiting for approval');
    case 'queued':
      return trans.__('queued in the plan');
    case 'denied':
      return trans.__('denied');
    case 'cancelled':
      return trans.__('cancelled');
    case 'error':
      return trans.__('failed');
    default:
      return card.isError ? trans.__('failed') : trans.__('done');
  }
}

function argumentsText(card: IToolCard): string {
  const args = { ...(card.arguments ?? {}) };
  for (const [key, value] of Object.entries(args)) {
    if (typeof value === 'string' && value.length > 2000) {
      args[key] = `${value.slice(0, 2000)}… (${value.length} characters)`;
    }
  }
  return JSON.stringify(args, null, 2);
}

interface IToolCardProps {
  card: IToolCard;
  tools: IChatState['tools'];
  host: IChatHost;
  expandReasoning: boolean;
}

/**
 * A tool call: a compact header that expands to arguments and result.
 */
function ToolCardView(props: IToolCardProps): JSX.Element {
  const { card, host } = props;
  const { trans } = host;
  const [open, setOpen] = React.useState(false);
  const subject = toolSubject(card);
  const exitCode =
    card.data && typeof card.data.exit_code === 'number'
      ? card.data.exit_code
      : null;
  const status = card.isError && card.status === 'done' ? 'error' : card.status;
  const bodyId = `jp-TeraxAi-tool-${card.callId}`;
  const screenshot =
    card.data && typeof card.data.screenshot === 'string'
      ? card.data.screenshot
      : null;
  return (
    <div
      className={CSS.tool}
      data-status={status}
      data-tool={card.name}
      data-call={card.callId}
    >
      <button
        type="button"
        className={CSS.toolHeader}
        aria-expanded={open}
        aria-controls={bodyId}
        onClick={() => setOpen(!open)}
      >
        <span
          className={CSS.toolStatus}
          data-status={status}
          title={statusLabel(card, trans)}
          aria-label={statusLabel(card, trans)}
        />
        <span className={CSS.toolName}>{card.name}</span>
        <span className={CSS.toolSubject}>{subject}</span>
        <span className={CSS.toolMeta}>
          {exitCode !== null && exitCode !== 0 && trans.__('exit %1', exitCode)}
          {card.durationMs !== null && ' ' + formatDuration(card.durationMs)}
          {card.approval === 'auto' && ' ' + trans.__('auto-approved')}
          {card.status === 'pending_approval' && ' ' + trans.__('needs you')}
        </span>
      </button>
      {screenshot && (
        <img
          className={CSS.screenshot}
          src={screenshotURL(screenshot)}
          alt={trans.__('Screenshot of %1', String(card.data?.url ?? ''))}
          loading="lazy"
        />
      )}
      {card.children.length > 0 && (
        <div className={CSS.toolChildren}>
          <Parts
            parts={card.children}
            tools={props.tools}
            host={host}
            expandReasoning={props.expandReasoning}
            streaming={card.status === 'running'}
          />
        </div>
      )}
      {open && (
        <div className={CSS.toolBody} id={bodyId}>
          <div className={CSS.label}>{trans.__('Arguments')}</div>
          <pre className={CSS.pre}>{argumentsText(card)}</pre>
          {card.result !== null && (
            <>
              <div className={CSS.label}>
                {card.isError ? trans.__('Error') : trans.__('Result')}
                {card.truncated && ' ' + trans.__('(beginning)')}
              </div>
              <pre className={CSS.pre}>{card.result}</pre>
            </>
          )}
        </div>
      )}
    </div>
  );
}

const ToolCard = React.memo(ToolCardView);

// -- approvals ---------------------------------------------------------------

/**
 * Added and removed lines of an edit's hunks.
 */
function changeCounts(approval: IChatApproval): { add: number; del: number } {
  let add = 0;
  let del = 0;
  for (const hunk of approval.proposal.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) {
        add++;
      } else if (line.startsWith('-')) {
        del++;
      }
    }
  }
  return { add, del };
}

function DiffLines(props: { diff: string }): JSX.Element {
  const lines = props.diff.split('\n').slice(0, 400);
  return (
    <pre className={`${CSS.pre} ${CSS.diff}`}>
      {lines.map((line, index) => {
        if (line.startsWith('+++') || line.startsWith('---')) {
          return null;
        }
        const kind = line.startsWith('+')
          ? CSS.diffAdd
          : line.startsWith('-')
            ? CSS.diffDel
            : line.startsWith('@@')
              ? CSS.diffHunk
              : undefined;
        return (
          <div key={index} className={kind}>
            {line || ' '}
          </div>
        );
      })}
    </pre>
  );
}

/**
 * Where a browser workflow runs and its exact steps, as the server bound the
 * approval to them (typed values are placeholders).
 */
function WorkflowDetails(props: {
  details: IWorkflowApprovalDetails;
  host: IChatHost;
}): JSX.Element {
  const { details } = props;
  const { trans } = props.host;
  const rows: [string, string][] = [
    [trans.__('Scope'), details.scope],
    [trans.__('Origin'), details.origin],
    [
      trans.__('Version'),
      details.previousVersion === null
        ? String(details.version)
        : trans.__(
            '%1 (replacing %2)',
            details.version,
            details.previousVersion
          )
    ],
    [
      trans.__('Side effect'),
      details.previousSideEffect
        ? trans.__(
            '%1 (was %2)',
            details.sideEffect,
            details.previousSideEffect
          )
        : details.sideEffect
    ]
  ];
  if (details.page) {
    rows.push([trans.__('Starts on'), details.page]);
  }
  for (const input of details.inputs) {
    // What will be typed is part of what is approved; a password only as its length.
    rows.push([
      trans.__('Input %1', input.name),
      input.secret
        ? trans.__('(hidden, %1 characters)', input.value.length)
        : input.value || trans.__('(empty)')
    ]);
  }
  return (
    <div className={CSS.workflowDetails} data-workflow-approval="">
      <dl>
        {rows.map(([label, value]) => (
          <React.Fragment key={label}>
            <dt>{label}</dt>
            <dd data-field={label}>{value}</dd>
          </React.Fragment>
        ))}
      </dl>
      <ol
        className={`${CSS.pre} ${CSS.approvalCommand}`}
        aria-label={trans.__('Steps')}
      >
        {details.steps.map((step, index) => (
          <li key={index}>{step}</li>
        ))}
      </ol>
    </div>
  );
}

interface IApprovalProps {
  approval: IChatApproval;
  host: IChatHost;
  busy: boolean;
  onDecide: (id: string, decision: IAiDecision) => void;
  onAllow?: (rule: IAiRule, id: string) => void;
}

/**
 * The exact sources a notebook run would run, with what each does beyond
 * computing (the server's marks: shell, installs, processes, network).
 */
function CellsToRun(props: {
  proposal: IChatApproval['proposal'];
  host: IChatHost;
}): JSX.Element | null {
  const { proposal, host } = props;
  const cells = proposal.payload.cells;
  if (
    (proposal.kind !== 'cells' && proposal.kind !== 'risky_cells') ||
    !Array.isArray(cells)
  ) {
    return null;
  }
  return (
    <div className={CSS.cellsToRun} data-cells-to-run="">
      {(cells as { id: string; source: string; risks?: string[] }[]).map(
        cell => (
          <div key={cell.id} data-cell={cell.id}>
            <div className={CSS.counts}>
              <span>{host.trans.__('Cell %1', cell.id)}</span>
              {(cell.risks ?? []).map(risk => (
                <span key={risk} className={CSS.diffDel} data-risk={risk}>
                  {risk}
                </span>
              ))}
            </div>
            <pre className={`${CSS.pre} ${CSS.approvalCommand}`}>
              {cell.source}
            </pre>
          </div>
        )
      )}
    </div>
  );
}

/**
 * A change or command waiting on the user.
 */
export function ApprovalCard(props: IApprovalProps): JSX.Element {
  const { approval, host, busy, onDecide } = props;
  const { trans } = host;
  const { proposal } = approval;
  const [note, setNote] = React.useState('');
  const edit = isEditApproval(approval);
  const review = edit && host.canReview();
  const decide = (decision: 'approve' | 'deny'): void => {
    const body: IAiDecision = { decision };
    if (note.trim()) {
      body.message = note.trim();
    }
    onDecide(approval.id, body);
  };
  const counts = edit ? changeCounts(approval) : null;
  const workflow = workflowApprovalDetails(proposal);
  return (
    <div
      className={CSS.approval}
      data-approval={approval.id}
      data-kind={proposal.kind}
      role="group"
      aria-label={trans.__('Approval: %1', proposal.summary)}
    >
      <div className={CSS.approvalTitle}>
        <strong>{trans.__('Approve?')}</strong> {proposal.summary}
      </div>
      {workflow && <WorkflowDetails details={workflow} host={host} />}
      <CellsToRun proposal={proposal} host={host} />
      {!workflow && proposal.command && (
        <pre className={`${CSS.pre} ${CSS.approvalCommand}`}>
          {proposal.command}
        </pre>
      )}
      {edit && proposal.path && (
        <div className={CSS.counts}>
          <button
            type="button"
            className={CSS.codeButton}
            onClick={() => proposal.path && host.openFile(proposal.path)}
          >
            {proposal.path}
          </button>
          {counts && (
            <>
              <span className={CSS.diffAdd}>+{counts.add}</span>
              <span className={CSS.diffDel}>−{counts.del}</span>
              <span>
                {trans._n(
                  '%1 hunk',
                  '%1 hunks',
                  proposal.hunks.length,
                  proposal.hunks.length
                )}
              </span>
            </>
          )}
        </div>
      )}
      {edit && !review && proposal.diff && <DiffLines diff={proposal.diff} />}
      <input
        className={`${CSS.textInput} ${CSS.approvalNote}`}
        type="text"
        value={note}
        placeholder={trans.__('Note for the agent (optional)')}
        aria-label={trans.__('Note for the agent')}
        onChange={event => setNote(event.target.value)}
        onKeyDown={event => {
          if (event.key === 'Enter') {
            event.preventDefault();
            decide('approve');
          }
        }}
      />
      <div className={CSS.actions}>
        {review && (
          <button
            type="button"
            className={`${CSS.button} ${CSS.primary}`}
            disabled={busy}
            onClick={() => host.review(approval.id)}
          >
            {trans.__('Review')}
          </button>
        )}
        <button
          type="button"
          className={`${CSS.button} ${review ? '' : CSS.primary}`}
          disabled={busy}
          onClick={() => decide('approve')}
        >
          {edit ? trans.__('Approve all') : trans.__('Approve')}
        </button>
        <button
          type="button"
          className={`${CSS.button} ${CSS.danger}`}
          disabled={busy}
          onClick={() => decide('deny')}
        >
          {trans.__('Deny')}
        </button>
        {props.onAllow && proposal.kind === 'command' && proposal.command && (
          <button
            type="button"
            className={CSS.button}
            disabled={busy}
            title={trans.__(
              'Approve, and approve this command without asking from now on in this session'
            )}
            onClick={() =>
              props.onAllow?.(
                { tool: approval.tool, command_prefix: proposal.command ?? '' },
                approval.id
              )
            }
          >
            {trans.__('Always allow')}
          </button>
        )}
      </div>
    </div>
  );
}

// -- the plan ----------------------------------------------------------------

interface IPlanProps {
  plan: IChatApproval[];
  host: IChatHost;
  busy: boolean;
  running: boolean;
  onApply: (decisions: Record<string, IAiDecision>) => void;
  onDiscard: () => void;
}

/**
 * The decision for a queued item from its review, if it was reviewed.
 */
function reviewedDecision(item: IChatApproval): IAiDecision | null {
  const accepted = reviewSelection(item.id);
  if (!accepted) {
    return null;
  }
  const total = item.proposal.hunks.length;
  if (accepted.length === 0) {
    return { decision: 'deny' };
  }
  if (accepted.length >= total) {
    return { decision: 'approve' };
  }
  return { decision: 'approve', hunks: accepted };
}

/**
 * The batch review of a queued plan: every item in order, each can be left
 * out; Apply all or Discard.
 */
export function PlanReview(props: IPlanProps): JSX.Element {
  const { plan, host, busy, running } = props;
  const { trans } = host;
  const [skipped, setSkipped] = React.useState<ReadonlySet<string>>(new Set());
  const apply = (): void => {
    const decisions: Record<string, IAiDecision> = {};
    for (const item of plan) {
      if (skipped.has(item.id)) {
        decisions[item.id] = { decision: 'deny' };
      } else {
        const reviewed = reviewedDecision(item);
        if (reviewed) {
          decisions[item.id] = reviewed;
        }
      }
    }
    props.onApply(decisions);
  };
  const count = plan.length - plan.filter(i => skipped.has(i.id)).length;
  return (
    <section className={CSS.plan} aria-label={trans.__('Plan review')}>
      <div className={CSS.approvalTitle}>
        <strong>{trans.__('Plan')}</strong>{' '}
        {trans._n(
          '%1 queued change',
          '%1 queued changes',
          plan.length,
          plan.length
        )}
      </div>
      <ol>
        {plan.map(item => {
          const partial = reviewSelection(item.id);
          return (
            <li key={item.id} className={CSS.planItem} data-approval={item.id}>
              <label>
                <input
                  type="checkbox"
                  checked={!skipped.has(item.id)}
                  onChange={event => {
                    const next = new Set(skipped);
                    if (event.target.checked) {
                      next.delete(item.id);
                    } else {
                      next.add(item.id);
                    }
                    setSkipped(next);
                  }}
                />
                <span>{item.proposal.summary}</span>
              </label>
              {isEditApproval(item) && host.canReview() && (
                <button
                  type="button"
                  className={CSS.codeButton}
                  onClick={() => host.review(item.id)}
                >
                  {partial
                    ? trans.__(
                        'Review (%1 of %2 hunks)',
                        partial.length,
                        item.proposal.hunks.length
                      )
                    : trans.__('Review')}
                </button>
              )}
              {item.proposal.command && (
                <pre className={CSS.pre}>{item.proposal.command}</pre>
              )}
            </li>
          );
        })}
      </ol>
      <div className={CSS.actions}>
        <button
          type="button"
          className={`${CSS.button} ${CSS.primary}`}
          disabled={busy || running || count === 0}
          onClick={apply}
        >
          {count === plan.length
            ? trans.__('Apply all')
            : trans.__('Apply %1 of %2', count, plan.length)}
        </button>
        <button
          type="button"
          className={`${CSS.button} ${CSS.danger}`}
          disabled={busy || running}
          onClick={props.onDiscard}
        >
          {trans.__('Discard')}
        </button>
        {running && (
          <span className={CSS.composerHint}>
            {trans.__('Apply once the run ends.')}
          </span>
        )}
      </div>
    </section>
  );
}

// -- banners and side lists --------------------------------------------------

interface IErrorBannerProps {
  error: IChatError;
  trans: TranslationBundle;
  /** The provider's key name, when it has one. */
  keyName: string | null;
  onSettings: () => void;
  onTest: () => Promise<string>;
  onRetry: (() => void) | null;
  onNewSession: () => void;
  onDismiss: () => void;
}

/**
 * An error with what to do about it (give it a `key` per error: its state
 * is the retry countdown and the test result of that error).
 */
export function ErrorBanner(props: IErrorBannerProps): JSX.Element {
  const { error, trans } = props;
  const action = errorAction(error.reason);
  const [test, setTest] = React.useState<string | null>(null);
  const [wait, setWait] = React.useState<number>(
    Math.ceil(error.retryAfter ?? 0)
  );
  React.useEffect(() => {
    if (wait <= 0) {
      return;
    }
    const timer = setTimeout(() => setWait(wait - 1), 1000);
    return () => clearTimeout(timer);
  }, [wait]);
  const keyName =
    error.reason === 'bad_key' ||
    error.reason === 'missing_key' ||
    error.reason === 'key_not_for_url'
      ? (keyNameIn(error.message) ?? props.keyName)
      : null;
  return (
    <div className={CSS.banner} role="alert" data-reason={error.reason}>
      <div className={CSS.bannerMessage}>{error.message}</div>
      {test && <div className={CSS.testResult}>{test}</div>}
      <div className={CSS.actions}>
        {action === 'settings' && (
          <button
            type="button"
            className={`${CSS.button} ${CSS.primary}`}
            onClick={props.onSettings}
          >
            {keyName
              ? trans.__('Set %1', keyName)
              : error.reason === 'no_model' ||
                  error.reason === 'model_not_found'
                ? trans.__('Choose a model')
                : trans.__('Open provider settings')}
          </button>
        )}
        {action === 'test' && (
          <button
            type="button"
            className={`${CSS.button} ${CSS.primary}`}
            onClick={() => {
              setTest(trans.__('Testing…'));
              void props.onTest().then(setTest);
            }}
          >
            {trans.__('Test connection')}
          </button>
        )}
        {action === 'retry' && props.onRetry && (
          <button
            type="button"
            className={`${CSS.button} ${CSS.primary}`}
            disabled={wait > 0}
            onClick={props.onRetry}
          >
            {wait > 0 ? trans.__('Retry in %1 s', wait) : trans.__('Retry')}
          </button>
        )}
        {action === 'new-session' && (
          <button
            type="button"
            className={`${CSS.button} ${CSS.primary}`}
            onClick={props.onNewSession}
          >
            {trans.__('New session')}
          </button>
        )}
        <button type="button" className={CSS.button} onClick={props.onDismiss}>
          {trans.__('Dismiss')}
        </button>
      </div>
    </div>
  );
}

/**
 * The agent's todo list.
 */
export function Todos(props: {
  todos: IChatTodo[];
  trans: TranslationBundle;
}): JSX.Element | null {
  const { todos, trans } = props;
  if (!todos.length) {
    return null;
  }
  const done = todos.filter(t => t.status === 'completed').length;
  return (
    <details className={CSS.todos} open>
      <summary>{trans.__('Todos (%1 of %2 done)', done, todos.length)}</summary>
      <ul>
        {todos.map((todo, index) => (
          <li key={index} className={CSS.todo} data-status={todo.status}>
            {todo.content}
          </li>
        ))}
      </ul>
    </details>
  );
}

/**
 * A command the agent suggests the user runs.
 */
export function Suggestion(props: {
  suggestion: IChatSuggestion;
  code: ICodeActions;
  trans: TranslationBundle;
  onDismiss: () => void;
}): JSX.Element {
  const { suggestion, code, trans } = props;
  return (
    <div className={CSS.suggestion} role="note">
      <div className={CSS.label}>{trans.__('Suggested command')}</div>
      <pre className={CSS.pre}>{suggestion.command}</pre>
      {suggestion.explanation && <div>{suggestion.explanation}</div>}
      <div className={CSS.actions}>
        {code.run && (
          <button
            type="button"
            className={`${CSS.button} ${CSS.primary}`}
            onClick={() => code.run?.(suggestion.command)}
          >
            {trans.__('Run in terminal')}
          </button>
        )}
        <button
          type="button"
          className={CSS.button}
          onClick={() => code.copy(suggestion.command)}
        >
          {trans.__('Copy')}
        </button>
        <button type="button" className={CSS.button} onClick={props.onDismiss}>
          {trans.__('Dismiss')}
        </button>
      </div>
    </div>
  );
}

const RULE_TOOLS = [
  'bash_run',
  'bash_background',
  'bash_kill',
  'edit',
  'multi_edit',
  'write_file',
  'create_directory',
  '*'
];

/**
 * The session's auto-approve rules, editable.
 */
export function RulesEditor(props: {
  rules: IAiRule[];
  trans: TranslationBundle;
  busy: boolean;
  onChange: (rules: IAiRule[]) => void;
}): JSX.Element {
  const { rules, trans, busy } = props;
  const [tool, setTool] = React.useState('bash_run');
  const [pattern, setPattern] = React.useState('');
  const command = tool.startsWith('bash');
  const add = (): void => {
    const rule: IAiRule = { tool };
    if (pattern.trim()) {
      if (command) {
        rule.command_prefix = pattern.trim();
      } else {
        rule.path = pattern.trim();
      }
    }
    props.onChange([...rules, rule]);
    setPattern('');
  };
  return (
    <details className={CSS.rules}>
      <summary>
        {trans._n(
          'Auto-approve: %1 rule',
          'Auto-approve: %1 rules',
          rules.length,
          rules.length
        )}
      </summary>
      <p
        className={CSS.ruleNote}
        title={trans.__(
          'Options of programs Terax has no table for ask too, and so do extra words after rm, cp, mv, tee or sudo. A rule without a prefix approves every call of its tool.'
        )}
      >
        {trans.__(
          'A command rule covers commands that start with its words, not shell operators, globs or $variables, nor options that write files, run programs or change configuration (git log --output, pytest --basetemp, find -exec, rg --pre, sed -i): those still ask.'
        )}
      </p>
      <ul>
        {rules.map((rule, index) => (
          <li key={index} className={CSS.rule}>
            <code>{rule.tool}</code>
            {rule.command_prefix && (
              <span>
                {trans.__('commands starting with')}{' '}
                <code>{rule.command_prefix}</code>
              </span>
            )}
            {rule.path && (
              <span>
                {trans.__('paths matching')} <code>{rule.path}</code>
              </span>
            )}
            {!rule.command_prefix && !rule.path && (
              <span className={CSS.ruleWarning}>
                {rule.tool === '*'
                  ? trans.__(
                      'every change and command, whatever it writes or runs'
                    )
                  : trans.__('every call, whatever it writes or runs')}
              </span>
            )}
            <button
              type="button"
              className={CSS.codeButton}
              disabled={busy}
              aria-label={trans.__('Remove this rule')}
              onClick={() =>
                props.onChange(rules.filter((_, i) => i !== index))
              }
            >
              {trans.__('Remove')}
            </button>
          </li>
        ))}
      </ul>
      <div className={CSS.fieldRow}>
        <select
          className={CSS.select}
          value={tool}
          aria-label={trans.__('Tool')}
          onChange={event => setTool(event.target.value)}
        >
          {RULE_TOOLS.map(name => (
            <option key={name} value={name}>
              {name === '*' ? trans.__('any tool') : name}
            </option>
          ))}
        </select>
        <input
          className={CSS.textInput}
          type="text"
          value={pattern}
          placeholder={
            command
              ? trans.__('command prefix, e.g. npm test')
              : trans.__('path glob, e.g. src/**')
          }
          aria-label={
            command ? trans.__('Command prefix') : trans.__('Path glob')
          }
          onChange={event => setPattern(event.target.value)}
        />
        <button
          type="button"
          className={CSS.button}
          disabled={busy}
          onClick={add}
        >
          {trans.__('Add')}
        </button>
      </div>
    </details>
  );
}
