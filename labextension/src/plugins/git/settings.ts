/**
 * The source-control settings (the History's page size).
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import { loadPluginSettings } from '../../common/settings';
import { PLUGIN_ID } from './ids';

/**
 * The settings, as they are now.
 */
export interface IGitSettings {
  historyPageSize: number;
}

/**
 * Load the settings into `settings`, and again on every change.
 */
export function loadSettings(
  registry: ISettingRegistry | null,
  settings: IGitSettings
): void {
  loadPluginSettings(registry, PLUGIN_ID, loaded => {
    settings.historyPageSize = loaded.get('historyPageSize')
      .composite as number;
  });
}
