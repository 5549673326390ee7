/**
 * Plugin of the web preview: `terax:open-preview` (a port, a localhost URL
 * or a web address), the preview tabs and their restore after a reload, the
 * offer to open a dev server a terminal started, and Ctrl/Cmd+click on a
 * localhost link in a terminal.
 */
import {
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  InputDialog,
  Notification,
  WidgetTracker
} from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import {
  capabilityState,
  capabilityURL,
  issueCapability,
  listServers,
  proxyURL,
  type ServerMessage
} from '../api/preview';
import { errorMessage } from '../api/request';
import {
  displayAddress,
  parseTarget,
  type PreviewTarget
} from '../common/preview';
import {
  ITeraxPreview,
  PreviewModel,
  PreviewWidget,
  previewIcon
} from '../preview';
import { policyRefusal } from '../common/policy';
import { ITeraxPolicy } from '../policy/tokens';
import { ITeraxTerminals, type IServerEvent } from '../terminal/tokens';
import { PALETTE_CATEGORY, TRANSLATION_DOMAIN } from './constants';

/**
 * Command IDs of the web preview.
 */
export namespace CommandIDs {
  /** Open a preview: args `{port?: number, url?: string}` (none: ask). */
  export const openPreview = 'terax:open-preview';
  export const reloadPreview = 'terax:reload-preview';
}

const PLUGIN_ID = 'terax-jupyter:preview';
const NAMESPACE = 'terax-preview';

const DEFAULT_CONFIG = {
  offerDetectedServers: true,
  openLocalLinksInPreview: true
};

/**
 * The web preview plugin.
 */
