/**
 * The terminal settings (font, scrollback, hibernation, shell, renderer
 * pool) and Lab's theme, applied to every pane as they change.
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

import type {
  ITerminalConfig,
  RendererManager,
  TerminalPane
} from '../../terminal';
import { loadPluginSettings } from '../../common/settings';
import { PLUGIN_ID } from './ids';

/**
 * The settings the panes read.
 */
export type TerminalSettings = ITerminalConfig & {
  shell: string;
  rendererPoolSize: number;
};

/**
 * The settings before the registry loaded (the schema's defaults).
 */
export const DEFAULT_CONFIG: TerminalSettings = {
  fontFamily: '',
  fontSize: 13,
  lineHeight: 1.25,
  scrollback: 10000,
  cursorBlink: true,
  pasteWithCtrlV: true,
  hibernateAfterMinutes: 15,
  shell: '',
  rendererPoolSize: 4
};

/**
 * Load the settings into `config`, and again on every change.
 */
export function loadSettings(
  registry: ISettingRegistry | null,
  config: TerminalSettings,
  renderers: RendererManager,
  allPanes: () => TerminalPane[]
): void {
  loadPluginSettings(registry, PLUGIN_ID, settings => {
    for (const key of Object.keys(DEFAULT_CONFIG)) {
      const value = settings.get(key).composite;
      if (value !== undefined && value !== null) {
        Reflect.set(config, key, value);
      }
    }
    renderers.setCapacity(config.rendererPoolSize);
    allPanes().forEach(p => p.applyConfig());
  });
}

/**
 * Follow Lab's theme: it is applied by switching these body attributes.
 */
export function followTheme(allPanes: () => TerminalPane[]): void {
  const applyTheme = (): void => {
    requestAnimationFrame(() => allPanes().forEach(p => p.applyTheme()));
  };
  new MutationObserver(applyTheme).observe(document.body, {
    attributes: true,
    attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light']
  });
}
