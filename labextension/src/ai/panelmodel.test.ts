import type { ServerConnection } from '@jupyterlab/services';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import * as api from '../api/ai';
import type { IAiProvider } from '../api/ai';
import { TeraxAPIError } from '../api/request';
import { AiSessionModel } from './model';
import { AiPanelModel, endpointId } from './panelmodel';

// The panel model is live; the REST client under it is faked.
vi.mock('../api/ai', () => ({
  providerState: vi.fn(),
  listAgents: vi.fn(),
  listModels: vi.fn(),
  providerModels: vi.fn(),
  putProvider: vi.fn(),
  testConnection: vi.fn(),
  updateSession: vi.fn(),
  listSessions: vi.fn()
}));

const rest = vi.mocked(api);

function provider(fields: Partial<IAiProvider>): IAiProvider {
  return {
    id: 'x',
    label: 'X',
    kind: 'openai',
    base_url: 'http://127.0.0.1:1/v1',
    key_name: null,
    local: true,
    product: null,
    source: 'builtin',
    key_set: false,
    ...fields
  };
}

const PROVIDERS = [
  provider({ id: 'ollama', label: 'Ollama' }),
  provider({
    id: 'openai',
    label: 'OpenAI',
    local: false,
    key_name: 'OPENAI_API_KEY',
    base_url: 'https://api.openai.com/v1'
  })
];

function refused(message: string, reason: string): TeraxAPIError {
  return new TeraxAPIError(
    new Response(null, { status: 502 }),
    message,
    reason
  );
}

function panel(): AiPanelModel {
  return new AiPanelModel({
    settings: {} as ServerConnection.ISettings,
    saveDefaults: vi.fn()
  });
}

beforeEach(() => {
  vi.resetAllMocks();
  rest.listAgents.mockResolvedValue([]);
  rest.listModels.mockResolvedValue([]);
});

describe('connecting a model', () => {
  it('takes the server defaults from the provider list, before any session', async () => {
    rest.providerState.mockResolvedValue({
      providers: PROVIDERS,
      default_provider: 'ollama',
      default_model: 'llama3.2'
    });
    rest.providerModels.mockResolvedValue([]);
    const model = panel();
    expect(model.connectionProblem()).toBeNull(); // not known before the list
    await model.loadProviders();
    expect(model.currentProvider()).toBe('ollama');
    expect(model.currentModel()).toBe('llama3.2');
    expect(model.connectionProblem()).toBeNull();
  });

  it('says what is missing: a provider, a key', async () => {
    rest.providerState.mockResolvedValue({ providers: PROVIDERS });
    rest.providerModels.mockRejectedValue(
      refused('No key is set for OpenAI.', 'missing_key')
    );
    const model = panel();
    await model.loadProviders();
    expect(model.connectionProblem()).toBe('provider');
    await model.choose('openai', 'gpt-5');
    expect(model.connectionProblem()).toBe('key');
  });

  it("keeps why the provider's model list failed, and lists what it can", async () => {
    rest.providerState.mockResolvedValue({ providers: PROVIDERS });
    rest.providerModels.mockRejectedValueOnce(
      refused(
        'Nothing answers at http://127.0.0.1:11434',
        'provider_unreachable'
      )
    );
    const model = panel();
    await model.loadProviders();
    await model.connect('ollama');
    expect(model.view).toBe('settings');
    expect(model.currentProvider()).toBe('ollama');
    expect(model.listing('ollama')).toEqual({
      state: 'failed',
      problem: 'Nothing answers at http://127.0.0.1:11434'
    });
    expect(model.connectionProblem()).toBe('model');

    rest.providerModels.mockResolvedValueOnce([
      { id: 'qwen2.5' } as api.IAiModel,
      { id: 'llama3.2' } as api.IAiModel
    ]);
    expect(await model.loadModels('ollama', true)).toBeNull();
    expect(model.listing('ollama')?.state).toBe('ok');
    expect(model.models('ollama').map(m => m.id)).toEqual([
      'qwen2.5',
      'llama3.2'
    ]);
  });

  it('opens the settings at the key of a hosted provider', async () => {
    rest.providerState.mockResolvedValue({ providers: PROVIDERS });
    rest.providerModels.mockResolvedValue([]);
    const model = panel();
    await model.loadProviders();
    await model.choose('ollama', 'llama3.2');
    await model.connect('key');
    expect(model.currentProvider()).toBe('openai');
    expect(model.settingsFocus).toBe('key');
    model.clearSettingsFocus();
    expect(model.settingsFocus).toBeNull();
  });

  it('adds a custom endpoint as an openai provider and chooses it', async () => {
    rest.providerState.mockResolvedValue({ providers: PROVIDERS });
    rest.providerModels.mockResolvedValue([{ id: 'm' } as api.IAiModel]);
    rest.putProvider.mockResolvedValue(PROVIDERS[0]);
    const model = panel();
    await model.loadProviders();
    const problem = await model.addEndpoint({
      label: 'vLLM box',
      baseURL: ' http://10.0.0.5:8000/v1 ',
      keyName: '',
      local: true
    });
    expect(problem).toBeNull();
    expect(rest.putProvider).toHaveBeenCalledWith('vllm-box', {
      kind: 'openai',
      label: 'vLLM box',
      base_url: 'http://10.0.0.5:8000/v1',
      local: true
    });
    expect(model.currentProvider()).toBe('vllm-box');
    expect(model.currentModel()).toBe('m');
  });

  it("shows the server's refusal of an endpoint and chooses nothing", async () => {
    rest.providerState.mockResolvedValue({ providers: PROVIDERS });
    rest.putProvider.mockRejectedValue(
      refused('base_url is an http(s) URL.', 'invalid_url')
    );
    const model = panel();
    await model.loadProviders();
    const problem = await model.addEndpoint({
      label: 'Bad',
      baseURL: 'ftp://x',
      keyName: '',
      local: false
    });
    expect(problem).toBe('base_url is an http(s) URL.');
    expect(model.currentProvider()).toBe('');
  });

  it('is testing while a connection test runs', async () => {
    rest.providerState.mockResolvedValue({ providers: PROVIDERS });
    let finish: (value: api.IConnectionTest) => void = () => undefined;
    rest.testConnection.mockReturnValue(
      new Promise(resolve => {
        finish = resolve;
      })
    );
    const model = panel();
    const result = model.test('ollama');
    expect(model.testing).toBe('ollama');
    finish({
      ok: false,
      latency_ms: 6000,
      models: [],
      message: 'Ollama did not answer within 6 s',
      reason: 'provider_timeout'
    });
    expect((await result).reason).toBe('provider_timeout');
    expect(model.testing).toBeNull();
  });
});

