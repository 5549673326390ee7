/**
 * The AI side panel: header (sessions, new, settings), the provider/model
 * bar with the plan-mode toggle, and the chat, session list or settings.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import {
  addIcon,
  deleteIcon,
  editIcon,
  type LabIcon,
  ReactWidget,
  settingsIcon
} from '@jupyterlab/ui-components';
import * as React from 'react';

import type { IAiDecision, IAiRule } from '../api/ai';
import { errorAction, type IChatState } from '../common/ai/chat';
import { relativeDate } from '../common/reldate';
import {
  ApprovalCard,
  ErrorBanner,
  type IChatHost,
  PlanReview,
  RulesEditor,
  Suggestion,
  Todos,
  Turn
} from './chat';
import { Composer, type FileSearch, type NotebookCells } from './composer';
import { CSS } from './css';
import { aiIcon, sessionsIcon } from './icons';
import type { AiSessionModel } from './model';
import type { AiPanelModel, ConnectChoice } from './panelmodel';
import { SettingsView } from './settings';
import { offReason } from '../common/policy';
import { CSS as POLICY_CSS } from '../policy/css';
import { lockIcon } from '../policy/icons';

/**
 * What the panel asks of the application beyond the chat's needs.
 */
export interface IAiPanelHost extends IChatHost {
  searchFiles: FileSearch;
  /** A notebook's cells, for `@notebook.ipynb#cell` (null: no such notebook). */
  notebookCells?: NotebookCells;
  /** The chip label of an attached cell. */
  cellLabel?: (name: string, ename: string | null) => string;
  confirm(title: string, body: string, accept: string): Promise<boolean>;
  editSnippets(): void;
}

/**
 * The side panel widget.
 */
export class AiPanel extends ReactWidget {
  constructor(options: AiPanel.IOptions) {
    super();
    this.model = options.model;
    this._host = options.host;
    this.id = 'terax-ai';
    this.addClass(CSS.panel);
    this.title.icon = aiIcon;
    this.title.caption = options.host.trans.__('Terax AI');
    const update = (): void => this.update();
    this.model.changed.connect(update);
    this.model.activeChanged.connect((_, active) => {
      this._focusKey = false;
      active?.changed.connect(update);
      update();
    });
  }

  readonly model: AiPanelModel;

  /**
   * Focus the prompt (after the panel is shown).
   */
  focusComposer(): void {
    const focus = (): void =>
      this.node.querySelector<HTMLTextAreaElement>(`.${CSS.input}`)?.focus();
    focus();
    requestAnimationFrame(focus);
  }

  /**
   * Show provider settings; `focusKey` puts the caret in the key field.
   */
  showSettings(focusKey = false): void {
    this._focusKey = focusKey;
    this.model.setView('settings');
    this.update();
  }

  protected override onAfterShow(): void {
    void this.model.start();
  }

  protected override render(): JSX.Element {
    return (
      <PanelView
        model={this.model}
        host={this._host}
        focusKey={this._focusKey}
        onSettings={focusKey => this.showSettings(focusKey)}
      />
    );
  }

  private readonly _host: IAiPanelHost;
  private _focusKey = false;
}

/**
 * A namespace for AiPanel statics.
 */
export namespace AiPanel {
  export interface IOptions {
    model: AiPanelModel;
    host: IAiPanelHost;
  }
}

interface IPanelViewProps {
  model: AiPanelModel;
  host: IAiPanelHost;
  focusKey: boolean;
  onSettings: (focusKey: boolean) => void;
}

function Icon(props: { icon: LabIcon }): JSX.Element {
  return <props.icon.react tag="span" elementSize="normal" />;
}

function HeaderButton(props: {
  icon: LabIcon;
  label: string;
  pressed?: boolean;
  onClick: () => void;
}): JSX.Element {
  return (
    <button
      type="button"
      className={`${CSS.iconButton} ${props.pressed ? CSS.active : ''}`}
      title={props.label}
      aria-label={props.label}
      aria-pressed={props.pressed}
      onClick={props.onClick}
    >
      <Icon icon={props.icon} />
    </button>
  );
}

