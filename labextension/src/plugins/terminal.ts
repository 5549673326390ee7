/**
 * Plugin of the Terax block terminal: main-area tabs of split panes, the
 * commands, the launcher card, restore after a reload, settings and theme.
 */
import {
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Clipboard,
  ICommandPalette,
  InputDialog,
  Notification,
  WidgetTracker
} from '@jupyterlab/apputils';
import { ILauncher } from '@jupyterlab/launcher';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { getInfo } from '../api/meta';
import {
  createSession,
  deleteSession,
  getSession,
  listSessions,
  type ITerminalSession
} from '../api/pty';
import { TeraxAPIError, errorMessage } from '../api/request';
import { policyRefusal } from '../common/policy';
import { readLayout, type IPaneState } from '../common/layout';
import {
  CSS,
  ITeraxTerminals,
  blockQuestion,
  RendererManager,
  TerminalPanel,
  TerminalService,
  TerminalSessionModel,
  teraxTerminalIcon,
  type BlockAction,
  type BlockEntry,
  type IPanelServices,
  type ITerminalConfig,
  type TerminalPane
} from '../terminal';
import { ITeraxPolicy } from '../policy/tokens';
import { PALETTE_CATEGORY, TRANSLATION_DOMAIN } from './constants';

/**
 * Command IDs of the Terax terminal.
 */
export namespace CommandIDs {
  export const newTerminal = 'terax:new-terminal';
  export const attachTerminal = 'terax:attach-terminal';
  export const splitRight = 'terax:split-right';
  export const splitDown = 'terax:split-down';
  export const closePane = 'terax:close-pane';
  export const detachPane = 'terax:detach-pane';
  export const focusNextPane = 'terax:focus-next-pane';
  export const focusPreviousPane = 'terax:focus-previous-pane';
  export const find = 'terax:find-in-terminal';
  export const previousBlock = 'terax:previous-block';
  export const nextBlock = 'terax:next-block';
  export const toggleBlocks = 'terax:toggle-blocks';
  export const askAboutBlock = 'terax:ask-about-block';
  export const copyBlockOutput = 'terax:copy-block-output';
  export const rerunBlock = 'terax:rerun-block';
  export const copy = 'terax:copy';
  export const paste = 'terax:paste';
  export const clear = 'terax:clear';
}

const PLUGIN_ID = 'terax-jupyter:terminal';
/**
 * A DOM event asking Lab to open a terminal session in a tab: the notebook's terminal view
 * (an anywidget, which cannot reach Lab's commands) sends it with `{ sessionId }`.
 */
const OPEN_SESSION_EVENT = 'terax:open-terminal-session';
const NAMESPACE = 'terax-terminal';

const DEFAULT_CONFIG: ITerminalConfig & {
  shell: string;
  rendererPoolSize: number;
} = {
  fontFamily: '',
  fontSize: 13,
  lineHeight: 1.25,
  scrollback: 10000,
  cursorBlink: true,
  pasteWithCtrlV: true,
  hibernateAfterMinutes: 15,
  shell: '',
  rendererPoolSize: 4
};

/**
 * The Terax terminal plugin.
 */