describe('endpointId', () => {
  it('makes a provider id of a name, unique among the providers', () => {
    expect(endpointId('vLLM on the GPU box!', [])).toBe('vllm-on-the-gpu-box');
    expect(endpointId('Ollama', [{ id: 'ollama' }])).toBe('ollama-2');
    expect(endpointId('  ', [])).toBe('');
    expect(endpointId('x'.repeat(80), []).length).toBeLessThanOrEqual(40);
  });
});

describe('start', () => {
  it('opens the newest session without leaving the settings', async () => {
    rest.providerState.mockResolvedValue({ providers: PROVIDERS });
    rest.providerModels.mockResolvedValue([]);
    let sessions: (value: api.IAiSessionSummary[]) => void = () => undefined;
    rest.listSessions.mockReturnValue(
      new Promise(resolve => {
        sessions = resolve;
      })
    );
    // The session's own loading (its REST calls, its socket) is model.test.ts's.
    vi.spyOn(AiSessionModel.prototype, 'load').mockResolvedValue(undefined);
    const model = panel();
    const started = model.start();
    model.setView('settings'); // the settings command, before the sessions came
    sessions([{ id: 's1' } as api.IAiSessionSummary]);
    await started;
    expect(model.active?.id).toBe('s1');
    expect(model.view).toBe('settings');
    model.dispose();
  });
});

describe('choose', () => {
  it('lets the last choice win over one still asking for models', async () => {
    rest.providerState.mockResolvedValue({ providers: PROVIDERS });
    let listed: (value: api.IAiModel[]) => void = () => undefined;
    rest.providerModels.mockReturnValue(
      new Promise(resolve => {
        listed = resolve;
      })
    );
    rest.updateSession.mockResolvedValue({} as api.IAiSession);
    const model = panel();
    await model.loadProviders();
    const first = model.choose('ollama', ''); // asks Ollama for its models
    const second = model.choose('ollama', 'picked');
    await second;
    listed([{ id: 'llama3.2' } as api.IAiModel]);
    await first;
    expect(model.currentModel()).toBe('picked');
  });
});

describe('choose a provider alone', () => {
  it('waits for a model list already being asked for', async () => {
    rest.providerState.mockResolvedValue({ providers: PROVIDERS });
    let listed: (value: api.IAiModel[]) => void = () => undefined;
    rest.providerModels.mockReturnValue(
      new Promise(resolve => {
        listed = resolve;
      })
    );
    const model = panel();
    await model.loadProviders();
    const asking = model.loadModels('ollama', true); // the settings view asks
    const chosen = model.choose('ollama', '');
    listed([{ id: 'llama3.2' } as api.IAiModel]);
    await Promise.all([asking, chosen]);
    expect(model.currentModel()).toBe('llama3.2');
    expect(rest.providerModels).toHaveBeenCalledTimes(1);
  });
});

describe('saving the choice', () => {
  it("ignores the settings registry's half-saved echo of a choice", async () => {
    rest.providerState.mockResolvedValue({ providers: PROVIDERS });
    rest.providerModels.mockResolvedValue([]);
    const model = new AiPanelModel({
      settings: {} as ServerConnection.ISettings,
      saveDefaults: () => true
    });
    await model.choose('ollama', 'llama3.2');
    const base = { snippets: {}, expandReasoning: false };
    // defaultProvider saved, defaultModel not yet: the old model with the new provider.
    model.setConfig({ ...base, provider: 'ollama', model: '' });
    expect(model.currentModel()).toBe('llama3.2');
    model.setConfig({ ...base, provider: 'ollama', model: 'llama3.2' });
    // Saved: later changes (the settings editor) apply again.
    model.setConfig({ ...base, provider: 'openai', model: 'gpt-5' });
    expect(model.currentProvider()).toBe('openai');
    expect(model.currentModel()).toBe('gpt-5');
  });
});
