/**
 * Plugin of source control: the Git side panel (following the file
 * browser's folder), the History main-area panel, and their commands.
 */
import {
  ILabShell,
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { ITeraxPolicy } from '../policy/tokens';
import { TRANSLATION_DOMAIN } from './constants';
import {
  addCommands,
  addToPalette,
  type IGitRestrictions
} from './git/commands';
import { followFileBrowser, refreshWhenVisible } from './git/filebrowser';
import { historyTabs, restoreHistory } from './git/history';
import { PLUGIN_ID } from './git/ids';
import { createModel, createPanel, restoreLayout } from './git/panel';
import { loadSettings, type IGitSettings } from './git/settings';

export { CommandIDs } from './git/ids';

/**
 * The source-control plugin.
 */
export const gitPlugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Git panel with hunk and line staging, and the commit history.',
  autoStart: true,
  optional: [
    ICommandPalette,
    ILabShell,
    ILayoutRestorer,
    ISettingRegistry,
    ITranslator,
    ITeraxPolicy
  ],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    labShell: ILabShell | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    policy: ITeraxPolicy | null
  ): void => {
    const resolvedTranslator = translator ?? nullTranslator;
    const trans = resolvedTranslator.load(TRANSLATION_DOMAIN);
    const pushOffReason = policy?.offReason('git_push') ?? null;
    const restrictions: IGitRestrictions = {
      pushOff: pushOffReason ? trans.__(pushOffReason) : null,
      readOnly: policy?.readOnly
        ? trans.__('Set by your administrator: nothing can be changed here.')
        : null
    };
    const settings: IGitSettings = { historyPageSize: 300 };

    const model = createModel(app, trans);
    const panel = createPanel(
      app,
      resolvedTranslator,
      trans,
      model,
      restrictions
    );
    restoreLayout(app, restorer, panel);
    followFileBrowser(app, labShell, model);
    refreshWhenVisible(model, panel);

    const history = historyTabs(app, trans, model, settings);
    restoreHistory(restorer, history.tracker);
    addCommands(app, trans, model, panel, history, restrictions);
    addToPalette(palette, trans);
    loadSettings(settingRegistry, settings);
  }
};
