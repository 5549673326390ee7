/**
 * Provider settings in the panel: provider and model, base URL, the API key
 * (sent to the server, never shown again), a connection test; the session's
 * agent and custom agents.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { deleteAgent, type IAiAgent, putAgent } from '../api/ai';
import type { ICompletionStatus } from '../common/ai/completion';
import { lockedAiSettings, SET_BY_ADMIN } from '../common/policy';
import { CSS as POLICY_CSS } from '../policy/css';
import { lockIcon } from '../policy/icons';
import { completionState } from './completion';
import { CSS } from './css';
import { requestError } from './model';
import { ModelDetails } from './modeldetails';
import type { AiPanelModel, IModelListing } from './panelmodel';

interface ISettingsProps {
  model: AiPanelModel;
  trans: TranslationBundle;
  /** Open Lab's settings editor on this plugin (snippets). */
  onEditSnippets: () => void;
  /** Focus the key field on open (from a bad-key banner). */
  focusKey: boolean;
}

interface IMessage {
  ok: boolean;
  text: string;
}

/**
 * The settings view. Its provider and model are the chat's: choosing one
 * here chooses it for the chat (and the model bar shows it), and the other
 * way round.
 */
export function SettingsView(props: ISettingsProps): JSX.Element {
  const { model, trans } = props;
  const providers = model.providers;
  const providerId = model.currentProvider() || providers[0]?.id || '';
  const provider = providers.find(p => p.id === providerId) ?? null;
  const [modelId, setModelId] = React.useState(model.currentModel());
  const [baseURL, setBaseURL] = React.useState(provider?.base_url ?? '');
  const [message, setMessage] = React.useState<IMessage | null>(null);
  const [working, setWorking] = React.useState(false);
  const keyInput = React.useRef<HTMLInputElement>(null);
  const focus = model.settingsFocus;
  const [endpointOpen, setEndpointOpen] = React.useState(focus === 'custom');
  // Asked to open at the custom endpoint's form (the empty state's choice).
  const [seenFocus, setSeenFocus] = React.useState(focus);
  if (focus !== seenFocus) {
    setSeenFocus(focus);
    if (focus === 'custom') {
      setEndpointOpen(true);
    }
  }

  // Follow the model chosen elsewhere (the model bar, a pick in the list).
  const chosenModel = `${providerId}|${model.currentModel()}`;
  const [followed, setFollowed] = React.useState(chosenModel);
  if (chosenModel !== followed) {
    setFollowed(chosenModel);
    setModelId(model.currentModel());
  }
  // A provider shown anew: its base URL, no message.
  const shown = `${providerId}|${provider?.base_url ?? ''}`;
  const [lastShown, setLastShown] = React.useState(shown);
  if (shown !== lastShown) {
    setLastShown(shown);
    setBaseURL(provider?.base_url ?? '');
    setMessage(null);
  }

  React.useEffect(() => {
    // The provider's own list, once: what the model dropdown offers.
    if (providerId && !model.listing(providerId)) {
      void model.loadModels(providerId, true);
    }
  }, [providerId, model]);

  React.useEffect(() => {
    if (props.focusKey || focus === 'key') {
      keyInput.current?.focus();
    }
    if (focus) {
      model.clearSettingsFocus();
    }
  }, [props.focusKey, focus, provider?.key_name, model]);

  const models = model.models(providerId);
  const listing = model.listing(providerId);
  const run = async (action: () => Promise<IMessage | null>): Promise<void> => {
    setWorking(true);
    try {
      setMessage(await action());
    } finally {
      setWorking(false);
    }
  };

  const saveKey = (): void => {
    const field = keyInput.current;
    const value = field?.value ?? '';
    if (field) {
      // The page keeps nothing of the key.
      field.value = '';
    }
    if (!value.trim() || !provider) {
      return;
    }
    void run(async () => {
      const problem = await model.setProviderKey(provider.id, value.trim());
      return problem
        ? { ok: false, text: problem }
        : { ok: true, text: trans.__('Key saved on the server.') };
    });
  };

  const locked = provider?.source === 'config';
  const sessionRunning = model.active?.state.running ?? false;
  const testing = model.testing === providerId && !!providerId;
  const label = provider?.label ?? providerId;
  const providersLocked = !!model.policy?.locked.includes('ai.providers');
  return (
    <div className={CSS.settings}>
      <AdminSettings model={model} trans={trans} />
      <section
        className={CSS.section}
        aria-label={trans.__('Provider and model')}
      >
        <h3>{trans.__('Provider and model')}</h3>
        <label className={CSS.field}>
          <span>{trans.__('Provider')}</span>
          <select
            className={CSS.select}
            value={providerId}
            aria-label={trans.__('Provider')}
            disabled={sessionRunning}
            onChange={event => {
              if (event.target.value !== providerId) {
                void model.choose(event.target.value, '');
              }
            }}
          >
            {providers.map(p => (
              <option key={p.id} value={p.id}>
                {p.label || p.id}
                {p.key_name && !p.key_set && !p.local
                  ? ` (${trans.__('no key')})`
                  : ''}
              </option>
            ))}
          </select>
          {providersLocked && (
            <LockLabel
              trans={trans}
              text={trans.__('Only the providers your administrator allows.')}
            />
          )}
        </label>
        <div className={CSS.field}>
          <span id="jp-TeraxAi-modelLabel">{trans.__('Model')}</span>
          <ModelPicker
            trans={trans}
            value={modelId}
            options={models.map(m => m.id)}
            listName={trans.__('Models of %1', label)}
            disabled={sessionRunning}
            onChange={setModelId}
            onPick={id => {
              setModelId(id);
              void model.choose(providerId, id);
            }}
          />
          <ListingNote
            trans={trans}
            label={label}
            listing={listing}
            count={models.length}
          />
        </div>
        <div className={CSS.actions}>
          <button
            type="button"
            className={`${CSS.button} ${CSS.primary}`}
            disabled={!providerId || sessionRunning}
            onClick={() =>
              void run(async () => {
                await model.choose(providerId, modelId.trim());
                return {
                  ok: true,
                  text: trans.__(
                    'Chats use %1 %2.',
                    label,
                    modelId.trim() || trans.__('(its default model)')
                  )
                };
              })
            }
          >
            {trans.__('Use for chats')}
          </button>
          <button
            type="button"
            className={CSS.button}
            disabled={!providerId || working || listing?.state === 'loading'}
            onClick={() =>
              void run(async () => {
                const problem = await model.loadModels(providerId, true);
                return problem
                  ? { ok: false, text: problem }
                  : {
                      ok: true,
                      text: trans.__(
                        '%1 models listed.',
                        model.models(providerId).length
                      )
                    };
              })
            }
          >
            {trans.__('List models')}
          </button>
        </div>
      </section>

      {provider && (
        <section className={CSS.section} aria-label={trans.__('Connection')}>
          <h3>{trans.__('Connection')}</h3>
          <label className={CSS.field}>
            <span>{trans.__('Base URL')}</span>
            <div className={CSS.fieldRow}>
              <input
                className={CSS.textInput}
                type="url"
                value={baseURL}
                aria-label={trans.__('Base URL')}
                disabled={locked}
                onChange={event => setBaseURL(event.target.value)}
              />
              {!locked && (
                <button
                  type="button"
                  className={CSS.button}
                  disabled={working || baseURL === provider.base_url}
                  onClick={() =>
                    void run(async () => {
                      const problem = await model.setBaseURL(
                        provider.id,
                        baseURL.trim()
                      );
                      return problem
                        ? { ok: false, text: problem }
                        : { ok: true, text: trans.__('Base URL saved.') };
                    })
                  }
                >
                  {trans.__('Save')}
                </button>
              )}
            </div>
          </label>
          {provider.key_name && (
            <label className={CSS.field}>
              <span>
                {trans.__('API key')} · <code>{provider.key_name}</code>{' '}
                <span
                  className={`${CSS.keyState} ${
                    provider.key_set ? CSS.ok : ''
                  }`}
                  data-key-set={provider.key_set}
                >
                  {provider.key_set ? trans.__('set') : trans.__('not set')}
                </span>
              </span>
              <div className={CSS.fieldRow}>
                <input
                  ref={keyInput}
                  className={CSS.textInput}
                  type="password"
                  autoComplete="new-password"
                  spellCheck={false}
                  placeholder={
                    provider.key_set
                      ? trans.__('replace the key')
                      : trans.__('paste the key')
                  }
                  aria-label={trans.__('API key for %1', provider.label)}
                  onKeyDown={event => {
                    if (event.key === 'Enter') {
                      event.preventDefault();
                      saveKey();
                    }
                  }}
                />
                <button
                  type="button"
                  className={CSS.button}
                  disabled={working}
                  onClick={saveKey}
                >
                  {trans.__('Save key')}
                </button>
              </div>
            </label>
          )}
          {provider.local && (
            <p className={CSS.hint}>
              {trans.__(
                '%1 runs on this machine or your network: start it, load a model, then test the connection.',
                provider.product || provider.label
              )}
            </p>
          )}
          <div className={CSS.actions}>
            <button
              type="button"
              className={CSS.button}
              disabled={working || testing}
              aria-busy={testing}
              onClick={() =>
                void run(async () => {
                  const result = await model.test(provider.id, modelId.trim());
                  return {
                    ok: result.ok,
                    text:
                      result.message ??
                      (result.ok ? trans.__('Connected.') : trans.__('Failed.'))
                  };
                })
              }
            >
              {testing ? trans.__('Testing…') : trans.__('Test connection')}
            </button>
          </div>
          {testing && <TestProgress trans={trans} label={label} />}
        </section>
      )}
      {message && (
        <div
          className={`${CSS.testResult} ${message.ok ? CSS.ok : CSS.error}`}
          role="status"
        >
          {message.text}
        </div>
      )}

      {!providersLocked && (
        <EndpointForm
          model={model}
          trans={trans}
          open={endpointOpen}
          onToggle={setEndpointOpen}
        />
      )}

      <ModelDetails
        model={model}
        trans={trans}
        provider={providerId}
        modelId={modelId.trim()}
      />

      <CompletionSection trans={trans} />

      <AgentSettings model={model} trans={trans} />

      <section className={CSS.section} aria-label={trans.__('Snippets')}>
        <h3>{trans.__('Snippets')}</h3>
        <p>
          {Object.keys(model.config.snippets).length
            ? Object.keys(model.config.snippets)
                .map(name => `#${name}`)
                .join(' ')
            : trans.__('No snippets yet.')}
        </p>
        <button
          type="button"
          className={CSS.button}
          onClick={props.onEditSnippets}
        >
          {trans.__('Edit snippets…')}
        </button>
      </section>
    </div>
  );
}

