/**
 * The AI panel's settings: defaults for new sessions, snippets, reasoning
 * shown expanded; the panel saves the default provider and model back.
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import type { AiPanelModel, IAiPanelSettings } from '../../ai';
import { loadPluginSettings } from '../../common/settings';
import { PLUGIN_ID } from './ids';

/**
 * The loaded settings, once they are (the panel model saves into them).
 */
export interface ISettingsHolder {
  current: ISettingRegistry.ISettings | null;
}

/**
 * Save a default provider and model; false before the settings loaded.
 */
export function saveDefaults(
  holder: ISettingsHolder,
  provider: string,
  chosen: string
): boolean {
  const settings = holder.current;
  if (!settings) {
    return false;
  }
  void settings
    .set('defaultProvider', provider)
    .then(() => settings.set('defaultModel', chosen));
  return true;
}

/**
 * Load the settings into the model, and again on every change.
 */
export function loadSettings(
  registry: ISettingRegistry | null,
  model: AiPanelModel,
  holder: ISettingsHolder
): void {
  loadPluginSettings(registry, PLUGIN_ID, loaded => {
    holder.current = loaded;
    const config: IAiPanelSettings = {
      provider: loaded.get('defaultProvider').composite as string,
      model: loaded.get('defaultModel').composite as string,
      snippets: (loaded.get('snippets').composite ?? {}) as Record<
        string,
        string
      >,
      expandReasoning: loaded.get('expandReasoning').composite as boolean
    };
    model.setConfig(config);
  });
}
