/**
 * Views of the conversation's state: what an error banner offers, costs and
 * token counts, what a tool card is about.
 */

import type { IChatApproval, IToolCard } from './types';

/**
 * What an error banner offers.
 */
export type ErrorAction = 'settings' | 'test' | 'retry' | 'new-session' | null;

/**
 * The action that fixes an error of this reason.
 */
export function errorAction(reason: string): ErrorAction {
  switch (reason) {
    case 'bad_key':
    case 'missing_key':
    case 'key_not_for_url': // a server key is not sent to this address: set your own
    case 'model_not_found':
    case 'no_model':
      return 'settings';
    case 'provider_unreachable':
      return 'test';
    case 'rate_limited':
    case 'provider_timeout':
    case 'stream_cut':
      return 'retry';
    case 'context_too_long':
      return 'new-session';
    default:
      return null;
  }
}

/**
 * The name of the key an error asks to set (`Set OPENAI_API_KEY ...`).
 */
export function keyNameIn(message: string): string | null {
  const match = /\b([A-Z][A-Z0-9_]*_(?:API_)?KEY)\b/.exec(message);
  return match ? match[1] : null;
}

/**
 * Token counts, short: 950, 12.3k, 1.2M.
 */
/**
 * A cost in US dollars, with the precision a turn's cost needs.
 */
export function formatCost(dollars: number): string {
  if (dollars === 0) {
    return '$0';
  }
  if (dollars < 0.01) {
    return `$${dollars.toFixed(4)}`;
  }
  return `$${dollars.toFixed(dollars < 1 ? 3 : 2)}`;
}

export function formatTokens(count: number): string {
  if (count < 1000) {
    return String(count);
  }
  if (count < 1_000_000) {
    const k = count / 1000;
    return `${k < 10 ? k.toFixed(1) : Math.round(k)}k`;
  }
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/**
 * A one-line summary of a tool call's arguments (its path, command or
 * pattern), for the card's header.
 */
export function toolSubject(
  card: Pick<IToolCard, 'name' | 'arguments'>
): string {
  const args = card.arguments ?? {};
  const keys = [
    'command',
    'path',
    'pattern',
    'agent',
    'id',
    'query',
    'url',
    'name',
    'ref',
    'text_contains',
    'title_contains',
    'key'
  ];
  for (const key of keys) {
    const value = args[key];
    if (typeof value === 'string' && value) {
      const line = value.split('\n')[0];
      return line.length > 80 ? `${line.slice(0, 77)}…` : line;
    }
  }
  return '';
}

/**
 * Whether an approval shows a diff review (edits and writes) rather than a
 * plain Approve/Deny.
 */
export function isEditApproval(approval: IChatApproval): boolean {
  const kind = approval.proposal.kind;
  return kind === 'edit' || kind === 'write' || kind === 'notebook';
}
