/**
 * The diff of the file clicked in the Git panel: one main-area tab, reused
 * (the sidebar is too narrow for code). Closing it closes the diff.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import { MainAreaWidget } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import type { TranslationBundle } from '@jupyterlab/translation';

import { GitDiffView, gitIcon, type GitModel } from '../../git';

/**
 * A function that shows the diff tab (created on first use, reused after).
 */
export function diffTab(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  model: GitModel,
  openFile: (path: string) => void
): () => void {
  let tab: MainAreaWidget<GitDiffView> | null = null;
  const syncTitle = (): void => {
    if (!tab) {
      return;
    }
    const path = model.selected?.path;
    tab.title.label = path
      ? trans.__('Diff: %1', PathExt.basename(path))
      : trans.__('Diff');
    tab.title.caption = path ? trans.__('Changes of %1', path) : '';
  };
  model.changed.connect(syncTitle);
  return (): void => {
    if (!tab || tab.isDisposed) {
      const content = new GitDiffView({
        model,
        trans,
        host: { openFile }
      });
      const widget = new MainAreaWidget({ content });
      widget.id = 'terax-git-diff';
      widget.addClass('jp-TeraxGitDiff-tab');
      widget.title.icon = gitIcon;
      widget.title.closable = true;
      widget.toolbar.hide();
      widget.disposed.connect(() => {
        tab = null;
        if (model.selected) {
          model.select(null);
        }
      });
      tab = widget;
      syncTitle();
    }
    if (!tab.isAttached) {
      app.shell.add(tab, 'main', { type: 'Git Diff' });
    }
    app.shell.activateById(tab.id);
  };
}