export const terminalPlugin: JupyterFrontEndPlugin<ITeraxTerminals> = {
  id: PLUGIN_ID,
  description:
    'Block terminals in the main area: split panes, command blocks, an input line.',
  autoStart: true,
  optional: [
    ICommandPalette,
    ILauncher,
    ILayoutRestorer,
    ISettingRegistry,
    ITranslator,
    ITeraxPolicy
  ],
  provides: ITeraxTerminals,
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    launcher: ILauncher | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    policy: ITeraxPolicy | null
  ): ITeraxTerminals => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    // Why terminals are off (the administrator's policy, a read-only server), or null.
    const offReason = policy?.offReason('terminals') ?? null;
    const turnedOff = offReason ? trans.__(offReason) : null;
    /** A command's label, with the reason when terminals are off. */
    const offLabel = (label: string): string =>
      turnedOff
        ? trans.__('%1 (%2)', label, turnedOff.replace(/\.$/, ''))
        : label;
    const { commands, shell } = app;
    const serverSettings = app.serviceManager.serverSettings;
    const config = { ...DEFAULT_CONFIG };
    const renderers = new RendererManager(config.rendererPoolSize);
    const tracker = new WidgetTracker<TerminalPanel>({ namespace: NAMESPACE });
    const service = new TerminalService(tracker, args => openPanel(args));
    let serverRoot: Promise<string> | null = null;

    const allPanes = (): TerminalPane[] => {
      const panes: TerminalPane[] = [];
      tracker.forEach(panel => panes.push(...panel.panes));
      return panes;
    };

    const openSession = async (
      state: Partial<IPaneState>
    ): Promise<TerminalSessionModel> => {
      let session: ITerminalSession | null = null;
      if (state.session) {
        try {
          session = await getSession(state.session, serverSettings);
          if (session.exited) {
            session = null;
          }
        } catch (error) {
          if (!(
            error instanceof TeraxAPIError && error.response.status === 404
          )) {
            throw error;
          }
        }
      }
      if (!session) {
        const options = { shell: config.shell || undefined };
        try {
          session = await createSession(
            { ...options, cwd: state.cwd ?? undefined },
            serverSettings
          );
        } catch (error) {
          if (!state.cwd) {
            throw error;
          }
          // The folder is gone or no longer allowed: start at the root.
          session = await createSession(options, serverSettings);
        }
      }
      return new TerminalSessionModel({ session, settings: serverSettings });
    };

    const services: IPanelServices = {
      serverSettings,
      trans,
      renderers,
      config: () => config,
      serverRoot: () => {
        serverRoot ??= getInfo(serverSettings).then(info => info.server_root);
        serverRoot.catch(() => {
          serverRoot = null;
        });
        return serverRoot;
      },
      openSession,
      closeSession: id => {
        void deleteSession(id, serverSettings).catch(() => undefined);
      }
    };

    const openPanel = async (
      args: { cwd?: string; layout?: unknown; id?: string } = {}
    ): Promise<TerminalPanel> => {
      const panel = new TerminalPanel({ services, id: args.id });
      try {
        await panel.build(readLayout(args.layout), args.cwd);
      } catch (error) {
        panel.dispose();
        throw error;
      }
      panel.stateChanged.connect(() => void tracker.save(panel));
      if (!tracker.has(panel)) {
        void tracker.add(panel);
      }
      if (!panel.isAttached) {
        shell.add(panel, 'main', { type: 'Terax Terminal' });
      }
      return panel;
    };

    // Known before the first drop, so dropped paths are typed at once.
    void services.serverRoot().catch(() => undefined);

    restorer
      ?.restore(tracker, {
        command: CommandIDs.newTerminal,
        args: panel =>
          ({
            id: panel.id,
            layout: panel.saveLayout()
          }) as unknown as ReadonlyPartialJSONObject,
        name: panel => panel.id
      })
      .catch(reason => {
        console.error('Could not restore the Terax terminals.', reason);
      });

    /**
     * The pane a command acts on: the one right-clicked, else the active
     * pane of the current terminal tab.
     */
    const currentPane = (): TerminalPane | null => {
      const node = app.contextMenuHitTest(n => n.classList.contains(CSS.pane));
      if (node) {
        const pane = allPanes().find(p => p.node === node);
        if (pane) {
          return pane;
        }
      }
      return tracker.currentWidget?.activePane ?? null;
    };
    const currentPanel = (pane: TerminalPane | null): TerminalPanel | null =>
      pane
        ? (tracker.find(panel => panel.panes.includes(pane)) ?? null)
        : tracker.currentWidget;

    const targetBlock = (
      pane: TerminalPane | null
    ): { entry: BlockEntry | null; blockId: number | null } => {
      const entry = pane ? (pane.contextBlock ?? pane.blockAt()) : null;
      const blockId =
        entry && pane?.blocks ? pane.blocks.ledger.serverId(entry) : null;
      return { entry, blockId };
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
          await commands.execute(CommandIDs.askAboutBlock, {
            sessionId: pane.model.id,
            blockId: blockId ?? -1,
            paneId: pane.id
          });
          break;
      }
    };

    const rerun = (pane: TerminalPane, command: string): void => {
      if (pane.model.acceptsInput) {
        pane.runCommand(command);
        pane.focus();
      } else {
        pane.input.value = command;
        Notification.info(
          trans.__(
            'A command is running; the command waits in the input line.'
          ),
          { autoClose: 3000 }
        );
      }
    };

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
    const wired = new WeakSet<TerminalPane>();
    tracker.widgetAdded.connect((_, panel) => {
      panel.panes.forEach(wirePane);
      panel.stateChanged.connect(() => panel.panes.forEach(wirePane));
    });

    commands.addCommand(CommandIDs.newTerminal, {
      label: args =>
        offLabel(
          args.isPalette
            ? trans.__('New Terax Terminal')
            : trans.__('Terax Terminal')
        ),
      caption: turnedOff ?? trans.__('Start a new Terax block terminal'),
      icon: args => (args.isPalette ? undefined : teraxTerminalIcon),
      isEnabled: () => !turnedOff,
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
      label: offLabel(trans.__('Attach to Running Terminal…')),
      caption:
        turnedOff ??
        trans.__('Open a terminal session that runs in the background'),
      icon: args => (args.isPalette ? undefined : teraxTerminalIcon),
      isEnabled: () => !turnedOff,
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
        let sessionId =
          typeof args.sessionId === 'string' ? args.sessionId : '';
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

    const paneCommand = (
      id: string,
      options: {
        label: string;
        caption?: string;
        execute: (pane: TerminalPane, panel: TerminalPanel) => unknown;
        isEnabled?: (pane: TerminalPane) => boolean;
        isToggled?: (pane: TerminalPane) => boolean;
      }
    ): void => {
      commands.addCommand(id, {
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

    paneCommand(CommandIDs.splitRight, {
      label: trans.__('Split Terminal Right'),
      caption: trans.__('Open a new terminal pane beside this one'),
      execute: (pane, panel) =>
        panel
          .split(pane, 'horizontal')
          .then(wirePane, error =>
            Notification.error(errorMessage(error), { autoClose: 5000 })
          )
    });
    paneCommand(CommandIDs.splitDown, {
      label: trans.__('Split Terminal Down'),
      caption: trans.__('Open a new terminal pane below this one'),
      execute: (pane, panel) =>
        panel
          .split(pane, 'vertical')
          .then(wirePane, error =>
            Notification.error(errorMessage(error), { autoClose: 5000 })
          )
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

    commands.addCommand(CommandIDs.askAboutBlock, {
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
            ? (allPanes().find(p => p.id === args.paneId) ?? null)
            : null;
        let sessionId =
          typeof args.sessionId === 'string' ? args.sessionId : '';
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
        if (await service.ask(question)) {
          return;
        }
        Clipboard.copyToSystem(question.markdown);
        Notification.info(
          trans.__('Copied the block as Markdown, ready to paste into a chat.'),
          { autoClose: 4000 }
        );
      }
    });

    const category = trans.__(PALETTE_CATEGORY);
    for (const command of [
      CommandIDs.newTerminal,
      CommandIDs.attachTerminal,
      CommandIDs.splitRight,
      CommandIDs.splitDown,
      CommandIDs.closePane,
      CommandIDs.focusNextPane,
      CommandIDs.focusPreviousPane,
      CommandIDs.toggleBlocks,
      CommandIDs.askAboutBlock
    ]) {
      palette?.addItem({ command, category, args: { isPalette: true } });
    }
    // Off by policy: no card to click that can only fail.
    if (!turnedOff) {
      launcher?.add({
        command: CommandIDs.newTerminal,
        category: trans.__('Other'),
        rank: 1
      });
    }

    // Follow Lab's theme: it is applied by switching these body attributes.
    const applyTheme = (): void => {
      requestAnimationFrame(() => allPanes().forEach(p => p.applyTheme()));
    };
    new MutationObserver(applyTheme).observe(document.body, {
      attributes: true,
      attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light']
    });

    if (settingRegistry) {
      void settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = (): void => {
            for (const key of Object.keys(DEFAULT_CONFIG)) {
              const value = settings.get(key).composite;
              if (value !== undefined && value !== null) {
                (config as Record<string, unknown>)[key] = value;
              }
            }
            renderers.setCapacity(config.rendererPoolSize);
            allPanes().forEach(p => p.applyConfig());
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason => {
          console.error(`Could not load the settings of ${PLUGIN_ID}.`, reason);
        });
    }

    return service;
  }
};

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
