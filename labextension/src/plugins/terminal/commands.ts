/**
 * The commands that open terminal tabs (new, attach to a background
 * session) and "Ask Terax about this block".
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import { Clipboard, InputDialog, Notification } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';

import { listSessions, type ITerminalSession } from '../../api/pty';
import { errorMessage } from '../../api/request';
import { policyRefusal } from '../../common/policy';
import {
  blockQuestion,
  teraxTerminalIcon,
  type BlockEntry
} from '../../terminal';
import type { ITerminalActions } from './actions';
import { CommandIDs } from './ids';
import type { ITerminalTabs } from './tabs';

/**
 * A DOM event asking Lab to open a terminal session in a tab: the notebook's terminal view
 * (an anywidget, which cannot reach Lab's commands) sends it with `{ sessionId }`.
 */
const OPEN_SESSION_EVENT = 'terax:open-terminal-session';

/**
 * Why terminals are off (the administrator's policy, a read-only server),
 * translated, or null.
 */
export interface ITurnedOff {
  readonly reason: string | null;
  /** A command's label, with the reason when terminals are off. */
  label(label: string): string;
}

export function turnedOff(
  trans: TranslationBundle,
  offReason: string | null
): ITurnedOff {
  const reason = offReason ? trans.__(offReason) : null;
  return {
    reason,
    label: label =>
      reason ? trans.__('%1 (%2)', label, reason.replace(/\.$/, '')) : label
  };
}

/**
 * Add the commands that open tabs.
 */
export function addTabCommands(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  tabs: ITerminalTabs,
  off: ITurnedOff
): void {
  const { commands, shell } = app;
  const serverSettings = app.serviceManager.serverSettings;
  const { openPanel, allPanes } = tabs;

  commands.addCommand(CommandIDs.newTerminal, {
    label: args =>
      off.label(
        args.isPalette
          ? trans.__('New Terax Terminal')
          : trans.__('Terax Terminal')
      ),
    caption: off.reason ?? trans.__('Start a new Terax block terminal'),
    icon: args => (args.isPalette ? undefined : teraxTerminalIcon),
    isEnabled: () => !off.reason,
    describedBy: {
      args: {
        type: 'object',
        properties: {
          cwd: {
            type: 'string',
            description:
              'The folder to start in (absolute or relative to the server root).'
          }
        }
      }
    },
    execute: async args => {
      try {
        const panel = await openPanel({
          cwd: typeof args.cwd === 'string' ? args.cwd : undefined,
          layout: args.layout,
          id: typeof args.id === 'string' ? args.id : undefined
        });
        if (!args.layout) {
          shell.activateById(panel.id);
        }
        return panel;
      } catch (error) {
        Notification.error(
          policyRefusal(error) ??
            trans.__('Could not start a terminal: %1', errorMessage(error)),
          { autoClose: 6000 }
        );
        throw error;
      }
    }
  });

  commands.addCommand(CommandIDs.attachTerminal, {
    label: off.label(trans.__('Attach to Running Terminal…')),
    caption:
      off.reason ??
      trans.__('Open a terminal session that runs in the background'),
    icon: args => (args.isPalette ? undefined : teraxTerminalIcon),
    isEnabled: () => !off.reason,
    describedBy: {
      args: {
        type: 'object',
        properties: {
          sessionId: {
            type: 'string',
            description: 'The session to attach to.'
          }
        }
      }
    },
    execute: async args => {
      let sessionId = typeof args.sessionId === 'string' ? args.sessionId : '';
      if (!sessionId) {
        const shown = new Set(allPanes().map(p => p.model.id));
        const sessions = (await listSessions(serverSettings)).filter(
          s => !s.exited && !shown.has(s.id)
        );
        if (sessions.length === 0) {
          Notification.info(
            trans.__('No terminal sessions run in the background.'),
            {
              autoClose: 3000
            }
          );
          return;
        }
        const labels = sessions.map(s => sessionLabel(s));
        const choice = await InputDialog.getItem({
          title: trans.__('Attach to Terminal'),
          label: trans.__('Sessions running in the background'),
          items: labels,
          okLabel: trans.__('Attach')
        });
        if (!choice.button.accept || choice.value === null) {
          return;
        }
        sessionId = sessions[labels.indexOf(choice.value)]?.id ?? '';
      }
      if (!sessionId) {
        return;
      }
      const panel = await openPanel({
        layout: { type: 'pane', session: sessionId, cwd: null }
      });
      shell.activateById(panel.id);
      return panel;
    }
  });

  // Handled here, the event is cancelled, so its sender knows that Lab has opened the tab.
  document.addEventListener(OPEN_SESSION_EVENT, event => {
    const detail = (event as CustomEvent<{ sessionId?: unknown }>).detail;
    if (typeof detail?.sessionId !== 'string' || !detail.sessionId) {
      return;
    }
    event.preventDefault();
    void commands.execute(CommandIDs.attachTerminal, {
      sessionId: detail.sessionId
    });
  });
}

/**
 * Add "Ask Terax about this block": the AI panel takes the question, else
 * the block is copied as Markdown.
 */
export function addAskCommand(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  tabs: ITerminalTabs,
  actions: ITerminalActions
): void {
  const serverSettings = app.serviceManager.serverSettings;
  const { currentPane, targetBlock } = actions;
  app.commands.addCommand(CommandIDs.askAboutBlock, {
    label: trans.__('Ask Terax About This Block'),
    caption: trans.__('Send a command and its output to the Terax assistant'),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          sessionId: { type: 'string', description: 'The terminal session.' },
          blockId: {
            type: 'number',
            description: 'The block id in that session.'
          }
        }
      }
    },
    isEnabled: args =>
      typeof args.sessionId === 'string' ||
      targetBlock(currentPane()).entry !== null,
    execute: async args => {
      let pane =
        typeof args.paneId === 'string'
          ? (tabs.allPanes().find(p => p.id === args.paneId) ?? null)
          : null;
      let sessionId = typeof args.sessionId === 'string' ? args.sessionId : '';
      let blockId =
        typeof args.blockId === 'number' && args.blockId >= 0
          ? args.blockId
          : null;
      let entry: BlockEntry | null = null;
      if (!sessionId) {
        pane = currentPane();
        if (!pane) {
          return;
        }
        ({ entry, blockId } = targetBlock(pane));
        sessionId = pane.model.id;
      } else if (pane && pane.blocks) {
        entry =
          pane.blocks.ledger.entries.find(
            e => pane!.blocks!.ledger.serverId(e) === blockId
          ) ?? null;
      }
      if (!entry && blockId === null) {
        return;
      }
      const question = await blockQuestion(
        pane,
        sessionId,
        blockId,
        entry,
        serverSettings
      );
      if (await tabs.service.ask(question)) {
        return;
      }
      Clipboard.copyToSystem(question.markdown);
      Notification.info(
        trans.__('Copied the block as Markdown, ready to paste into a chat.'),
        { autoClose: 4000 }
      );
    }
  });
}

/**
 * How a session is listed in the attach dialog.
 */
function sessionLabel(session: ITerminalSession): string {
  const parts = [session.name];
  if (session.cwd) {
    parts.push(session.cwd);
  }
  parts.push(session.shell);
  return `${parts.join(' — ')} (${session.id.slice(0, 6)})`;
}
