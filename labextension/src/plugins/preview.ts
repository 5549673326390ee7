/**
 * Plugin of the web preview: `terax:open-preview` (a port, a localhost URL
 * or a web address), the preview tabs and their restore after a reload, the
 * offer to open a dev server a terminal started, and Ctrl/Cmd+click on a
 * localhost link in a terminal.
 */
import {
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { ITeraxPreview } from '../preview';
import { ITeraxPolicy } from '../policy/tokens';
import { ITeraxTerminals } from '../terminal/tokens';
import { TRANSLATION_DOMAIN } from './constants';
import { addCommands, addToPalette } from './preview/commands';
import { PLUGIN_ID } from './preview/ids';
import { DEFAULT_CONFIG, loadSettings } from './preview/settings';
import { previewTabs, restoreLayout } from './preview/tabs';
import { followTerminals } from './preview/terminals';

export { CommandIDs } from './preview/ids';

/**
 * The web preview plugin.
 */
export const previewPlugin: JupyterFrontEndPlugin<ITeraxPreview> = {
  id: PLUGIN_ID,
  description:
    'Preview dev servers started in Terax terminals (through the server proxy) and web pages.',
  autoStart: true,
  optional: [
    ITeraxTerminals,
    ILayoutRestorer,
    ICommandPalette,
    ISettingRegistry,
    ITranslator,
    ITeraxPolicy
  ],
  provides: ITeraxPreview,
  activate: (
    app: JupyterFrontEnd,
    terminals: ITeraxTerminals | null,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    policy: ITeraxPolicy | null
  ): ITeraxPreview => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const offReason = policy?.offReason('preview') ?? null;
    const turnedOff = offReason ? trans.__(offReason) : null;
    const config = { ...DEFAULT_CONFIG };

    const tabs = previewTabs(app, trans);
    restoreLayout(restorer, tabs.tracker);
    addCommands(app, trans, tabs, turnedOff);
    addToPalette(palette, trans);
    followTerminals(terminals, trans, tabs, config, turnedOff);
    loadSettings(settingRegistry, config);

    return {
      tracker: tabs.tracker,
      open: address => tabs.openAddress(address)
    };
  }
};