function PanelView(props: IPanelViewProps): JSX.Element {
  const { model, host } = props;
  const { trans } = host;
  const active = model.active;
  const view = model.view;
  const agentOff = offReason(model.policy, 'agent');
  if (agentOff) {
    return <AgentOff trans={trans} reason={trans.__(agentOff)} />;
  }
  const title =
    view === 'sessions'
      ? trans.__('Sessions')
      : view === 'settings'
        ? trans.__('AI Settings')
        : active?.session?.title || trans.__('Terax AI');
  return (
    <>
      <div className={CSS.header}>
        <h2 className={CSS.title} title={title}>
          {title}
        </h2>
        <div className={CSS.headerButtons}>
          <HeaderButton
            icon={sessionsIcon}
            label={trans.__('Sessions')}
            pressed={view === 'sessions'}
            onClick={() =>
              model.setView(view === 'sessions' ? 'chat' : 'sessions')
            }
          />
          <HeaderButton
            icon={addIcon}
            label={trans.__('New session')}
            onClick={() => void model.newSession()}
          />
          <HeaderButton
            icon={settingsIcon}
            label={trans.__('AI settings')}
            pressed={view === 'settings'}
            onClick={() =>
              view === 'settings'
                ? model.setView('chat')
                : props.onSettings(false)
            }
          />
        </div>
      </div>
      <ModelBar model={model} trans={trans} />
      {model.notice && (
        <div className={CSS.notice} role="status">
          {model.notice}
        </div>
      )}
      <div className={CSS.body}>
        {view === 'sessions' && <SessionList model={model} host={host} />}
        {view === 'settings' && (
          <div className={CSS.scroller}>
            <SettingsView
              model={model}
              trans={trans}
              focusKey={props.focusKey}
              onEditSnippets={host.editSnippets}
            />
          </div>
        )}
        {view === 'chat' && (
          <ChatView
            model={model}
            session={active}
            host={host}
            onSettings={() => props.onSettings(true)}
          />
        )}
      </div>
    </>
  );
}

/**
 * The panel when the administrator turned the agent off: the reason in place
 * of the chat, so nobody types a prompt the server refuses.
 */
function AgentOff(props: {
  trans: TranslationBundle;
  reason: string;
}): JSX.Element {
  const { trans } = props;
  return (
    <>
      <div className={CSS.header}>
        <h2 className={CSS.title}>{trans.__('Terax AI')}</h2>
      </div>
      <div
        className={POLICY_CSS.off}
        data-policy="agent"
        role="status"
        aria-label={trans.__('The AI agent is turned off')}
      >
        <lockIcon.react tag="span" />
        <strong>{trans.__('The AI agent is turned off')}</strong>
        <p>{props.reason}</p>
      </div>
    </>
  );
}

/**
 * Provider and model of the chat, and the plan-mode toggle.
 */