/**
 * "Set by your administrator", with a padlock.
 */
function LockLabel(props: {
  trans: TranslationBundle;
  text?: string;
}): JSX.Element {
  const text = props.text ?? props.trans.__(SET_BY_ADMIN);
  return (
    <span className={POLICY_CSS.locked} data-policy-locked="true">
      <lockIcon.react tag="span" />
      <span>{text}</span>
    </span>
  );
}

/**
 * What the administrator set for the AI (defaults, approvals, limits), with
 * the values, read-only: the server applies them whatever is chosen here.
 */
function AdminSettings(props: {
  model: AiPanelModel;
  trans: TranslationBundle;
}): JSX.Element | null {
  const { model, trans } = props;
  const rows = lockedAiSettings(model.policy);
  if (!rows.length) {
    return null;
  }
  return (
    <section
      className={CSS.section}
      aria-label={trans.__('Set by your administrator')}
      data-policy="ai"
    >
      <h3>
        <LockLabel trans={trans} />
      </h3>
      {rows.map(row => (
        <label key={row.name} className={CSS.field} data-setting={row.name}>
          <span>{trans.__(row.label)}</span>
          <input
            className={CSS.textInput}
            type="text"
            value={row.value}
            disabled
            readOnly
            title={`${row.value} · ${trans.__(SET_BY_ADMIN)}`}
          />
        </label>
      ))}
    </section>
  );
}

