/**
 * The live-notebooks WebSocket (`/terax/api/kernels/live`): this page says
 * which notebooks it has open and gets the agent's cell runs in them.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type { components } from './openapi';
import { API_NAMESPACE } from './request';

/**
 * A cell of an agent's run in a notebook this page has open.
 */
export type ILiveCellEvent = components['schemas']['LiveCellEvent'];

export function liveNotebooksURL(
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): string {
  const params: Record<string, string> = {};
  if (settings.appendToken && settings.token) {
    params.token = settings.token;
  }
  return (
    URLExt.join(settings.wsUrl, API_NAMESPACE, 'kernels', 'live') +
    URLExt.objectToQueryString(params)
  );
}
