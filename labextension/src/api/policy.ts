/**
 * REST client of the administrator's policy (`/terax/api/policy`).
 */
import type { ServerConnection } from '@jupyterlab/services';

import type { IPolicy } from '../common/policy';
import { requestAPI } from './request';

export type { IPolicy } from '../common/policy';

/**
 * The policy: features on or off, locked settings, allowed providers.
 */
export function getPolicy(
  settings?: ServerConnection.ISettings
): Promise<IPolicy> {
  return requestAPI<IPolicy>('policy', { settings });
}
