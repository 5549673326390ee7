/**
 * The commands on a pane (the one right-clicked, else the active one):
 * split, close, detach, focus, find, blocks, copy, paste, clear.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import { Clipboard, Notification } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';

import { errorMessage } from '../../api/request';
import type { TerminalPane, TerminalPanel } from '../../terminal';
import type { ITerminalActions } from './actions';
import { CommandIDs } from './ids';

/**
 * A command on the current pane and its tab.
 */
interface IPaneCommand {
  label: string;
  caption?: string;
  execute: (pane: TerminalPane, panel: TerminalPanel) => unknown;
  isEnabled?: (pane: TerminalPane) => boolean;
  isToggled?: (pane: TerminalPane) => boolean;
}

/**
 * Add the pane commands.
 */
export function addPaneCommands(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  actions: ITerminalActions
): void {
  const { currentPane, currentPanel, targetBlock, runAction, rerun } = actions;

  const paneCommand = (id: string, options: IPaneCommand): void => {
    app.commands.addCommand(id, {
      label: options.label,
      caption: options.caption,
      isEnabled: () => {
        const pane = currentPane();
        return !!pane && (options.isEnabled?.(pane) ?? true);
      },
      isToggled: () => {
        const pane = currentPane();
        return !!pane && (options.isToggled?.(pane) ?? false);
      },
      execute: () => {
        const pane = currentPane();
        const panel = currentPanel(pane);
        return pane && panel ? options.execute(pane, panel) : undefined;
      }
    });
  };

  const split =
    (orientation: 'horizontal' | 'vertical') =>
    (pane: TerminalPane, panel: TerminalPanel) =>
      panel
        .split(pane, orientation)
        .then(actions.wirePane, error =>
          Notification.error(errorMessage(error), { autoClose: 5000 })
        );

  paneCommand(CommandIDs.splitRight, {
    label: trans.__('Split Terminal Right'),
    caption: trans.__('Open a new terminal pane beside this one'),
    execute: split('horizontal')
  });
  paneCommand(CommandIDs.splitDown, {
    label: trans.__('Split Terminal Down'),
    caption: trans.__('Open a new terminal pane below this one'),
    execute: split('vertical')
  });
  paneCommand(CommandIDs.closePane, {
    label: trans.__('Close Terminal Pane'),
    caption: trans.__('Close this pane and end its session'),
    execute: (pane, panel) => panel.closePane(pane)
  });
  paneCommand(CommandIDs.detachPane, {
    label: trans.__('Detach (Keep Running in Background)'),
    caption: trans.__('Close this pane but keep its session running'),
    execute: (pane, panel) => {
      pane.detached = true;
      const name = pane.model.name;
      panel.closePane(pane);
      Notification.info(
        trans.__(
          '%1 keeps running. Reopen it with “Attach to Running Terminal…”.',
          name
        ),
        { autoClose: 5000 }
      );
    }
  });
  paneCommand(CommandIDs.focusNextPane, {
    label: trans.__('Focus Next Terminal Pane'),
    execute: (_, panel) => panel.focusPane(1)
  });
  paneCommand(CommandIDs.focusPreviousPane, {
    label: trans.__('Focus Previous Terminal Pane'),
    execute: (_, panel) => panel.focusPane(-1)
  });
  paneCommand(CommandIDs.find, {
    label: trans.__('Find in Terminal…'),
    execute: pane => pane.find()
  });
  paneCommand(CommandIDs.previousBlock, {
    label: trans.__('Previous Command Block'),
    execute: pane => pane.jump(-1)
  });
  paneCommand(CommandIDs.nextBlock, {
    label: trans.__('Next Command Block'),
    execute: pane => pane.jump(1)
  });
  paneCommand(CommandIDs.toggleBlocks, {
    label: trans.__('Show Command Blocks'),
    caption: trans.__(
      'The list of commands run in this pane, with their output'
    ),
    isToggled: pane => pane.outline.isVisible,
    execute: pane => pane.toggleOutline()
  });
  paneCommand(CommandIDs.copyBlockOutput, {
    label: trans.__('Copy Block Output'),
    isEnabled: pane => targetBlock(pane).entry !== null,
    execute: pane => {
      const { entry } = targetBlock(pane);
      return entry ? runAction(pane, 'copy-output', entry) : undefined;
    }
  });
  paneCommand(CommandIDs.rerunBlock, {
    label: trans.__('Run Block Again'),
    isEnabled: pane => targetBlock(pane).entry !== null,
    execute: pane => {
      const { entry } = targetBlock(pane);
      if (entry) {
        rerun(pane, entry.command);
      }
    }
  });
  paneCommand(CommandIDs.copy, {
    label: trans.__('Copy'),
    isEnabled: pane => pane.selection !== '',
    execute: pane => Clipboard.copyToSystem(pane.selection)
  });
  paneCommand(CommandIDs.paste, {
    label: trans.__('Paste'),
    execute: async pane => {
      try {
        const text = await navigator.clipboard.readText();
        if (text) {
          pane.paste(text);
        }
      } catch {
        Notification.warning(
          trans.__(
            'The browser did not allow reading the clipboard; use Ctrl+V.'
          ),
          { autoClose: 4000 }
        );
      }
    }
  });
  paneCommand(CommandIDs.clear, {
    label: trans.__('Clear Terminal'),
    execute: pane => pane.clear()
  });
}
