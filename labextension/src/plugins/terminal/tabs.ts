/**
 * The terminal tabs: their tracker, the sessions their panes open, and a tab
 * opened (new, from a saved layout, or restored after a reload).
 */
import type { ILayoutRestorer, JupyterFrontEnd } from '@jupyterlab/application';
import { WidgetTracker } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { getInfo } from '../../api/meta';
import {
  createSession,
  deleteSession,
  getSession,
  type ITerminalSession
} from '../../api/pty';
import { TeraxAPIError } from '../../api/request';
import { readLayout, type IPaneState } from '../../common/terminal/layout';
import {
  RendererManager,
  TerminalPanel,
  TerminalService,
  TerminalSessionModel,
  type IPanelServices,
  type TerminalPane
} from '../../terminal';
import { CommandIDs } from './ids';
import type { TerminalSettings } from './settings';

const NAMESPACE = 'terax-terminal';

/**
 * Where a tab opens: a folder, a saved layout, the id it had.
 */
export interface IOpenArgs {
  cwd?: string;
  layout?: unknown;
  id?: string;
}

/**
 * The terminal tabs of the page.
 */
export interface ITerminalTabs {
  readonly tracker: WidgetTracker<TerminalPanel>;
  /** The `ITeraxTerminals` service other plugins get. */
  readonly service: TerminalService;
  /** Every pane of every tab. */
  allPanes(): TerminalPane[];
  /** Open a tab in the main area (not activated). */
  openPanel(args?: IOpenArgs): Promise<TerminalPanel>;
}

/**
 * The tabs, with the sessions and renderers their panes share.
 */
export function createTabs(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  config: TerminalSettings,
  renderers: RendererManager
): ITerminalTabs {
  const serverSettings = app.serviceManager.serverSettings;
  const tracker = new WidgetTracker<TerminalPanel>({ namespace: NAMESPACE });
  const service = new TerminalService(tracker, args => openPanel(args));
  let serverRoot: Promise<string> | null = null;

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
    openSession: state => openSession(state, config, serverSettings),
    closeSession: id => {
      void deleteSession(id, serverSettings).catch(() => undefined);
    }
  };

  const openPanel = async (args: IOpenArgs = {}): Promise<TerminalPanel> => {
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
      app.shell.add(panel, 'main', { type: 'Terax Terminal' });
    }
    return panel;
  };

  // Known before the first drop, so dropped paths are typed at once.
  void services.serverRoot().catch(() => undefined);

  return {
    tracker,
    service,
    allPanes: () => {
      const panes: TerminalPane[] = [];
      tracker.forEach(panel => panes.push(...panel.panes));
      return panes;
    },
    openPanel
  };
}

/**
 * The session of a pane: the saved one while it runs, else a new one in the
 * saved folder (at the root when that folder is gone).
 */
async function openSession(
  state: Partial<IPaneState>,
  config: TerminalSettings,
  serverSettings: IPanelServices['serverSettings']
): Promise<TerminalSessionModel> {
  let session: ITerminalSession | null = null;
  if (state.session) {
    try {
      session = await getSession(state.session, serverSettings);
      if (session.exited) {
        session = null;
      }
    } catch (error) {
      if (!(error instanceof TeraxAPIError && error.response.status === 404)) {
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
}

/**
 * Reopen the tabs of the last visit, each with its split layout.
 */
export function restoreLayout(
  restorer: ILayoutRestorer | null,
  tracker: WidgetTracker<TerminalPanel>
): void {
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
}
