/**
 * Plugin of Terax inline completion: registers the server-backed provider
 * with JupyterLab's inline completer (off until enabled in its settings).
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICompletionProviderManager } from '@jupyterlab/completer';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { TeraxCompletionProvider } from '../ai/completion';
import { TRANSLATION_DOMAIN } from './constants';

/**
 * The inline completion plugin.
 */
export const aiCompletionPlugin: JupyterFrontEndPlugin<void> = {
  id: 'terax-jupyter:ai-completion',
  description:
    'Inline completion (ghost text) from the model configured on the Terax server.',
  autoStart: true,
  requires: [ICompletionProviderManager],
  optional: [ITranslator],
  activate: (
    app: JupyterFrontEnd,
    manager: ICompletionProviderManager,
    translator: ITranslator | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    manager.registerInlineProvider(
      new TeraxCompletionProvider({
        trans,
        serverSettings: app.serviceManager.serverSettings
      })
    );
  }
};
