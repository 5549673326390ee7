/**
 * Plugin of Go to File: the `terax:go-to-file` command (Ctrl+P) and its overlay.
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { searchFiles } from '../api/fs';
import { GoToFileModel, GoToFileOverlay, IGoToFile } from '../gotofile';
import { FileIconResolver } from '../ui/fileicon';
import { PALETTE_CATEGORY, TRANSLATION_DOMAIN } from './constants';

/**
 * Command IDs of Go to File.
 */
export namespace CommandIDs {
  export const goToFile = 'terax:go-to-file';
}

const PLUGIN_ID = 'terax-jupyter:go-to-file';

/**
 * The Go to File plugin.
 */
export const goToFilePlugin: JupyterFrontEndPlugin<IGoToFile> = {
  id: PLUGIN_ID,
  description: 'Quick open: find a file by name (Ctrl+P) and open it.',
  autoStart: true,
  requires: [IDocumentManager],
  optional: [ICommandPalette, ITranslator, ISettingRegistry],
  provides: IGoToFile,
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager,
    palette: ICommandPalette | null,
    translator: ITranslator | null,
    settingRegistry: ISettingRegistry | null
  ): IGoToFile => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const serverSettings = app.serviceManager.serverSettings;
    let limit = 50;

    const model = new GoToFileModel({
      search: (query, signal) =>
        searchFiles(query, { limit, signal, settings: serverSettings })
    });
    const overlay = new GoToFileOverlay({
      model,
      trans,
      icons: new FileIconResolver(app.docRegistry),
      limit: () => limit,
      onOpenFile: path => {
        docManager.openOrReveal(path);
      }
    });

    app.commands.addCommand(CommandIDs.goToFile, {
      label: trans.__('Go to File…'),
      caption: trans.__('Find a file by name and open it'),
      describedBy: {
        args: {
          type: 'object',
          properties: {
            query: { type: 'string', description: 'Text to search for.' }
          }
        }
      },
      execute: args => {
        const query = typeof args.query === 'string' ? args.query : undefined;
        overlay.open(query);
      }
    });
    palette?.addItem({
      command: CommandIDs.goToFile,
      category: trans.__(PALETTE_CATEGORY)
    });

    if (settingRegistry) {
      void settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = (): void => {
            limit = settings.get('maxResults').composite as number;
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason => {
          console.error(`Could not load the settings of ${PLUGIN_ID}.`, reason);
        });
    }

    return {
      open: query => overlay.open(query),
      close: () => overlay.dismiss(),
      get isOpen() {
        return overlay.isOpen;
      }
    };
  }
};
