/**
 * What the approval card of a browser workflow shows.
 */

import type { IChatApproval } from './types';

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
