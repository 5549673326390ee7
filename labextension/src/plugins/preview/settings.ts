/**
 * The web preview settings: offer the dev servers terminals start, open
 * their localhost links in a preview.
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import { loadPluginSettings } from '../../common/settings';
import { PLUGIN_ID } from './ids';

/**
 * The settings, as they are now.
 */
export interface IPreviewSettings {
  offerDetectedServers: boolean;
  openLocalLinksInPreview: boolean;
}

/**
 * The settings before the registry loaded (the schema's defaults).
 */
export const DEFAULT_CONFIG: IPreviewSettings = {
  offerDetectedServers: true,
  openLocalLinksInPreview: true
};

/**
 * Load the settings into `config`, and again on every change.
 */
export function loadSettings(
  registry: ISettingRegistry | null,
  config: IPreviewSettings
): void {
  loadPluginSettings(registry, PLUGIN_ID, loaded => {
    for (const key of Object.keys(DEFAULT_CONFIG)) {
      const value = loaded.get(key).composite;
      if (typeof value === 'boolean') {
        Reflect.set(config, key, value);
      }
    }
  });
}