/**
 * The model field: free text, with a dropdown of the provider's models
 * (typing filters it). In the page's flow, not over it, so nothing below is
 * covered while it is open.
 */
function ModelPicker(props: {
  trans: TranslationBundle;
  value: string;
  options: string[];
  listName: string;
  disabled: boolean;
  onChange: (value: string) => void;
  onPick: (id: string) => void;
}): JSX.Element {
  const { trans, value, options } = props;
  const [open, setOpen] = React.useState(false);
  const [filtering, setFiltering] = React.useState(false);
  const [active, setActive] = React.useState(-1);
  const needle = filtering ? value.trim().toLowerCase() : '';
  const shown = needle
    ? options.filter(id => id.toLowerCase().includes(needle))
    : options;
  const listId = 'jp-TeraxAi-modelList';
  const pick = (id: string): void => {
    setOpen(false);
    setFiltering(false);
    setActive(-1);
    props.onPick(id);
  };
  return (
    <div className={CSS.modelPicker}>
      <div className={CSS.fieldRow}>
        <input
          className={CSS.textInput}
          type="text"
          role="combobox"
          aria-expanded={open}
          aria-controls={listId}
          aria-autocomplete="list"
          aria-label={trans.__('Model')}
          aria-activedescendant={
            open && active >= 0 ? `${listId}-${active}` : undefined
          }
          value={value}
          placeholder={
            options.length
              ? trans.__('pick or type a model id')
              : trans.__('a model id')
          }
          disabled={props.disabled}
          spellCheck={false}
          onChange={event => {
            props.onChange(event.target.value);
            setFiltering(true);
            setActive(-1);
          }}
          onKeyDown={event => {
            if (event.key === 'ArrowDown' && options.length) {
              event.preventDefault();
              setOpen(true);
              setActive(Math.min(active + 1, shown.length - 1));
            } else if (event.key === 'ArrowUp' && open) {
              event.preventDefault();
              setActive(Math.max(active - 1, 0));
            } else if (event.key === 'Enter' && open && shown[active]) {
              event.preventDefault();
              pick(shown[active]);
            } else if (event.key === 'Escape' && open) {
              event.preventDefault();
              setOpen(false);
            }
          }}
        />
        <button
          type="button"
          className={CSS.button}
          aria-label={trans.__('Show models')}
          title={trans.__('Show models')}
          aria-expanded={open}
          disabled={props.disabled || !options.length}
          onClick={() => {
            setFiltering(false);
            setOpen(!open);
          }}
        >
          ▾
        </button>
      </div>
      {open && (
        <ul
          id={listId}
          role="listbox"
          aria-label={props.listName}
          className={CSS.modelList}
        >
          {shown.map((id, index) => (
            <li
              key={id}
              id={`${listId}-${index}`}
              role="option"
              aria-selected={id === value}
              className={`${CSS.pickerItem} ${index === active ? CSS.active : ''}`}
              onMouseDown={event => event.preventDefault()}
              onClick={() => pick(id)}
            >
              {id}
            </li>
          ))}
          {shown.length === 0 && (
            <li className={CSS.hint}>{trans.__('No listed model matches.')}</li>
          )}
        </ul>
      )}
    </div>
  );
}

