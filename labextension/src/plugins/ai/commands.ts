/**
 * The AI panel's commands: open, new session, stop, settings, and attach a
 * file, an editor selection or a terminal selection to the next prompt.
 */
import type { ILabShell, JupyterFrontEnd } from '@jupyterlab/application';
import type { ICommandPalette } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import type { TranslationBundle } from '@jupyterlab/translation';

import { aiIcon } from '../../ai';
import type { ITeraxTerminals } from '../../terminal/tokens';
import { PALETTE_CATEGORY } from '../constants';
import {
  type Attachment,
  cellAttachment as notebookCellAttachment
} from '../../common/ai/chat';
import {
  cellLabel,
  currentCell,
  currentEditor,
  LANGUAGES,
  selectedText
} from './editors';
import { CommandIDs } from './ids';
import type { IAiPanelActions } from './panel';

/**
 * The longest selection attached, in characters.
 */
const MAX_SELECTION = 20000;

/**
 * The file browser as far as this plugin needs it.
 */
interface IFileBrowserLike {
  selectedItems?: () => Iterable<{ path: string; type: string }>;
}

/**
 * Add the commands.
 */
export function addCommands(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  actions: IAiPanelActions,
  labShell: ILabShell | null,
  terminals: ITeraxTerminals | null
): void {
  const { commands, shell } = app;
  const { panel, model, open, attach, isOpen } = actions;

  commands.addCommand(CommandIDs.open, {
    label: trans.__('Terax AI'),
    caption: trans.__('Show or hide the Terax AI panel'),
    icon: args => (args.isPalette ? undefined : aiIcon),
    isToggled: () => isOpen(),
    execute: () => {
      if (isOpen() && panel.node.contains(document.activeElement)) {
        actions.collapse();
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
        text: text.slice(0, MAX_SELECTION),
        path: target.path || undefined,
        language: LANGUAGES[PathExt.extname(target.path).toLowerCase()]
      });
    }
  });
  const cellAttachment = (): Attachment | null => {
    const cell = currentCell(shell.currentWidget);
    if (!cell) {
      return null;
    }
    return notebookCellAttachment(
      cell.path,
      {
        id: cell.cellId,
        type: cell.kind,
        source: cell.source,
        language: cell.language,
        error: cell.error
      },
      cellLabel(trans)
    );
  };
  commands.addCommand(CommandIDs.attachCell, {
    label: trans.__('Ask Terax About This Cell'),
    caption: trans.__(
      'Attach the active cell (and its error, if it raised one) to the next AI prompt'
    ),
    icon: args => (args.isPalette ? undefined : aiIcon),
    isEnabled: () => currentCell(shell.currentWidget) !== null,
    execute: () => {
      const attachment = cellAttachment();
      if (attachment) {
        attach(attachment);
      }
    }
  });
  commands.addCommand(CommandIDs.fixError, {
    label: trans.__('Fix This Error With Terax'),
    caption: trans.__(
      'Ask the agent to fix the error the active cell raised (its changes still ask first)'
    ),
    icon: args => (args.isPalette ? undefined : aiIcon),
    isEnabled: () => Boolean(currentCell(shell.currentWidget)?.error),
    execute: async () => {
      const attachment = cellAttachment();
      if (!attachment) {
        return;
      }
      attach(attachment);
      // The attachment stays on the composer if a run is going: send it later.
      await model.submit(
        'Fix the error the attached notebook cell raised. Read the cell and its ' +
          'outputs first; explain the cause in a sentence, then propose the change.'
      );
    }
  });
  const terminalSelection = (): string =>
    terminals?.tracker.currentWidget?.activePane?.selection ?? '';
  commands.addCommand(CommandIDs.attachTerminalSelection, {
    label: trans.__('Ask Terax About the Selection'),
    caption: trans.__(
      'Attach the selected terminal text to the next AI prompt'
    ),
    isVisible: () => terminals !== null,
    isEnabled: () => Boolean(terminalSelection()),
    execute: () => {
      const text = terminalSelection();
      if (text) {
        attach({
          kind: 'selection',
          label: trans.__('terminal selection'),
          text: text.slice(0, MAX_SELECTION),
          language: 'console'
        });
      }
    }
  });
}

/**
 * "Ask Terax about this block" in a terminal attaches the block.
 */
export function takeTerminalQuestions(
  trans: TranslationBundle,
  actions: IAiPanelActions,
  terminals: ITeraxTerminals | null
): void {
  terminals?.setAskHandler(question => {
    actions.attach({
      kind: 'block',
      label: question.command || trans.__('terminal block'),
      markdown: question.markdown
    });
  });
}

/**
 * Add the commands to the palette.
 */
export function addToPalette(
  palette: ICommandPalette | null,
  trans: TranslationBundle
): void {
  for (const command of [
    CommandIDs.open,
    CommandIDs.newSession,
    CommandIDs.stop,
    CommandIDs.settings,
    CommandIDs.attachFile,
    CommandIDs.attachSelection,
    CommandIDs.attachCell,
    CommandIDs.fixError
  ]) {
    palette?.addItem({ command, category: trans.__(PALETTE_CATEGORY) });
  }
}
