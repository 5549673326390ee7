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
import {
  Clipboard,
  Dialog,
  ICommandPalette,
  Notification,
  showDialog
} from '@jupyterlab/apputils';
import type { CodeEditor } from '@jupyterlab/codeeditor';
import { PathExt } from '@jupyterlab/coreutils';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import type { Widget } from '@lumino/widgets';

import { searchFiles } from '../api/fs';
import {
  AiPanel,
  AiPanelModel,
  aiIcon,
  type IAiPanelHost,
  type IAiPanelSettings,
  ITeraxAi
} from '../ai';
import { completionState } from '../ai/completion';
import type { Attachment } from '../common/aichat';
import { ITeraxPolicy } from '../policy/tokens';
import { ITeraxTerminals } from '../terminal/tokens';
import { PALETTE_CATEGORY, TRANSLATION_DOMAIN } from './constants';

/**
 * Command IDs of the AI panel.
 */
export namespace CommandIDs {
  export const open = 'terax:ai-open';
  export const newSession = 'terax:ai-new-session';
  export const stop = 'terax:ai-stop';
  export const attachFile = 'terax:ai-attach-file';
  export const attachSelection = 'terax:ai-attach-selection';
  export const attachTerminalSelection = 'terax:ai-attach-terminal-selection';
  export const settings = 'terax:ai-settings';
  /** Provided by the review plugin. */
  export const review = 'terax:ai-review';
}

const PLUGIN_ID = 'terax-jupyter:ai';

/**
 * A document widget as far as this plugin needs it (file editors and
 * notebooks, without depending on their packages).
 */
interface IDocumentLike {
  context?: { path?: unknown };
  content?: {
    editor?: CodeEditor.IEditor;
    activeCell?: { editor?: CodeEditor.IEditor | null } | null;
  };
}

/**
 * The file browser as far as this plugin needs it.
 */
interface IFileBrowserLike {
  selectedItems?: () => Iterable<{ path: string; type: string }>;
}

/**
 * A terminal tab as far as this plugin needs it.
 */
interface ITerminalPanelLike {
  activePane?: {
    selection?: string;
    runCommand?: (text: string) => void;
    model?: { status?: string };
  } | null;
}

function currentEditor(
  widget: Widget | null
): { editor: CodeEditor.IEditor; path: string } | null {
  const doc = widget as unknown as IDocumentLike | null;
  const editor = doc?.content?.editor ?? doc?.content?.activeCell?.editor;
  if (!editor) {
    return null;
  }
  const path = typeof doc?.context?.path === 'string' ? doc.context.path : '';
  return { editor, path };
}

function selectedText(editor: CodeEditor.IEditor): string {
  const range = editor.getSelection();
  const start = editor.getOffsetAt(range.start);
  const end = editor.getOffsetAt(range.end);
  const source = editor.model.sharedModel.getSource();
  return source.slice(Math.min(start, end), Math.max(start, end));
}

