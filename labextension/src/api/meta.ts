/**
 * REST client of the server-facts area (`/terax/api/info`).
 */
import type { ServerConnection } from '@jupyterlab/services';

import { requestAPI } from './request';

/**
 * What the server extension says about itself.
 */
export interface IServerInfo {
  version: string;
  server_root: string;
  read_only: boolean;
  search_engine: string;
  grep_engine: string;
  limits: Record<string, number>;
}

/**
 * Version, server root, read-only mode, search engines and limits.
 */
export function getInfo(
  settings?: ServerConnection.ISettings
): Promise<IServerInfo> {
  return requestAPI<IServerInfo>('info', { settings });
}
