/**
 * The web preview commands: open a preview (asking for an address when
 * none is given) and reload the current one.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import {
  type ICommandPalette,
  InputDialog,
  Notification
} from '@jupyterlab/apputils';
import type { ServerConnection } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';

import { listServers } from '../../api/preview';
import { errorMessage } from '../../api/request';
import { policyRefusal } from '../../common/policy';
import { displayAddress, parseTarget } from '../../common/preview/address';
import { previewIcon, type PreviewWidget } from '../../preview';
import { PALETTE_CATEGORY } from '../constants';
import { CommandIDs } from './ids';
import type { IPreviewTabs } from './tabs';

/**
 * Add the commands; `turnedOff` says why previews are off (or null).
 */
export function addCommands(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  tabs: IPreviewTabs,
  turnedOff: string | null
): void {
  const { commands, shell } = app;
  const settings = app.serviceManager.serverSettings;

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
        address = await askAddress(trans, settings);
      }
      if (address === null) {
        return null;
      }
      const restoring = args.restore === true;
      try {
        const id =
          restoring && typeof args.id === 'string' ? args.id : undefined;
        return await tabs.openAddress(address, !restoring, id);
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
    const widget = tabs.tracker.currentWidget;
    return widget && widget === shell.currentWidget ? widget : null;
  };
  commands.addCommand(CommandIDs.reloadPreview, {
    label: trans.__('Reload Preview'),
    isEnabled: () => current() !== null,
    execute: () => current()?.content.model.reload()
  });
  tabs.tracker.currentChanged.connect(() => commands.notifyCommandChanged());
}

/**
 * Add the commands to the palette.
 */
export function addToPalette(
  palette: ICommandPalette | null,
  trans: TranslationBundle
): void {
  const category = trans.__(PALETTE_CATEGORY);
  palette?.addItem({
    command: CommandIDs.openPreview,
    category,
    args: { isPalette: true }
  });
  palette?.addItem({ command: CommandIDs.reloadPreview, category });
}

/**
 * Ask for an address, offering the dev servers the terminals started.
 */
async function askAddress(
  trans: TranslationBundle,
  settings: ServerConnection.ISettings
): Promise<string | null> {
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
}

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
