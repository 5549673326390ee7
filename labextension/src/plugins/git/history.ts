/**
 * The History main-area tabs: one per repository, reloaded when HEAD moves,
 * restored after a reload.
 */
import type { ILayoutRestorer, JupyterFrontEnd } from '@jupyterlab/application';
import {
  Dialog,
  MainAreaWidget,
  showDialog,
  WidgetTracker
} from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import type { TranslationBundle } from '@jupyterlab/translation';

import {
  commitIcon,
  HistoryModel,
  HistoryView,
  type GitModel
} from '../../git';
import { CommandIDs } from './ids';
import type { IGitSettings } from './settings';

const HISTORY_NAMESPACE = 'terax-git-history';

type HistoryTab = MainAreaWidget<HistoryView>;

/**
 * The History tabs.
 */
export interface IHistoryTabs {
  readonly tracker: WidgetTracker<HistoryTab>;
  /**
   * Show the history of a repository (the panel's when absent); null when
   * there is no repository.
   */
  open(path?: string): Promise<HistoryTab | null>;
}

export function historyTabs(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  model: GitModel,
  settings: IGitSettings
): IHistoryTabs {
  const { shell } = app;
  const serverSettings = app.serviceManager.serverSettings;
  const tracker = new WidgetTracker<HistoryTab>({
    namespace: HISTORY_NAMESPACE
  });

  const open = async (path?: string): Promise<HistoryTab | null> => {
    let root = path;
    if (!root) {
      if (!model.repository) {
        await model.refresh(true);
      }
      root = model.repository?.root;
    }
    if (!root) {
      await showDialog({
        title: trans.__('No repository'),
        body: trans.__(
          'Open a folder of a git repository in the file browser first.'
        ),
        buttons: [Dialog.okButton()]
      });
      return null;
    }
    const existing = tracker.find(w => w.content.model.root === root);
    if (existing) {
      shell.activateById(existing.id);
      void existing.content.model.reload();
      existing.content.focusList();
      return existing;
    }
    const historyModel = new HistoryModel({
      root,
      settings: serverSettings,
      pageSize: settings.historyPageSize
    });
    const content = new HistoryView({ model: historyModel, trans });
    const widget = new MainAreaWidget({ content });
    widget.id = `terax-git-history-${Math.random().toString(36).slice(2, 10)}`;
    widget.title.label = trans.__('History: %1', PathExt.basename(root));
    widget.title.caption = trans.__('Git history of %1', root);
    widget.title.icon = commitIcon;
    widget.title.closable = true;
    widget.disposed.connect(() => historyModel.dispose());
    const reload = (): void => void historyModel.reload();
    model.headChanged.connect(reload);
    widget.disposed.connect(() => model.headChanged.disconnect(reload));
    await tracker.add(widget);
    shell.add(widget, 'main', { type: 'Git History' });
    shell.activateById(widget.id);
    await historyModel.reload();
    content.focusList();
    return widget;
  };

  return { tracker, open };
}

/**
 * Reopen the History tabs of the last visit.
 */
export function restoreHistory(
  restorer: ILayoutRestorer | null,
  tracker: WidgetTracker<HistoryTab>
): void {
  restorer
    ?.restore(tracker, {
      command: CommandIDs.history,
      args: widget => ({ path: widget.content.model.root }),
      name: widget => widget.content.model.root
    })
    .catch(reason => {
      console.error('Could not restore the Git history.', reason);
    });
}
