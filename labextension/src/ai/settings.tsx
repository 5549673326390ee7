/**
 * Provider settings in the panel: provider and model, base URL, the API key
 * (sent to the server, never shown again), a connection test; the session's
 * agent and custom agents.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { deleteAgent, type IAiAgent, putAgent } from '../api/ai';
import { CSS } from './css';
import { requestError } from './model';
import { ModelDetails } from './modeldetails';
import type { AiPanelModel } from './panelmodel';

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
 * The settings view.
 */
export function SettingsView(props: ISettingsProps): JSX.Element {
  const { model, trans } = props;
  const providers = model.providers;
  const [providerId, setProviderId] = React.useState(
    model.currentProvider() || providers[0]?.id || ''
  );
  const provider = providers.find(p => p.id === providerId) ?? null;
  const [modelId, setModelId] = React.useState(model.currentModel());
  const [baseURL, setBaseURL] = React.useState(provider?.base_url ?? '');
  const [message, setMessage] = React.useState<IMessage | null>(null);
  const [working, setWorking] = React.useState(false);
  const keyInput = React.useRef<HTMLInputElement>(null);

  // Follow the provider chosen elsewhere (the model bar).
  const chosen = model.currentProvider();
  const [followed, setFollowed] = React.useState(chosen);
  if (chosen !== followed) {
    setFollowed(chosen);
    if (chosen) {
      setProviderId(chosen);
      setModelId(model.currentModel());
    }
  }
  if (!providerId && providers.length) {
    setProviderId(providers[0].id);
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
    if (providerId) {
      void model.loadModels(providerId);
    }
  }, [providerId, model]);

  React.useEffect(() => {
    if (props.focusKey) {
      keyInput.current?.focus();
    }
  }, [props.focusKey, provider?.key_name]);

  const models = model.models(providerId);
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
  return (
    <div className={CSS.settings}>
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
            onChange={event => {
              setProviderId(event.target.value);
              setModelId('');
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
        </label>
        <label className={CSS.field}>
          <span>{trans.__('Model')}</span>
          <input
            className={CSS.textInput}
            type="text"
            list="jp-TeraxAi-models"
            value={modelId}
            aria-label={trans.__('Model')}
            placeholder={trans.__('a model id')}
            onChange={event => setModelId(event.target.value)}
          />
          <datalist id="jp-TeraxAi-models">
            {models.map(m => (
              <option key={m.id} value={m.id}>
                {m.label}
              </option>
            ))}
          </datalist>
        </label>
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
                    provider?.label ?? providerId,
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
            disabled={!providerId || working}
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
          <div className={CSS.actions}>
            <button
              type="button"
              className={CSS.button}
              disabled={working}
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
              {trans.__('Test connection')}
            </button>
          </div>
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

      <ModelDetails
        model={model}
        trans={trans}
        provider={providerId}
        modelId={modelId.trim()}
      />

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
