/**
 * Plugin of Search in Files: the left-sidebar panel and `terax:search-in-files`.
 */
import {
  ILabShell,
  ILayoutRestorer,
  type JupyterFrontEnd,
  type JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, showErrorMessage } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import type { IDocumentWidget } from '@jupyterlab/docregistry';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { searchIcon } from '@jupyterlab/ui-components';
import type { Widget } from '@lumino/widgets';

import { grep } from '../api/fs';
import {
  editorOf,
  ISearchInFiles,
  openAtMatch,
  SearchModel,
  SearchPanel
} from '../searchfiles';
import { FileIconResolver } from '../ui/fileicon';
import { PALETTE_CATEGORY, TRANSLATION_DOMAIN } from './constants';

/**
 * Command IDs of Search in Files.
 */
export namespace CommandIDs {
  export const searchInFiles = 'terax:search-in-files';
}

const PLUGIN_ID = 'terax-jupyter:search-in-files';

/**
 * The Search in Files plugin.
 */
export const searchInFilesPlugin: JupyterFrontEndPlugin<ISearchInFiles> = {
  id: PLUGIN_ID,
  description: 'Search the contents of every file in the workspace.',
  autoStart: true,
  requires: [IDocumentManager],
  optional: [
    ICommandPalette,
    ILabShell,
    ILayoutRestorer,
    ITranslator,
    ISettingRegistry
  ],
  provides: ISearchInFiles,
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager,
    palette: ICommandPalette | null,
    labShell: ILabShell | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null,
    settingRegistry: ISettingRegistry | null
  ): ISearchInFiles => {
    const resolvedTranslator = translator ?? nullTranslator;
    const trans = resolvedTranslator.load(TRANSLATION_DOMAIN);
    const serverSettings = app.serviceManager.serverSettings;

    const model = new SearchModel({
      grep: (query, signal) => grep(query, { signal, settings: serverSettings })
    });
    const panel = new SearchPanel({
      model,
      trans,
      translator: resolvedTranslator,
      icons: new FileIconResolver(app.docRegistry),
      icon: searchIcon,
      onOpenMatch: async (path, match) => {
        try {
          await openAtMatch(docManager, path, { match });
        } catch (error) {
          await showErrorMessage(
            trans.__('Could not open %1', path),
            error instanceof Error ? error : String(error)
          );
        }
      }
    });
    app.shell.add(panel, 'left', { rank: 150, type: 'Search in Files' });
    restorer?.add(panel, panel.id);

    const show = (query?: string): void => {
      app.shell.activateById(panel.id);
      if (query) {
        model.update({ query }, true);
      }
      panel.focusQuery();
    };

    app.commands.addCommand(CommandIDs.searchInFiles, {
      label: trans.__('Search in Files…'),
      caption: trans.__('Search the contents of the files in the workspace'),
      describedBy: {
        args: {
          type: 'object',
          properties: {
            query: { type: 'string', description: 'Text to search for.' }
          }
        }
      },
      execute: args => {
        const query =
          typeof args.query === 'string'
            ? args.query
            : selectedText(labShell?.currentWidget ?? app.shell.currentWidget);
        show(query || undefined);
      }
    });
    palette?.addItem({
      command: CommandIDs.searchInFiles,
      category: trans.__(PALETTE_CATEGORY)
    });

    if (settingRegistry) {
      void settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = (): void => {
            model.limits = {
              maxResults: settings.get('maxResults').composite as number,
              maxPerFile: settings.get('maxPerFile').composite as number
            };
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason => {
          console.error(`Could not load the settings of ${PLUGIN_ID}.`, reason);
        });
    }

    return { show };
  }
};

/**
 * The text selected on one line of the current editor, to search for it.
 */
function selectedText(widget: Widget | null): string {
  const content = widget as Partial<IDocumentWidget> | null;
  if (!content?.content || !content.context) {
    return '';
  }
  const editor = editorOf(content as IDocumentWidget);
  if (!editor) {
    return '';
  }
  const { start, end } = editor.getSelection();
  if (start.line !== end.line || start.column === end.column) {
    return '';
  }
  const line = editor.getLine(start.line) ?? '';
  const from = Math.min(start.column, end.column);
  const to = Math.max(start.column, end.column);
  return line.slice(from, to);
}
