/**
 * Public token of the administrator's policy, loaded once when Lab starts.
 */
import { Token } from '@lumino/coreutils';

import type { IPolicy, PolicyFeature } from '../common/policy';

/**
 * The policy as the plugins ask it.
 */
export interface ITeraxPolicy {
  /**
   * The server's answer; null when it could not be read (an older server):
   * then nothing is hidden and the server still refuses what is off.
   */
  readonly policy: IPolicy | null;
  /**
   * Whether a feature is on.
   */
  allows(feature: PolicyFeature): boolean;
  /**
   * Why a feature is off ("Turned off by your administrator."), or null.
   */
  offReason(feature: PolicyFeature): string | null;
  /**
   * Whether the server is read-only by policy.
   */
  readonly readOnly: boolean;
  /**
   * Whether the administrator set a dotted setting (`ai.default_model`).
   */
  isLocked(name: string): boolean;
}

/**
 * The policy token.
 */
export const ITeraxPolicy = new Token<ITeraxPolicy>(
  'terax-jupyter:ITeraxPolicy',
  'The administrator’s policy: which Terax features are on and which settings are locked.'
);
