import { describe, expect, it } from 'vitest';

import {
  allowedModels,
  allowedProviders,
  allows,
  type IPolicy,
  isReadOnly,
  lockedAiSettings,
  offReason,
  policyRefusal
} from './policy';

function policy(overrides: Partial<IPolicy> = {}): IPolicy {
  return {
    sources: ['/etc/jupyter/terax_policy.json'],
    error: null,
    read_only: { value: false, locked: false },
    features: {
      terminals: { enabled: false, locked: true },
      agent: { enabled: true, locked: false },
      git_push: { enabled: false, locked: true }
    },
    ai: {
      providers: ['stub'],
      models: { stub: ['stub-model'] },
      default_provider: 'stub',
      default_model: 'stub-model',
      approvals: 'always',
      admin_rules: []
    },
    limits: { terminals: 2 },
    audit_log: null,
    locked: [
      'ai.approvals',
      'ai.default_model',
      'ai.default_provider',
      'ai.models',
      'ai.providers',
      'features.git_push',
      'features.terminals',
      'limits.terminals'
    ],
    ...overrides
  };
}

describe('the policy', () => {
  it('says which features are off and why', () => {
    const p = policy();
    expect(allows(p, 'terminals')).toBe(false);
    expect(allows(p, 'agent')).toBe(true);
    expect(allows(p, 'preview')).toBe(true); // not named: on
    expect(offReason(p, 'git_push')).toBe('Turned off by your administrator.');
    expect(offReason(p, 'agent')).toBeNull();
  });

  it('allows everything when it is not known (an older server)', () => {
    expect(allows(null, 'terminals')).toBe(true);
    expect(offReason(null, 'agent')).toBeNull();
    expect(isReadOnly(null)).toBe(false);
    expect(allowedProviders(null, [{ id: 'a' }, { id: 'b' }])).toHaveLength(2);
    expect(lockedAiSettings(null)).toEqual([]);
  });

  it('fails closed with a policy that could not be read', () => {
    const p = policy({ error: 'bad file', features: {} });
    expect(allows(p, 'preview')).toBe(false);
    expect(isReadOnly(p)).toBe(true);
    expect(offReason(p, 'preview')).toContain('could not be read');
  });

  it('names a read-only server as why terminals are off', () => {
    const p = policy({
      read_only: { value: true, locked: true },
      features: { terminals: { enabled: false, locked: true } }
    });
    expect(offReason(p, 'terminals')).toContain('read-only');
  });

  it('offers only the allowed providers and models', () => {
    const p = policy();
    const providers = [{ id: 'stub' }, { id: 'keyed' }, { id: 'openai' }];
    expect(allowedProviders(p, providers).map(x => x.id)).toEqual(['stub']);
    const models = [{ id: 'stub-model' }, { id: 'other' }];
    expect(allowedModels(p, 'stub', models).map(x => x.id)).toEqual([
      'stub-model'
    ]);
    // A provider without a model list keeps all of its models.
    expect(allowedModels(p, 'keyed', models)).toHaveLength(2);
  });

  it('lists the locked AI settings with their values', () => {
    const rows = lockedAiSettings(policy());
    expect(rows.map(r => [r.name, r.value])).toEqual([
      ['ai.providers', 'stub'],
      ['ai.models', 'stub: stub-model'],
      ['ai.default_provider', 'stub'],
      ['ai.default_model', 'stub-model'],
      ['ai.approvals', 'always ask'],
      ['limits.terminals', '2']
    ]);
    // Only what the administrator set.
    expect(lockedAiSettings(policy({ locked: ['limits.terminals'] }))).toEqual([
      { name: 'limits.terminals', label: 'Terminals at once', value: '2' }
    ]);
  });

  it('recognizes a refusal by the policy', () => {
    expect(
      policyRefusal({
        reason: 'disabled_by_policy',
        message: 'Terminals are turned off by the administrator.'
      })
    ).toBe('Terminals are turned off by the administrator.');
    expect(policyRefusal({ reason: 'forbidden', message: 'no' })).toBeNull();
    expect(policyRefusal(null)).toBeNull();
  });
});