export const previewPlugin: JupyterFrontEndPlugin<ITeraxPreview> = {
  id: PLUGIN_ID,
  description:
    'Preview dev servers started in Terax terminals (through the server proxy) and web pages.',
  autoStart: true,
  optional: [
    ITeraxTerminals,
    ILayoutRestorer,
    ICommandPalette,
    ISettingRegistry,
    ITranslator,
    ITeraxPolicy
  ],
  provides: ITeraxPreview,
  activate: (
    app: JupyterFrontEnd,
    terminals: ITeraxTerminals | null,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    policy: ITeraxPolicy | null
  ): ITeraxPreview => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const offReason = policy?.offReason('preview') ?? null;
    const turnedOff = offReason ? trans.__(offReason) : null;
    const { commands, shell } = app;
    const settings = app.serviceManager.serverSettings;
    const config = { ...DEFAULT_CONFIG };
    const tracker = new WidgetTracker<PreviewWidget>({ namespace: NAMESPACE });

    const urlOf = (model: PreviewModel): string => {
      const target = model.target;
      return target.kind === 'local'
        ? proxyURL(target.port, target.path, settings)
        : target.url;
    };

    const open = async (
      target: PreviewTarget,
      activate = true,
      id?: string
    ): Promise<PreviewWidget> => {
      // One tab per dev server (or per external page).
      const existing = tracker.find(widget => {
        const shown = widget.content.model.target;
        return target.kind === 'local'
          ? shown.kind === 'local' && shown.port === target.port
          : shown.kind === 'external' && shown.url === target.url;
      });
      if (existing) {
        existing.content.model.navigate(target);
        if (activate) {
          shell.activateById(existing.id);
        }
        return existing;
      }
      const model = new PreviewModel({
        target,
        frameURL: async (port, path) => {
          const capability = await issueCapability(port, settings);
          return capabilityURL(capability.prefix ?? '', path, settings);
        },
        frameState: async port => {
          const state = await capabilityState(port, settings);
          const navigation = state.navigation;
          return navigation
            ? { path: navigation.path, error: navigation.error }
            : null;
        }
      });
      const widget = new PreviewWidget({
        model,
        trans,
        openExternally: shown => {
          window.open(urlOf(shown), '_blank', 'noopener');
        },
        basePath: async port =>
          (await issueCapability(port, settings)).prefix ?? ''
      });
      if (id) {
        widget.id = id; // a restored tab keeps its place in the saved layout
      }
      model.changed.connect(() => void tracker.save(widget));
      await tracker.add(widget);
      shell.add(widget, 'main', { type: 'Terax Preview' });
      if (activate) {
        shell.activateById(widget.id);
      }
      return widget;
    };

    const openAddress = (
      address: string | number,
      activate = true,
      id?: string
    ): Promise<PreviewWidget> => {
      const target = parseTarget(String(address));
      if (!target) {
        return Promise.reject(
          new Error(
            trans.__(
              '“%1” is not an address the preview can show: give a port, a localhost URL or an http(s) address.',
              String(address)
            )
          )
        );
      }
      return open(target, activate, id);
    };

    restorer
      ?.restore(tracker, {
        command: CommandIDs.openPreview,
        args: widget => ({
          url: widget.content.model.address,
          id: widget.id,
          restore: true
        }),
        name: widget => widget.id
      })
      .catch(reason => {
        console.error('Could not restore the Terax previews.', reason);
      });

    /**
     * Ask for an address, offering the dev servers the terminals started.
     */
    const ask = async (): Promise<string | null> => {
      let items: string[] = [];
      try {
        const servers = await listServers(undefined, settings);
        items = [...new Set(servers.map(s => displayAddressOf(s.port, s.url)))];
      } catch {
        // No list: an address can still be typed.
      }
      const choice = await InputDialog.getItem({
        title: trans.__('Open Web Preview'),
        label: trans.__(
          'A dev server on this machine (a port or a localhost URL), or a web address'
        ),
        items: items.length ? items : ['http://localhost:'],
        editable: true,
        okLabel: trans.__('Open')
      });
      return choice.button.accept ? (choice.value ?? '').trim() || null : null;
    };

    commands.addCommand(CommandIDs.openPreview, {
      label: args => {
        const label = args.isPalette
          ? trans.__('Open Web Preview…')
          : trans.__('Open Preview');
        return turnedOff
          ? trans.__('%1 (%2)', label, turnedOff.replace(/\.$/, ''))
          : label;
      },
      caption:
        turnedOff ??
        trans.__(
          'Show a dev server of this machine (through the server) or a web page in a tab'
        ),
      icon: args => (args.isPalette ? undefined : previewIcon),
      isEnabled: () => !turnedOff,
      describedBy: {
        args: {
          type: 'object',
          properties: {
            port: {
              type: 'number',
              description: 'A port of a dev server on the server machine.'
            },
            url: {
              type: 'string',
              description:
                'A localhost URL (shown through the server) or an http(s) URL.'
            }
          }
        }
      },
      execute: async args => {
        let address: string | number | null;
        if (typeof args.port === 'number' || typeof args.port === 'string') {
          address = args.port;
        } else if (typeof args.url === 'string' && args.url) {
          address = args.url;
        } else {
          address = await ask();
        }
        if (address === null) {
          return null;
        }
        const restoring = args.restore === true;
        try {
          const id =
            restoring && typeof args.id === 'string' ? args.id : undefined;
          return await openAddress(address, !restoring, id);
        } catch (error) {
          Notification.error(policyRefusal(error) ?? errorMessage(error), {
            autoClose: 6000
          });
          if (!restoring) {
            throw error;
          }
          return null;
        }
      }
    });

    const current = (): PreviewWidget | null => {
      const widget = tracker.currentWidget;
      return widget && widget === shell.currentWidget ? widget : null;
    };
    commands.addCommand(CommandIDs.reloadPreview, {
      label: trans.__('Reload Preview'),
      isEnabled: () => current() !== null,
      execute: () => current()?.content.model.reload()
    });
    tracker.currentChanged.connect(() => commands.notifyCommandChanged());

    const category = trans.__(PALETTE_CATEGORY);
    palette?.addItem({
      command: CommandIDs.openPreview,
      category,
      args: { isPalette: true }
    });
    palette?.addItem({ command: CommandIDs.reloadPreview, category });

    // -- the terminals' dev servers and links ----------------------------------------

    const offered = new Set<string>();
    const offer = (event: IServerEvent): void => {
      const server: ServerMessage = event.server;
      if (
        turnedOff ||
        server.event !== 'detected' ||
        !config.offerDetectedServers
      ) {
        return;
      }
      const key = `${event.sessionId}:${server.port}`;
      if (offered.has(key)) {
        return;
      }
      offered.add(key);
      const printed = parseTarget(server.url);
      const target: PreviewTarget = {
        kind: 'local',
        port: server.port,
        path: printed?.kind === 'local' ? printed.path : '/'
      };
      const shown = tracker.find(w => w.content.model.port === server.port);
      if (shown) {
        return; // a preview of it is open already
      }
      Notification.info(
        server.process
          ? trans.__(
              '%1 in %2 serves %3',
              server.process,
              event.sessionName,
              displayAddress(target)
            )
          : trans.__(
              'A dev server in %1 serves %2',
              event.sessionName,
              displayAddress(target)
            ),
        {
          autoClose: 15000,
          actions: [
            {
              label: trans.__('Open Preview'),
              caption: trans.__('Show it in a tab, through the server'),
              displayType: 'accent',
              callback: () => {
                open(target).catch(error =>
                  Notification.error(errorMessage(error), { autoClose: 6000 })
                );
              }
            }
          ]
        }
      );
    };
    terminals?.serverDetected.connect((_, event) => offer(event));
    terminals?.setLinkHandler(uri => {
      if (turnedOff || !config.openLocalLinksInPreview) {
        return false;
      }
      const target = parseTarget(uri);
      if (target?.kind !== 'local') {
        return false;
      }
      open(target).catch(error =>
        Notification.error(errorMessage(error), { autoClose: 6000 })
      );
      return true;
    });

    if (settingRegistry) {
      void settingRegistry
        .load(PLUGIN_ID)
        .then(loaded => {
          const apply = (): void => {
            for (const key of Object.keys(DEFAULT_CONFIG)) {
              const value = loaded.get(key).composite;
              if (typeof value === 'boolean') {
                (config as Record<string, boolean>)[key] = value;
              }
            }
          };
          apply();
          loaded.changed.connect(apply);
        })
        .catch(reason => {
          console.error(`Could not load the settings of ${PLUGIN_ID}.`, reason);
        });
    }

    return {
      tracker,
      open: address => openAddress(address)
    };
  }
};

/**
 * A detected server as the address list shows it (its printed URL when it
 * is a local one, else its port on localhost).
 */
function displayAddressOf(port: number, url: string): string {
  const printed = parseTarget(url);
  return printed?.kind === 'local' && printed.port === port
    ? displayAddress(printed)
    : `http://localhost:${port}/`;
}
