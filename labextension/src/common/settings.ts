/**
 * Loading a plugin's settings from Lab's registry: once, then on every change.
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

// The one global this module uses; src/common is compiled without the DOM lib,
// which is where TypeScript declares it.
declare const console: { error(...data: unknown[]): void };

/**
 * Load the settings of `pluginId` and call `apply` with them, then again on
 * every change. Without a registry nothing happens; a failed load is logged.
 */
export function loadPluginSettings(
  registry: ISettingRegistry | null,
  pluginId: string,
  apply: (settings: ISettingRegistry.ISettings) => void
): void {
  if (!registry) {
    return;
  }
  void registry
    .load(pluginId)
    .then(loaded => {
      const update = (): void => apply(loaded);
      update();
      loaded.changed.connect(update);
    })
    .catch(reason => {
      console.error(`Could not load the settings of ${pluginId}.`, reason);
    });
}
