/**
 * The policy the plugins share: the server's answer and the questions asked of it.
 */
import {
  allows,
  type IPolicy,
  isLocked,
  isReadOnly,
  offReason,
  type PolicyFeature
} from '../common/policy';
import type { ITeraxPolicy } from './tokens';

/**
 * The loaded policy (or none: everything shown, the server decides).
 */
export class PolicyModel implements ITeraxPolicy {
  constructor(readonly policy: IPolicy | null) {}

  allows(feature: PolicyFeature): boolean {
    return allows(this.policy, feature);
  }

  offReason(feature: PolicyFeature): string | null {
    return offReason(this.policy, feature);
  }

  get readOnly(): boolean {
    return isReadOnly(this.policy);
  }

  isLocked(name: string): boolean {
    return isLocked(this.policy, name);
  }
}