/**
 * Where the provider's model list stands, under the model field.
 */
function ListingNote(props: {
  trans: TranslationBundle;
  label: string;
  listing: IModelListing | null;
  count: number;
}): JSX.Element | null {
  const { trans, listing, label } = props;
  if (!listing) {
    return null;
  }
  if (listing.state === 'loading') {
    return (
      <span className={CSS.hint} role="status">
        {trans.__('Asking %1 for its models…', label)}
      </span>
    );
  }
  if (listing.state === 'failed') {
    return (
      <span
        className={`${CSS.hint} ${CSS.listingFailed}`}
        role="status"
        data-listing="failed"
      >
        {trans.__(
          'Could not list the models: %1 Type the model id instead.',
          listing.problem ?? ''
        )}
      </span>
    );
  }
  return (
    <span className={CSS.hint} data-listing="ok">
      {props.count
        ? trans._n(
            '%1 model to pick from.',
            '%1 models to pick from.',
            props.count
          )
        : trans.__('%1 lists no models: type the model id.', label)}
    </span>
  );
}

/**
 * Shown while a connection test runs: what is tested, and for how long.
 */
function TestProgress(props: {
  trans: TranslationBundle;
  label: string;
}): JSX.Element {
  const [seconds, setSeconds] = React.useState(0);
  React.useEffect(() => {
    const started = Date.now();
    const timer = setInterval(
      () => setSeconds(Math.floor((Date.now() - started) / 1000)),
      500
    );
    return () => clearInterval(timer);
  }, []);
  return (
    <div className={`${CSS.testResult} ${CSS.testing}`} role="status">
      {seconds
        ? props.trans.__(
            'Testing the connection to %1… %2 s',
            props.label,
            seconds
          )
        : props.trans.__('Testing the connection to %1…', props.label)}
    </div>
  );
}