const LANGUAGES: Record<string, string> = {
  '.py': 'python',
  '.ts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.json': 'json',
  '.md': 'markdown',
  '.sh': 'bash',
  '.rs': 'rust',
  '.go': 'go',
  '.java': 'java',
  '.c': 'c',
  '.cpp': 'cpp',
  '.css': 'css',
  '.html': 'html',
  '.yaml': 'yaml',
  '.yml': 'yaml',
  '.toml': 'toml',
  '.sql': 'sql',
  '.ipynb': 'python'
};

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
    const { commands, shell } = app;
    let settings: ISettingRegistry.ISettings | null = null;

    const model = new AiPanelModel({
      settings: app.serviceManager.serverSettings,
      policy: policy?.policy ?? null,
      saveDefaults: (provider, chosen) => {
        if (!settings) {
          return false;
        }
        void settings
          .set('defaultProvider', provider)
          .then(() => settings?.set('defaultModel', chosen));
        return true;
      }
    });

    // Inline completion follows the chat's provider and model.
    model.changed.connect(() =>
      completionState.setChat(model.currentProvider(), model.currentModel())
    );

    // Off by policy: code blocks offer no "run in terminal" that can only fail.
    const runInTerminal =
      terminals && (policy?.allows('terminals') ?? true)
        ? async (text: string): Promise<void> => {
            let widget = terminals.tracker.currentWidget;
            if (!widget) {
              widget = await terminals.open();
            }
            shell.activateById(widget.id);
            const panel = widget as unknown as ITerminalPanelLike;
            // A new tab connects first.
            for (let i = 0; i < 100; i++) {
              const pane = panel.activePane;
              if (pane?.runCommand && pane.model?.status === 'connected') {
                pane.runCommand(text);
                return;
              }
              await new Promise(resolve => setTimeout(resolve, 100));
            }
            Notification.warning(trans.__('The terminal did not connect.'), {
              autoClose: 4000
            });
          }
        : undefined;

    const openFile = (path: string): void =>
      void commands
        .execute('docmanager:open', { path })
        .catch(error => console.warn('Could not open', path, error));

    const host: IAiPanelHost = {
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
          const { editor } = target;
          if (editor.replaceSelection) {
            editor.replaceSelection(text);
          } else {
            const offset = editor.getOffsetAt(editor.getCursorPosition());
            editor.model.sharedModel.updateSource(offset, offset, text);
          }
          editor.focus();
        },
        run: runInTerminal
          ? text => void runInTerminal(text).catch(console.error)
          : undefined,
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
      confirm: async (title, body, accept) => {
        const result = await showDialog({
          title,
          body,
          buttons: [
            Dialog.cancelButton(),
            Dialog.warnButton({ label: accept })
          ],
          defaultButton: 0
        });
        return result.button.accept;
      },
      editSnippets: () =>
        void commands.execute('settingeditor:open', { query: 'Terax: AI' })
    };

    const panel = new AiPanel({ model, host });
    shell.add(panel, 'right', { rank: 150, type: 'Terax AI' });
    restorer?.add(panel, panel.id);
    if (panel.isVisible) {
      void model.start();
    }

    const isOpen = (): boolean =>
      labShell ? !labShell.rightCollapsed && panel.isVisible : panel.isVisible;

    const open = (): void => {
      shell.activateById(panel.id);
      void model.start();
      panel.focusComposer();
    };

    const attach = (attachment: Attachment): void => {
      model.attach(attachment);
      if (model.view !== 'chat') {
        model.setView('chat');
      }
      open();
    };

    commands.addCommand(CommandIDs.open, {
      label: trans.__('Terax AI'),
      caption: trans.__('Show or hide the Terax AI panel'),
      icon: args => (args.isPalette ? undefined : aiIcon),
      isToggled: () => isOpen(),
      execute: () => {
        if (isOpen() && panel.node.contains(document.activeElement)) {
          labShell?.collapseRight();
          return;
        }
        open();
      }
    });
    commands.addCommand(CommandIDs.newSession, {
      label: trans.__('New AI Session'),
      caption: trans.__('Start a new conversation with the agent'),
      execute: async () => {
        open();
        await model.newSession();
        panel.focusComposer();
      }
    });
    commands.addCommand(CommandIDs.stop, {
      label: trans.__('Stop the AI Run'),
      caption: trans.__('Cancel what the agent is doing'),
      isEnabled: () => model.active?.state.running ?? false,
      execute: () => model.active?.stop()
    });
    commands.addCommand(CommandIDs.settings, {
      label: trans.__('AI Provider Settings'),
      caption: trans.__('Choose the provider and model, set keys'),
      execute: () => {
        open();
        panel.showSettings(false);
      }
    });
    commands.addCommand(CommandIDs.attachFile, {
      label: trans.__('Ask Terax About This File'),
      caption: trans.__('Attach the file to the next AI prompt'),
      icon: args => (args.isPalette ? undefined : aiIcon),
      describedBy: {
        args: {
          type: 'object',
          properties: {
            path: {
              type: 'string',
              description: 'The file, relative to the server root.'
            }
          }
        }
      },
      execute: args => {
        const paths: string[] = [];
        if (typeof args.path === 'string' && args.path) {
          paths.push(args.path);
        } else {
          const browser = labShell
            ? (Array.from(labShell.widgets('left')).find(
                w => w.id === 'filebrowser'
              ) as unknown as IFileBrowserLike | undefined)
            : undefined;
          for (const item of browser?.selectedItems?.() ?? []) {
            if (item.type !== 'directory') {
              paths.push(item.path);
            }
          }
        }
        if (!paths.length) {
          const doc = currentEditor(shell.currentWidget);
          if (doc?.path) {
            paths.push(doc.path);
          }
        }
        paths.forEach(path => model.attach({ kind: 'file', path }));
        if (paths.length) {
          attach({ kind: 'file', path: paths[0] });
        }
      }
    });
    commands.addCommand(CommandIDs.attachSelection, {
      label: trans.__('Ask Terax About the Selection'),
      caption: trans.__('Attach the selected code to the next AI prompt'),
      isEnabled: () => currentEditor(shell.currentWidget) !== null,
      execute: () => {
        const target = currentEditor(shell.currentWidget);
        if (!target) {
          return;
        }
        let text = selectedText(target.editor);
        const whole = !text;
        if (whole) {
          text = target.editor.model.sharedModel.getSource();
        }
        const name = target.path ? PathExt.basename(target.path) : '';
        const range = target.editor.getSelection();
        const label = whole
          ? name || trans.__('editor')
          : `${name}:${Math.min(range.start.line, range.end.line) + 1}-${
              Math.max(range.start.line, range.end.line) + 1
            }`;
        attach({
          kind: 'selection',
          label,
          text: text.slice(0, 20000),
          path: target.path || undefined,
          language: LANGUAGES[PathExt.extname(target.path).toLowerCase()]
        });
      }
    });
    commands.addCommand(CommandIDs.attachTerminalSelection, {
      label: trans.__('Ask Terax About the Selection'),
      caption: trans.__(
        'Attach the selected terminal text to the next AI prompt'
      ),
      isVisible: () => terminals !== null,
      isEnabled: () => {
        const panel = terminals?.tracker.currentWidget as
          ITerminalPanelLike | null | undefined;
        return Boolean(panel?.activePane?.selection);
      },
      execute: () => {
        const panel = terminals?.tracker.currentWidget as
          ITerminalPanelLike | null | undefined;
        const text = panel?.activePane?.selection ?? '';
        if (text) {
          attach({
            kind: 'selection',
            label: trans.__('terminal selection'),
            text: text.slice(0, 20000),
            language: 'console'
          });
        }
      }
    });

    terminals?.setAskHandler(question => {
      attach({
        kind: 'block',
        label: question.command || trans.__('terminal block'),
        markdown: question.markdown
      });
    });

    for (const command of [
      CommandIDs.open,
      CommandIDs.newSession,
      CommandIDs.stop,
      CommandIDs.settings,
      CommandIDs.attachFile,
      CommandIDs.attachSelection
    ]) {
      palette?.addItem({ command, category: trans.__(PALETTE_CATEGORY) });
    }

    if (settingRegistry) {
      void settingRegistry
        .load(PLUGIN_ID)
        .then(loaded => {
          settings = loaded;
          const apply = (): void => {
            const config: IAiPanelSettings = {
              provider: loaded.get('defaultProvider').composite as string,
              model: loaded.get('defaultModel').composite as string,
              snippets: (loaded.get('snippets').composite ?? {}) as Record<
                string,
                string
              >,
              expandReasoning: loaded.get('expandReasoning')
                .composite as boolean
            };
            model.setConfig(config);
          };
          apply();
          loaded.changed.connect(apply);
        })
        .catch(reason => {
          console.error(`Could not load the settings of ${PLUGIN_ID}.`, reason);
        });
    }

    return {
      open,
      attach,
      newSession: async () => {
        open();
        await model.newSession();
      }
    };
  }
};
