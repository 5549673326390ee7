/**
 * What the AI panel asks of Lab: copy, insert and run code, open and search
 * files, open a review, confirm.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import {
  Clipboard,
  Dialog,
  Notification,
  showDialog
} from '@jupyterlab/apputils';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';

import { searchFiles } from '../../api/fs';
import { type INotebookCellInfo, notebookCells } from '../../common/ai/chat';
import type { IAiPanelHost } from '../../ai';
import type { ITeraxPolicy } from '../../policy/tokens';
import type { ITeraxTerminals } from '../../terminal/tokens';
import {
  cellLabel,
  currentEditor,
  insertText,
  openNotebookCells
} from './editors';
import { CommandIDs } from './ids';

/**
 * How long a new terminal tab may take to connect before a command run in
 * it gives up.
 */
const CONNECT_TIMEOUT_MS = 10000;

/**
 * The panel's host.
 */
export function createHost(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  rendermime: IRenderMimeRegistry | null,
  terminals: ITeraxTerminals | null,
  policy: ITeraxPolicy | null
): IAiPanelHost {
  const { commands, shell } = app;
  // Off by policy: code blocks offer no "run in terminal" that can only fail.
  const run =
    terminals && (policy?.allows('terminals') ?? true)
      ? (text: string): void =>
          void runInTerminal(app, trans, terminals, text).catch(console.error)
      : undefined;

  const openFile = (path: string): void =>
    void commands
      .execute('docmanager:open', { path })
      .catch(error => console.warn('Could not open', path, error));

  return {
    trans,
    rendermime,
    code: {
      copy: text => {
        Clipboard.copyToSystem(text);
        Notification.info(trans.__('Copied.'), { autoClose: 1500 });
      },
      insert: text => {
        const target = currentEditor(shell.currentWidget);
        if (!target) {
          Notification.warning(
            trans.__('Open a file or notebook to insert the code into.'),
            { autoClose: 4000 }
          );
          return;
        }
        insertText(target.editor, text);
      },
      run,
      openPath: path => openFile(path)
    },
    canReview: () => commands.hasCommand(CommandIDs.review),
    review: approvalId =>
      void commands
        .execute(CommandIDs.review, { approvalId })
        .catch(error => console.error('Could not open the review.', error)),
    openFile: path => openFile(path),
    searchFiles: async (query, signal) =>
      (
        await searchFiles(query, {
          limit: 8,
          signal,
          settings: app.serviceManager.serverSettings
        })
      ).results,
    notebookCells: path => readNotebookCells(app, path),
    cellLabel: cellLabel(trans),
    confirm: async (title, body, accept) => {
      const result = await showDialog({
        title,
        body,
        buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: accept })],
        defaultButton: 0
      });
      return result.button.accept;
    },
    editSnippets: () =>
      void commands.execute('settingeditor:open', { query: 'Terax: AI' })
  };
}

/**
 * A notebook's cells: from its open widget when it is open (unsaved edits
 * win), else as saved on the server; null when there is no such notebook.
 */
async function readNotebookCells(
  app: JupyterFrontEnd,
  path: string
): Promise<INotebookCellInfo[] | null> {
  const wanted = path.replace(/^\/+/, '');
  for (const widget of app.shell.widgets('main')) {
    const context = (widget as unknown as { context?: { path?: unknown } })
      .context;
    if (context?.path === wanted) {
      const cells = openNotebookCells(widget);
      if (cells) {
        return cells;
      }
    }
  }
  try {
    const model = await app.serviceManager.contents.get(wanted, {
      content: true,
      type: 'notebook'
    });
    return model.type === 'notebook' ? notebookCells(model.content) : null;
  } catch {
    return null;
  }
}

/**
 * Run a command in the current terminal tab (a new one when there is none),
 * once its session is connected.
 */
async function runInTerminal(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  terminals: ITeraxTerminals,
  text: string
): Promise<void> {
  const panel = terminals.tracker.currentWidget ?? (await terminals.open());
  app.shell.activateById(panel.id);
  const pane = await panel.connectedPane(CONNECT_TIMEOUT_MS);
  if (pane) {
    pane.runCommand(text);
    return;
  }
  Notification.warning(trans.__('The terminal did not connect.'), {
    autoClose: 4000
  });
}
