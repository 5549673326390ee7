/**
 * The terminals' dev servers and links: offer to preview a server a
 * terminal started, and open Ctrl/Cmd+clicked localhost links in a preview.
 */
import { Notification } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';

import type { ServerMessage } from '../../api/preview';
import { errorMessage } from '../../api/request';
import {
  displayAddress,
  parseTarget,
  type PreviewTarget
} from '../../common/preview/address';
import type { IServerEvent, ITeraxTerminals } from '../../terminal/tokens';
import type { IPreviewSettings } from './settings';
import type { IPreviewTabs } from './tabs';

/**
 * Follow the terminals (nothing when previews are off, by `turnedOff`).
 */
export function followTerminals(
  terminals: ITeraxTerminals | null,
  trans: TranslationBundle,
  tabs: IPreviewTabs,
  config: IPreviewSettings,
  turnedOff: string | null
): void {
  const openTarget = (target: PreviewTarget): void => {
    tabs
      .open(target)
      .catch(error =>
        Notification.error(errorMessage(error), { autoClose: 6000 })
      );
  };

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
    const shown = tabs.tracker.find(w => w.content.model.port === server.port);
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
            callback: () => openTarget(target)
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
    openTarget(target);
    return true;
  });
}
