/**
 * The administrator's policy as the UI reads it (`GET /terax/api/policy`):
 * which features are on, which settings are locked, which providers and
 * models may be offered. DOM-free; the server enforces all of it anyway.
 */

/**
 * A feature switch of the policy.
 */
export type PolicyFeature =
  | 'terminals'
  | 'agent'
  | 'git_push'
  | 'preview'
  | 'browser'
  | 'mcp'
  | 'notebook_runs';

/**
 * The answer of `GET /terax/api/policy`.
 */
export interface IPolicy {
  /** The policy files it came from. */
  sources: string[];
  /** Why the policy could not be applied (then everything is off). */
  error: string | null;
  read_only: { value: boolean; locked: boolean };
  features: Record<string, { enabled: boolean; locked: boolean }>;
  ai: {
    /** The providers that may be used; null: any. */
    providers: string[] | null;
    /** Per provider, the models that may be used (absent: any). */
    models: Record<string, string[]>;
    default_provider: string | null;
    default_model: string | null;
    approvals: 'user' | 'admin_rules' | 'always';
    admin_rules: string[];
  };
  limits: Record<string, number>;
  audit_log: string | null;
  /** Dotted names of what the administrator set (`features.terminals`, `ai.providers`...). */
  locked: string[];
}

/**
 * The reason a server gives when the policy refuses a request.
 */
export const POLICY_REASON = 'disabled_by_policy';

/**
 * What the UI says next to a feature the administrator turned off.
 */
export const TURNED_OFF = 'Turned off by your administrator';

/**
 * What the UI says next to a setting the administrator set.
 */
export const SET_BY_ADMIN = 'Set by your administrator';

/**
 * Whether a feature is on; an unknown policy (an older server) allows all.
 */
export function allows(
  policy: IPolicy | null,
  feature: PolicyFeature
): boolean {
  if (!policy) {
    return true;
  }
  if (policy.error) {
    return false;
  }
  return policy.features[feature]?.enabled ?? true;
}

/**
 * Whether the server is read-only by policy.
 */
export function isReadOnly(policy: IPolicy | null): boolean {
  return !!policy && (policy.read_only.value || !!policy.error);
}

/**
 * Whether the administrator set a dotted setting (`ai.default_model`).
 */
export function isLocked(policy: IPolicy | null, name: string): boolean {
  return !!policy && policy.locked.includes(name);
}

/**
 * Why a feature is off, for a caption: the read-only server, a policy that
 * could not be read, or the administrator's switch; null when it is on.
 */
export function offReason(
  policy: IPolicy | null,
  feature: PolicyFeature
): string | null {
  if (allows(policy, feature)) {
    return null;
  }
  if (policy?.error) {
    return `${TURNED_OFF}: the policy could not be read.`;
  }
  if (feature === 'terminals' && isReadOnly(policy)) {
    return `${TURNED_OFF}: this server is read-only.`;
  }
  return `${TURNED_OFF}.`;
}

/**
 * The items whose id the policy allows as providers (all when unset).
 */
export function allowedProviders<T extends { id: string }>(
  policy: IPolicy | null,
  providers: readonly T[]
): T[] {
  const allowed = policy?.ai.providers;
  if (!allowed) {
    return [...providers];
  }
  return providers.filter(p => allowed.includes(p.id));
}

/**
 * The models of a provider the policy allows (all when unset for it).
 */
export function allowedModels<T extends { id: string }>(
  policy: IPolicy | null,
  provider: string,
  models: readonly T[]
): T[] {
  const allowed = policy?.ai.models[provider];
  if (!allowed) {
    return [...models];
  }
  return models.filter(m => allowed.includes(m.id));
}

/**
 * One line per administrator setting of the AI, for the settings view:
 * `[label, value, dotted name]`, only those the administrator set.
 */
export function lockedAiSettings(
  policy: IPolicy | null
): { name: string; label: string; value: string }[] {
  if (!policy) {
    return [];
  }
  const rows: { name: string; label: string; value: string }[] = [];
  const add = (name: string, label: string, value: string): void => {
    if (isLocked(policy, name)) {
      rows.push({ name, label, value });
    }
  };
  add(
    'ai.providers',
    'Allowed providers',
    (policy.ai.providers ?? []).join(', ')
  );
  add(
    'ai.models',
    'Allowed models',
    Object.entries(policy.ai.models)
      .map(([provider, models]) => `${provider}: ${models.join(', ')}`)
      .join('; ')
  );
  add(
    'ai.default_provider',
    'Default provider',
    policy.ai.default_provider ?? ''
  );
  add('ai.default_model', 'Default model', policy.ai.default_model ?? '');
  add('ai.approvals', 'Approvals', APPROVAL_LABELS[policy.ai.approvals]);
  for (const [limit, value] of Object.entries(policy.limits).sort()) {
    add(`limits.${limit}`, LIMIT_LABELS[limit] ?? limit, String(value));
  }
  return rows;
}

const APPROVAL_LABELS: Record<IPolicy['ai']['approvals'], string> = {
  user: 'you decide',
  admin_rules: 'administrator’s rules only',
  always: 'always ask'
};

const LIMIT_LABELS: Record<string, string> = {
  agent_steps_per_run: 'Agent steps per run',
  tokens_per_day: 'Model tokens per day',
  cost_per_day: 'Model cost per day (USD)',
  concurrent_runs: 'Agent runs at once',
  terminals: 'Terminals at once',
  background_processes: 'Background processes at once',
  browser_tabs: 'Browser tabs at once'
};

/**
 * The server's message when an error is a refusal by the policy, else null.
 */
export function policyRefusal(error: unknown): string | null {
  const reason = (error as { reason?: unknown } | null)?.reason;
  const message = (error as { message?: unknown } | null)?.message;
  if (reason === POLICY_REASON && typeof message === 'string' && message) {
    return message;
  }
  return null;
}
