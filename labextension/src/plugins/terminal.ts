/**
 * Plugin of the Terax block terminal: main-area tabs of split panes, the
 * commands, the launcher card, restore after a reload, settings and theme.
 */
import {
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ILauncher } from '@jupyterlab/launcher';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { ITeraxTerminals, RendererManager } from '../terminal';
import { ITeraxPolicy } from '../policy/tokens';
import { TRANSLATION_DOMAIN } from './constants';
import { terminalActions, wirePanes } from './terminal/actions';
import { addAskCommand, addTabCommands, turnedOff } from './terminal/commands';
import { PLUGIN_ID } from './terminal/ids';
import { addLauncher, addToPalette } from './terminal/launcher';
import { addPaneCommands } from './terminal/panecommands';
import { DEFAULT_CONFIG, followTheme, loadSettings } from './terminal/settings';
import { createTabs, restoreLayout } from './terminal/tabs';

export { CommandIDs } from './terminal/ids';

/**
 * The Terax terminal plugin.
 */
export const terminalPlugin: JupyterFrontEndPlugin<ITeraxTerminals> = {
  id: PLUGIN_ID,
  description:
    'Block terminals in the main area: split panes, command blocks, an input line.',
  autoStart: true,
  optional: [
    ICommandPalette,
    ILauncher,
    ILayoutRestorer,
    ISettingRegistry,
    ITranslator,
    ITeraxPolicy
  ],
  provides: ITeraxTerminals,
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    launcher: ILauncher | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    policy: ITeraxPolicy | null
  ): ITeraxTerminals => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const off = turnedOff(trans, policy?.offReason('terminals') ?? null);
    const config = { ...DEFAULT_CONFIG };
    const renderers = new RendererManager(config.rendererPoolSize);
    const tabs = createTabs(app, trans, config, renderers);
    restoreLayout(restorer, tabs.tracker);

    const actions = terminalActions(app, trans, tabs);
    wirePanes(tabs, actions);
    addTabCommands(app, trans, tabs, off);
    addPaneCommands(app, trans, actions);
    addAskCommand(app, trans, tabs, actions);
    addToPalette(palette, trans);
    addLauncher(launcher, trans, off.reason !== null);

    followTheme(tabs.allPanes);
    loadSettings(settingRegistry, config, renderers, tabs.allPanes);
    return tabs.service;
  }
};