/**
 * A custom OpenAI-compatible endpoint (vLLM, llama.cpp, a gateway): added as
 * the user's own provider; the server checks the address as for any other.
 */
function EndpointForm(props: {
  model: AiPanelModel;
  trans: TranslationBundle;
  open: boolean;
  onToggle: (open: boolean) => void;
}): JSX.Element {
  const { model, trans } = props;
  const [label, setLabel] = React.useState('');
  const [baseURL, setBaseURL] = React.useState('');
  const [keyName, setKeyName] = React.useState('');
  const [local, setLocal] = React.useState<boolean | null>(null);
  const [problem, setProblem] = React.useState<string | null>(null);
  const [saving, setSaving] = React.useState(false);
  const first = React.useRef<HTMLInputElement>(null);
  React.useEffect(() => {
    if (props.open) {
      first.current?.focus();
    }
  }, [props.open]);
  const isLocal = local ?? looksLocal(baseURL);
  return (
    <section className={CSS.section} aria-label={trans.__('Custom endpoint')}>
      <button
        type="button"
        className={CSS.disclosure}
        aria-expanded={props.open}
        onClick={() => props.onToggle(!props.open)}
      >
        <h3>{trans.__('Add an OpenAI-compatible endpoint')}</h3>
      </button>
      {props.open && (
        <form
          onSubmit={event => {
            event.preventDefault();
            setSaving(true);
            void model
              .addEndpoint({ label, baseURL, keyName, local: isLocal })
              .then(failed => {
                setProblem(failed);
                if (!failed) {
                  setLabel('');
                  setBaseURL('');
                  setKeyName('');
                  setLocal(null);
                  props.onToggle(false);
                }
              })
              .finally(() => setSaving(false));
          }}
        >
          <label className={CSS.field}>
            <span>{trans.__('Name')}</span>
            <input
              ref={first}
              className={CSS.textInput}
              type="text"
              value={label}
              placeholder={trans.__('e.g. vLLM on the GPU box')}
              onChange={event => setLabel(event.target.value)}
            />
          </label>
          <label className={CSS.field}>
            <span>{trans.__('Endpoint base URL')}</span>
            <input
              className={CSS.textInput}
              type="url"
              value={baseURL}
              placeholder="http://127.0.0.1:8000/v1"
              onChange={event => setBaseURL(event.target.value)}
            />
          </label>
          <label className={CSS.field}>
            <span>{trans.__('Key name (optional)')}</span>
            <input
              className={CSS.textInput}
              type="text"
              value={keyName}
              placeholder="MY_ENDPOINT_API_KEY"
              spellCheck={false}
              onChange={event => setKeyName(event.target.value.toUpperCase())}
            />
          </label>
          <label className={CSS.checkRow}>
            <input
              type="checkbox"
              checked={isLocal}
              onChange={event => setLocal(event.target.checked)}
            />
            {trans.__('On this machine or my network (a local address)')}
          </label>
          {problem && (
            <div className={`${CSS.testResult} ${CSS.error}`} role="status">
              {problem}
            </div>
          )}
          <div className={CSS.actions}>
            <button
              type="submit"
              className={`${CSS.button} ${CSS.primary}`}
              disabled={saving || !label.trim() || !baseURL.trim()}
            >
              {trans.__('Add endpoint')}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

/**
 * Whether a URL's host is this machine or a private network address (the
 * server decides; this only pre-ticks the box).
 */
export function looksLocal(url: string): boolean {
  let host: string;
  try {
    host = new URL(url.trim()).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  return (
    host === 'localhost' ||
    host === '::1' ||
    host.endsWith('.local') ||
    /^127\./.test(host) ||
    /^10\./.test(host) ||
    /^192\.168\./.test(host) ||
    /^172\.(1[6-9]|2\d|3[01])\./.test(host)
  );
}

/**
 * Whether inline completion works, and why not: it follows the chat's
 * provider and model unless the inline completer's settings name others.
 */
function CompletionSection(props: { trans: TranslationBundle }): JSX.Element {
  const { trans } = props;
  const [status, setStatus] = React.useState<ICompletionStatus>(
    completionState.status
  );
  React.useEffect(() => {
    const follow = (_: unknown, next: ICompletionStatus): void =>
      setStatus(next);
    completionState.changed.connect(follow);
    return () => {
      completionState.changed.disconnect(follow);
    };
  }, []);
  const bad = status.state === 'off' || status.state === 'error';
  return (
    <section className={CSS.section} aria-label={trans.__('Inline completion')}>
      <h3>{trans.__('Inline completion')}</h3>
      <div
        className={`${CSS.testResult} ${CSS.completionStatus} ${bad ? CSS.error : status.state === 'ok' ? CSS.ok : ''}`}
        data-state={status.state}
        role="status"
      >
        <strong>{trans.__(status.text)}</strong>
        {status.detail && <div>{status.detail}</div>}
      </div>
      <p className={CSS.hint}>
        {trans.__(
          'Completions use the chat’s provider and model unless Settings › Inline Completer › Terax AI names others.'
        )}
      </p>
    </section>
  );
}

/**
 * The session's agent, and custom agents (prompt and tool subset).
 */
function AgentSettings(props: {
  model: AiPanelModel;
  trans: TranslationBundle;
}): JSX.Element {
  const { model, trans } = props;
  const agents = model.agents;
  const session = model.active;
  const [editing, setEditing] = React.useState<IAiAgent | null>(null);
  const [problem, setProblem] = React.useState<string | null>(null);
  const tools = React.useMemo(() => {
    const all = new Set<string>();
    agents.forEach(agent => agent.tools.forEach(tool => all.add(tool)));
    return [...all].sort();
  }, [agents]);
  const choosable = agents.filter(agent => !agent.subagent);

  const save = async (agent: IAiAgent): Promise<void> => {
    try {
      await putAgent(agent.name, {
        prompt: agent.prompt,
        tools: agent.tools,
        description: agent.description
      });
      setEditing(null);
      setProblem(null);
      await model.loadProviders();
    } catch (error) {
      setProblem(requestError(error).message);
    }
  };
  const remove = async (name: string): Promise<void> => {
    try {
      await deleteAgent(name);
      await model.loadProviders();
    } catch (error) {
      setProblem(requestError(error).message);
    }
  };

  return (
    <section className={CSS.section} aria-label={trans.__('Agents')}>
      <h3>{trans.__('Agents')}</h3>
      {session?.session && (
        <label className={CSS.field}>
          <span>{trans.__('Agent of this session')}</span>
          <select
            className={CSS.select}
            value={session.session.agent}
            disabled={session.state.running}
            onChange={event =>
              void session.update({ agent: event.target.value })
            }
          >
            {choosable.map(agent => (
              <option key={agent.name} value={agent.name}>
                {agent.name}
                {agent.description ? ` — ${agent.description}` : ''}
              </option>
            ))}
          </select>
        </label>
      )}
      <ul>
        {agents
          .filter(agent => !agent.builtin)
          .map(agent => (
            <li key={agent.name} className={CSS.agent}>
              <strong>{agent.name}</strong>{' '}
              <small>{trans.__('%1 tools', agent.tools.length)}</small>
              <button
                type="button"
                className={CSS.codeButton}
                onClick={() => setEditing(agent)}
              >
                {trans.__('Edit')}
              </button>
              <button
                type="button"
                className={CSS.codeButton}
                onClick={() => void remove(agent.name)}
              >
                {trans.__('Delete')}
              </button>
            </li>
          ))}
      </ul>
      {problem && (
        <div className={`${CSS.testResult} ${CSS.error}`}>{problem}</div>
      )}
      {editing ? (
        <AgentForm
          agent={editing}
          tools={tools}
          trans={trans}
          onSave={agent => void save(agent)}
          onCancel={() => setEditing(null)}
        />
      ) : (
        <button
          type="button"
          className={CSS.button}
          onClick={() =>
            setEditing({
              name: '',
              description: '',
              prompt: '',
              tools: tools.filter(tool => !tool.startsWith('bash')),
              subagent: false,
              builtin: false,
              max_steps: null
            })
          }
        >
          {trans.__('New agent…')}
        </button>
      )}
    </section>
  );
}

function AgentForm(props: {
  agent: IAiAgent;
  tools: string[];
  trans: TranslationBundle;
  onSave: (agent: IAiAgent) => void;
  onCancel: () => void;
}): JSX.Element {
  const { trans } = props;
  const [agent, setAgent] = React.useState(props.agent);
  const isNew = !props.agent.name;
  return (
    <div className={CSS.agent}>
      <label className={CSS.field}>
        <span>{trans.__('Name')}</span>
        <input
          className={CSS.textInput}
          type="text"
          value={agent.name}
          disabled={!isNew}
          pattern="[a-z][a-z0-9_-]*"
          onChange={event => setAgent({ ...agent, name: event.target.value })}
        />
      </label>
      <label className={CSS.field}>
        <span>{trans.__('Description')}</span>
        <input
          className={CSS.textInput}
          type="text"
          value={agent.description}
          onChange={event =>
            setAgent({ ...agent, description: event.target.value })
          }
        />
      </label>
      <label className={CSS.field}>
        <span>{trans.__('Prompt')}</span>
        <textarea
          className={CSS.textInput}
          rows={4}
          value={agent.prompt}
          onChange={event => setAgent({ ...agent, prompt: event.target.value })}
        />
      </label>
      <fieldset className={CSS.toolChecks}>
        <legend>{trans.__('Tools')}</legend>
        {props.tools.map(tool => (
          <label key={tool}>
            <input
              type="checkbox"
              checked={agent.tools.includes(tool)}
              onChange={event =>
                setAgent({
                  ...agent,
                  tools: event.target.checked
                    ? [...agent.tools, tool]
                    : agent.tools.filter(t => t !== tool)
                })
              }
            />
            {tool}
          </label>
        ))}
      </fieldset>
      <div className={CSS.actions}>
        <button
          type="button"
          className={`${CSS.button} ${CSS.primary}`}
          disabled={!agent.name || !agent.prompt.trim()}
          onClick={() => props.onSave(agent)}
        >
          {trans.__('Save agent')}
        </button>
        <button type="button" className={CSS.button} onClick={props.onCancel}>
          {trans.__('Cancel')}
        </button>
      </div>
    </div>
  );
}
