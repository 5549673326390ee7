/**
 * The pane and block a command acts on, and the block actions (copy the
 * command or its output, run it again, ask Terax about it).
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import { Clipboard, Notification } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';

import { errorMessage } from '../../api/request';
import {
  CSS,
  blockQuestion,
  type BlockAction,
  type BlockEntry,
  type TerminalPane,
  type TerminalPanel
} from '../../terminal';
import { CommandIDs } from './ids';
import type { ITerminalTabs } from './tabs';

/**
 * What the commands act on, and how.
 */
export interface ITerminalActions {
  /** The pane right-clicked, else the active pane of the current tab. */
  currentPane(): TerminalPane | null;
  /** The tab of a pane (the current tab without one). */
  currentPanel(pane: TerminalPane | null): TerminalPanel | null;
  /** The block right-clicked or at the pane's cursor, with its server id. */
  targetBlock(pane: TerminalPane | null): {
    entry: BlockEntry | null;
    blockId: number | null;
  };
  runAction(
    pane: TerminalPane,
    action: BlockAction,
    entry: BlockEntry
  ): Promise<void>;
  /** Run a command again (or leave it in the input line while one runs). */
  rerun(pane: TerminalPane, command: string): void;
  /** Take a pane's block actions (once per pane). */
  wirePane(pane: TerminalPane): void;
}

export function terminalActions(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  tabs: ITerminalTabs
): ITerminalActions {
  const { tracker, allPanes } = tabs;
  const serverSettings = app.serviceManager.serverSettings;

  const rerun = (pane: TerminalPane, command: string): void => {
    if (pane.model.acceptsInput) {
      pane.runCommand(command);
      pane.focus();
    } else {
      pane.input.value = command;
      Notification.info(
        trans.__('A command is running; the command waits in the input line.'),
        { autoClose: 3000 }
      );
    }
  };

  const runAction = async (
    pane: TerminalPane,
    action: BlockAction,
    entry: BlockEntry
  ): Promise<void> => {
    const blockId = pane.blocks?.ledger.serverId(entry) ?? null;
    switch (action) {
      case 'copy-command':
        Clipboard.copyToSystem(entry.command);
        Notification.info(trans.__('Copied the command.'), {
          autoClose: 2000
        });
        break;
      case 'copy-output': {
        const question = await blockQuestion(
          pane,
          pane.model.id,
          blockId,
          entry,
          serverSettings
        );
        Clipboard.copyToSystem(question.output);
        Notification.info(trans.__('Copied the output.'), {
          autoClose: 2000
        });
        break;
      }
      case 'rerun':
        rerun(pane, entry.command);
        break;
      case 'ask':
        await app.commands.execute(CommandIDs.askAboutBlock, {
          sessionId: pane.model.id,
          blockId: blockId ?? -1,
          paneId: pane.id
        });
        break;
    }
  };

  const wired = new WeakSet<TerminalPane>();
  const wirePane = (pane: TerminalPane): void => {
    if (wired.has(pane)) {
      return;
    }
    wired.add(pane);
    pane.actionRequested.connect((_, { action, entry }) => {
      runAction(pane, action, entry).catch(error =>
        Notification.error(errorMessage(error), { autoClose: 5000 })
      );
    });
  };

  return {
    currentPane: () => {
      const node = app.contextMenuHitTest(n => n.classList.contains(CSS.pane));
      if (node) {
        const pane = allPanes().find(p => p.node === node);
        if (pane) {
          return pane;
        }
      }
      return tracker.currentWidget?.activePane ?? null;
    },
    currentPanel: pane =>
      pane
        ? (tracker.find(panel => panel.panes.includes(pane)) ?? null)
        : tracker.currentWidget,
    targetBlock: pane => {
      const entry = pane ? (pane.contextBlock ?? pane.blockAt()) : null;
      const blockId =
        entry && pane?.blocks ? pane.blocks.ledger.serverId(entry) : null;
      return { entry, blockId };
    },
    runAction,
    rerun,
    wirePane
  };
}

/**
 * Take the block actions of every pane of every tab, split panes included.
 */
export function wirePanes(
  tabs: ITerminalTabs,
  actions: ITerminalActions
): void {
  tabs.tracker.widgetAdded.connect((_, panel) => {
    panel.panes.forEach(actions.wirePane);
    panel.stateChanged.connect(() => panel.panes.forEach(actions.wirePane));
  });
}
