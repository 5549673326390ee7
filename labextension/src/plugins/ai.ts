/**
 * Plugin of the AI side panel: the panel in the right sidebar, its commands
 * (open, new session, stop, attach a file / an editor selection / a
 * terminal selection) and "Ask Terax" for terminal blocks.
 */
import {
  ILabShell,
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { AiPanel, AiPanelModel, ITeraxAi } from '../ai';
import { completionState } from '../ai/completion';
import { ITeraxPolicy } from '../policy/tokens';
import { ITeraxTerminals } from '../terminal/tokens';
import {
  addCommands,
  addToPalette,
  takeTerminalQuestions
} from './ai/commands';
import { createHost } from './ai/host';
import { PLUGIN_ID } from './ai/ids';
import { panelActions, restoreLayout } from './ai/panel';
import {
  loadSettings,
  saveDefaults,
  type ISettingsHolder
} from './ai/settings';
import { TRANSLATION_DOMAIN } from './constants';

export { CommandIDs } from './ai/ids';

/**
 * The AI panel plugin.
 */
export const aiPlugin: JupyterFrontEndPlugin<ITeraxAi> = {
  id: PLUGIN_ID,
  description:
    'The Terax AI side panel: sessions, streamed answers, approvals, plans and provider settings.',
  autoStart: true,
  optional: [
    ICommandPalette,
    ILabShell,
    ILayoutRestorer,
    ISettingRegistry,
    ITranslator,
    IRenderMimeRegistry,
    ITeraxTerminals,
    ITeraxPolicy
  ],
  provides: ITeraxAi,
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    labShell: ILabShell | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    rendermime: IRenderMimeRegistry | null,
    terminals: ITeraxTerminals | null,
    policy: ITeraxPolicy | null
  ): ITeraxAi => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const settings: ISettingsHolder = { current: null };
    const model = new AiPanelModel({
      settings: app.serviceManager.serverSettings,
      policy: policy?.policy ?? null,
      saveDefaults: (provider, chosen) =>
        saveDefaults(settings, provider, chosen)
    });
    // Inline completion follows the chat's provider and model.
    model.changed.connect(() =>
      completionState.setChat(model.currentProvider(), model.currentModel())
    );

    const host = createHost(app, trans, rendermime, terminals, policy);
    const panel = new AiPanel({ model, host });
    restoreLayout(app, restorer, panel, model);

    const actions = panelActions(app, labShell, panel, model);
    addCommands(app, trans, actions, labShell, terminals);
    takeTerminalQuestions(trans, actions, terminals);
    addToPalette(palette, trans);
    loadSettings(settingRegistry, model, settings);

    const { open, attach, newSession } = actions;
    return { open, attach, newSession };
  }
};