function ModelBar(props: {
  model: AiPanelModel;
  trans: TranslationBundle;
}): JSX.Element {
  const { model, trans } = props;
  const provider = model.currentProvider();
  const current = model.currentModel();
  const models = model.models(provider);
  const session = model.active;
  const running = session?.state.running ?? false;
  const modelIds = models.map(m => m.id);
  if (current && !modelIds.includes(current)) {
    modelIds.unshift(current);
  }
  const providers = model.providers;
  return (
    <div className={CSS.modelBar}>
      <select
        className={CSS.select}
        value={provider}
        disabled={running}
        aria-label={trans.__('Provider')}
        title={trans.__(
          'Provider: %1',
          providers.find(p => p.id === provider)?.label || provider || '—'
        )}
        onChange={event => void model.choose(event.target.value, '')}
      >
        {!providers.some(p => p.id === provider) && (
          <option value={provider}>{provider || trans.__('provider')}</option>
        )}
        {providers.map(p => (
          <option key={p.id} value={p.id}>
            {p.label || p.id}
          </option>
        ))}
      </select>
      <select
        className={`${CSS.select} ${CSS.modelSelect}`}
        value={current}
        disabled={running}
        aria-label={trans.__('Model')}
        title={trans.__('Model: %1', current || '—')}
        onChange={event => void model.choose(provider, event.target.value)}
      >
        {!current && <option value="">{trans.__('choose a model')}</option>}
        {modelIds.map(id => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
      <label
        className={CSS.toggle}
        title={trans.__(
          'Plan mode: the agent queues every change; you review and apply the plan'
        )}
      >
        <input
          type="checkbox"
          checked={session?.state.planMode ?? false}
          disabled={!session}
          onChange={event => void session?.setPlanMode(event.target.checked)}
        />
        {trans.__('Plan')}
      </label>
    </div>
  );
}

/**
 * The first thing a new user meets: no model is connected yet. Each choice
 * chooses its provider for the chat and opens the settings at the next step.
 */
function ConnectModel(props: {
  model: AiPanelModel;
  trans: TranslationBundle;
}): JSX.Element {
  const { model, trans } = props;
  const problem = model.connectionProblem();
  const provider = model.providers.find(p => p.id === model.currentProvider());
  const why =
    problem === 'key' && provider
      ? trans.__('%1 needs an API key.', provider.label)
      : problem === 'model' && provider
        ? trans.__('Choose a model of %1.', provider.label)
        : trans.__(
            'Terax talks to a model you choose: one running here, or a hosted one with your key.'
          );
  const choices: {
    choice: ConnectChoice;
    title: string;
    detail: string;
  }[] = [
    {
      choice: 'ollama',
      title: trans.__('Ollama'),
      detail: trans.__('local models, on this machine (port 11434)')
    },
    {
      choice: 'lmstudio',
      title: trans.__('LM Studio'),
      detail: trans.__('local models, on this machine (port 1234)')
    },
    {
      choice: 'key',
      title: trans.__('Paste an API key'),
      detail: trans.__('OpenAI, Anthropic, Gemini, Mistral, OpenRouter, …')
    },
    {
      choice: 'custom',
      title: trans.__('Custom endpoint'),
      detail: trans.__(
        'any OpenAI-compatible server (vLLM, llama.cpp, a gateway)'
      )
    }
  ];
  return (
    <div
      className={CSS.connect}
      role="group"
      aria-label={trans.__('Connect a model')}
      data-problem={problem ?? ''}
    >
      <p>
        <strong>{trans.__('Connect a model')}</strong>
      </p>
      <p>{why}</p>
      {offeredChoices(model, choices).map(item => (
        <button
          key={item.choice}
          type="button"
          className={CSS.connectChoice}
          data-choice={item.choice}
          onClick={() => void model.connect(item.choice)}
        >
          <span>{item.title}</span>
          <small>{item.detail}</small>
        </button>
      ))}
    </div>
  );
}

/**
 * The empty state's choices the administrator allows: a local server only if
 * its provider is listed, a key if a hosted provider is, no custom endpoint.
 */
function offeredChoices<T extends { choice: ConnectChoice }>(
  model: AiPanelModel,
  choices: T[]
): T[] {
  const allowed = model.policy?.ai.providers;
  if (!allowed) {
    return choices;
  }
  return choices.filter(item =>
    item.choice === 'key'
      ? model.providers.some(p => !!p.key_name && !p.local)
      : item.choice === 'custom'
        ? false
        : allowed.includes(item.choice)
  );
}

/**
 * The session list: search, switch, rename, delete.
 */
function SessionList(props: {
  model: AiPanelModel;
  host: IAiPanelHost;
}): JSX.Element {
  const { model, host } = props;
  const { trans } = host;
  const [renaming, setRenaming] = React.useState<string | null>(null);
  const [name, setName] = React.useState('');
  const [now] = React.useState(() => Date.now());
  return (
    <div className={CSS.sessions}>
      <input
        className={`${CSS.textInput} ${CSS.search}`}
        type="search"
        value={model.query}
        placeholder={trans.__('Search sessions')}
        aria-label={trans.__('Search sessions')}
        onChange={event => model.setQuery(event.target.value)}
      />
      <ul className={CSS.sessionList}>
        {model.sessions.map(session => {
          const current = session.id === model.active?.id;
          const title = session.title || trans.__('Untitled session');
          return (
            <li
              key={session.id}
              className={`${CSS.session} ${current ? CSS.active : ''}`}
              data-session={session.id}
              aria-current={current || undefined}
            >
              {renaming === session.id ? (
                <input
                  className={`${CSS.textInput} ${CSS.renameInput}`}
                  autoFocus
                  value={name}
                  aria-label={trans.__('New title')}
                  onChange={event => setName(event.target.value)}
                  onBlur={() => setRenaming(null)}
                  onKeyDown={event => {
                    if (event.key === 'Enter') {
                      event.preventDefault();
                      setRenaming(null);
                      void model.renameSession(session.id, name.trim());
                    } else if (event.key === 'Escape') {
                      event.preventDefault();
                      setRenaming(null);
                    }
                  }}
                />
              ) : (
                <button
                  type="button"
                  className={CSS.sessionTitle}
                  title={title}
                  onClick={() => void model.select(session.id)}
                >
                  <span>{title}</span>
                  <span className={CSS.sessionMeta}>
                    {session.running && `● ${trans.__('running')} · `}
                    {relativeDate(
                      session.updated_at * 1000,
                      now,
                      undefined,
                      trans.__('just now')
                    )}
                  </span>
                </button>
              )}
              <div className={CSS.sessionActions}>
                <button
                  type="button"
                  className={CSS.iconButton}
                  title={trans.__('Rename')}
                  aria-label={trans.__('Rename %1', title)}
                  onClick={() => {
                    setName(session.title);
                    setRenaming(session.id);
                  }}
                >
                  <Icon icon={editIcon} />
                </button>
                <button
                  type="button"
                  className={CSS.iconButton}
                  title={trans.__('Delete')}
                  aria-label={trans.__('Delete %1', title)}
                  onClick={() =>
                    void host
                      .confirm(
                        trans.__('Delete this session?'),
                        trans.__(
                          '“%1” and its conversation will be deleted; a running task is stopped.',
                          title
                        ),
                        trans.__('Delete')
                      )
                      .then(yes =>
                        yes ? model.deleteSession(session.id) : undefined
                      )
                  }
                >
                  <Icon icon={deleteIcon} />
                </button>
              </div>
            </li>
          );
        })}
      </ul>
      {model.sessions.length === 0 && (
        <p className={CSS.empty}>
          {model.query
            ? trans.__('No session matches.')
            : trans.__('No sessions yet.')}
        </p>
      )}
    </div>
  );
}

/**
 * Keeps a scroller at the bottom while its content grows, unless the user
 * scrolled up.
 */
function useStickToBottom(): {
  scroller: React.RefObject<HTMLDivElement>;
  content: React.RefObject<HTMLDivElement>;
} {
  const scroller = React.useRef<HTMLDivElement>(null);
  const content = React.useRef<HTMLDivElement>(null);
  const stick = React.useRef(true);
  React.useEffect(() => {
    const outer = scroller.current;
    const inner = content.current;
    if (!outer || !inner) {
      return;
    }
    const onScroll = (): void => {
      stick.current =
        outer.scrollHeight - outer.scrollTop - outer.clientHeight < 48;
    };
    const observer = new ResizeObserver(() => {
      if (stick.current) {
        outer.scrollTop = outer.scrollHeight;
      }
    });
    outer.addEventListener('scroll', onScroll, { passive: true });
    observer.observe(inner);
    outer.scrollTop = outer.scrollHeight;
    return () => {
      outer.removeEventListener('scroll', onScroll);
      observer.disconnect();
    };
  }, []);
  return { scroller, content };
}

function ChatView(props: {
  model: AiPanelModel;
  session: AiSessionModel | null;
  host: IAiPanelHost;
  onSettings: () => void;
}): JSX.Element {
  const { model, session, host } = props;
  const { trans } = host;
  const { scroller, content } = useStickToBottom();
  const state: IChatState | null = session?.state ?? null;
  const busy = session?.busy ?? false;
  const decide = (id: string, decision: IAiDecision): void =>
    void session?.decide(id, decision);
  const allow = (rule: IAiRule, id: string): void => {
    if (!session || !state) {
      return;
    }
    void session
      .setRules([...state.rules, rule])
      .then(() => session.decide(id, { decision: 'approve' }));
  };
  const lastPrompt =
    state?.turns
      .slice()
      .reverse()
      .find(turn => turn.prompt)?.prompt ?? null;
  // The administrator decides what is auto-approved: no rules of the user's own.
  const rulesLocked =
    !!model.policy?.locked.includes('ai.approvals') &&
    model.policy.ai.approvals !== 'user';
  const providerId = session?.session?.provider ?? model.currentProvider();
  const keyName =
    model.providers.find(p => p.id === (state?.error?.provider ?? providerId))
      ?.key_name ?? null;

  return (
    <div className={CSS.chat}>
      <div className={CSS.scroller} ref={scroller}>
        <div ref={content}>
          {(!state || state.turns.length === 0) && (
            <div className={CSS.empty}>
              {session?.loading ? (
                <p>{trans.__('Loading…')}</p>
              ) : model.connectionProblem() ? (
                <ConnectModel model={model} trans={trans} />
              ) : (
                <>
                  <p>
                    <strong>{trans.__('Ask Terax about this project.')}</strong>
                  </p>
                  <p>
                    {trans.__(
                      'It reads, searches and runs tools here; every change and command waits for your approval.'
                    )}
                  </p>
                  <ul>
                    <li>
                      {trans.__(
                        '@ attaches a file, @notebook.ipynb# one of its cells, # a snippet'
                      )}
                    </li>
                    <li>{trans.__('/plan queues changes for one review')}</li>
                    <li>{trans.__('/init writes TERAX.md for the project')}</li>
                    <li>
                      {trans.__(
                        '/replay name replays a saved browser workflow without the model'
                      )}
                    </li>
                  </ul>
                </>
              )}
            </div>
          )}
          {state?.turns.map((turn, index) => (
            <Turn
              key={turn.key}
              turn={turn}
              tools={state.tools}
              host={host}
              expandReasoning={model.config.expandReasoning}
              onContinue={
                index === state.turns.length - 1 && !state.running
                  ? limit => void session?.continueWithLimit(limit)
                  : null
              }
            />
          ))}
          {state && <Todos todos={state.todos} trans={trans} />}
          {state?.suggestion && (
            <Suggestion
              suggestion={state.suggestion}
              code={host.code}
              trans={trans}
              onDismiss={() => session?.dismissSuggestion()}
            />
          )}
          {state && state.approvals.length > 0 && (
            <div
              className={CSS.approvals}
              aria-label={trans.__('Waiting for your approval')}
            >
              {state.approvals.map(approval => (
                <ApprovalCard
                  key={approval.id}
                  approval={approval}
                  host={host}
                  busy={busy}
                  onDecide={decide}
                  onAllow={allow}
                />
              ))}
            </div>
          )}
          {state && state.plan.length > 0 && (
            <PlanReview
              plan={state.plan}
              host={host}
              busy={busy}
              running={state.running}
              onApply={decisions => void session?.applyPlan(decisions)}
              onDiscard={() => void session?.discardPlan()}
            />
          )}
        </div>
      </div>
      {state?.error && (
        <ErrorBanner
          key={`${state.error.runId}:${state.error.reason}:${state.error.message}`}
          error={state.error}
          trans={trans}
          keyName={keyName}
          onSettings={props.onSettings}
          onTest={async () => {
            const result = await model.test(
              state.error?.provider ?? providerId,
              session?.session?.model ?? undefined
            );
            return result.message ?? (result.ok ? 'OK' : '');
          }}
          onRetry={
            lastPrompt && errorAction(state.error.reason) === 'retry'
              ? () => {
                  session?.setError(null);
                  void session?.send(lastPrompt);
                }
              : null
          }
          onNewSession={() => void model.newSession()}
          onDismiss={() => session?.setError(null)}
        />
      )}
      {session && state && rulesLocked && (
        <div className={CSS.rules} data-policy="approvals">
          <span className={POLICY_CSS.locked}>
            <lockIcon.react tag="span" />
            <span>
              {model.policy?.ai.approvals === 'always'
                ? trans.__(
                    'Auto-approve: off. Your administrator has every action wait for your approval.'
                  )
                : trans.__(
                    'Auto-approve: only the rules your administrator set.'
                  )}
            </span>
          </span>
        </div>
      )}
      {session && state && !rulesLocked && (
        <RulesEditor
          rules={state.rules}
          trans={trans}
          busy={busy}
          onChange={rules => void session.setRules(rules)}
        />
      )}
      <Composer
        model={model}
        trans={trans}
        searchFiles={host.searchFiles}
        notebookCells={host.notebookCells}
        cellLabel={host.cellLabel}
        running={state?.running ?? false}
        planMode={state?.planMode ?? false}
        busy={busy}
        onStop={() => void session?.stop()}
      />
    </div>
  );
}
