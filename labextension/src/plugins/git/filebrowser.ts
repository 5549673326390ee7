/**
 * The Git panel follows the file browser's folder (the usual way to choose
 * a repository), and reads the status again when the page comes back.
 */
import type { ILabShell, JupyterFrontEnd } from '@jupyterlab/application';
import type { ISignal } from '@lumino/signaling';

import type { GitModel, GitPanel } from '../../git';

/**
 * The file browser as far as this plugin needs it (not a dependency: the
 * panel follows it when it is there).
 */
interface IFileBrowserLike {
  model?: {
    path?: unknown;
    pathChanged?: ISignal<unknown, unknown>;
  };
}

/**
 * Follow the folder of the file browser; the server root until it is there.
 */
export function followFileBrowser(
  app: JupyterFrontEnd,
  labShell: ILabShell | null,
  model: GitModel
): void {
  void app.restored.then(() => {
    let browser: IFileBrowserLike | null = null;
    if (labShell) {
      for (const widget of labShell.widgets('left')) {
        if (widget.id === 'filebrowser') {
          browser = widget as unknown as IFileBrowserLike;
          break;
        }
      }
    }
    const browserModel = browser?.model;
    const current = (): string =>
      typeof browserModel?.path === 'string' ? browserModel.path : '';
    model.setPath(current());
    browserModel?.pathChanged?.connect(() => model.setPath(current()));
  });
}

/**
 * Changes inside .git (a commit from a terminal) raise no file events: read
 * the status again when the page comes back into view.
 */
export function refreshWhenVisible(model: GitModel, panel: GitPanel): void {
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && panel.isVisible) {
      void model.refresh();
    }
  });
}
