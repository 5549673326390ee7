/**
 * The Git side panel: its model (the repository of the followed folder),
 * what it asks of Lab (open a file, show a diff, the last commit message),
 * and its place in the left sidebar.
 */
import type { ILayoutRestorer, JupyterFrontEnd } from '@jupyterlab/application';
import { PathExt } from '@jupyterlab/coreutils';
import type { ITranslator, TranslationBundle } from '@jupyterlab/translation';

import { getCommit } from '../../api/git';
import { FileWatcher, GitModel, GitPanel, gitIcon } from '../../git';
import type { IGitRestrictions } from './commands';
import { diffTab } from './diff';
import {
  confirm,
  confirmDiscard,
  confirmTrust,
  operationTitles
} from './dialogs';
import { CommandIDs } from './ids';

/**
 * The panel's model, watching the files of its repository.
 */
export function createModel(
  app: JupyterFrontEnd,
  trans: TranslationBundle
): GitModel {
  const settings = app.serviceManager.serverSettings;
  return new GitModel({
    settings,
    watcher: new FileWatcher(settings),
    confirmDiscard: confirmation => confirmDiscard(trans, confirmation),
    confirmTrust: (root, trust) => confirmTrust(trans, root, trust),
    titles: operationTitles(trans)
  });
}

/**
 * The panel.
 */
export function createPanel(
  app: JupyterFrontEnd,
  translator: ITranslator,
  trans: TranslationBundle,
  model: GitModel,
  restrictions: IGitRestrictions
): GitPanel {
  const { commands } = app;
  const settings = app.serviceManager.serverSettings;
  const relativeToServer = (repositoryPath: string): string => {
    const relativeRoot = model.repository?.relative_root ?? '';
    return relativeRoot
      ? PathExt.join(relativeRoot, repositoryPath)
      : repositoryPath;
  };
  const openFile = (path: string): void =>
    void commands
      .execute('docmanager:open', { path: relativeToServer(path) })
      .catch(error => console.warn('Could not open', path, error));

  return new GitPanel({
    model,
    trans,
    translator,
    icon: gitIcon,
    pushOff: restrictions.pushOff,
    readOnly: restrictions.readOnly,
    host: {
      openFile,
      showDiff: diffTab(app, trans, model, openFile),
      confirm,
      openHistory: () => void commands.execute(CommandIDs.history),
      lastMessage: async () => {
        const oid = model.status?.branch.oid;
        const root = model.repository?.root;
        if (!oid || !root) {
          return '';
        }
        return (await getCommit(root, oid, { settings })).message;
      }
    }
  });
}

/**
 * Add the panel to the left sidebar, where the restorer finds it after a
 * reload.
 */
export function restoreLayout(
  app: JupyterFrontEnd,
  restorer: ILayoutRestorer | null,
  panel: GitPanel
): void {
  app.shell.add(panel, 'left', { rank: 200, type: 'Git' });
  restorer?.add(panel, panel.id);
}
