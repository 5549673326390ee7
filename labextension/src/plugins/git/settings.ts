/**
 * The source-control settings (the History's page size).
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

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
  if (!registry) {
    return;
  }
  void registry
    .load(PLUGIN_ID)
    .then(loaded => {
      const apply = (): void => {
        settings.historyPageSize = loaded.get('historyPageSize')
          .composite as number;
      };
      apply();
      loaded.changed.connect(apply);
    })
    .catch(reason => {
      console.error(`Could not load the settings of ${PLUGIN_ID}.`, reason);
    });
}
