/**
 * Plugin of Terax inline completion: registers the server-backed provider
 * with JupyterLab's inline completer (off until enabled in its settings),
 * and tells once, in a notification, each new reason it stops working.
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { ICompletionProviderManager } from '@jupyterlab/completer';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

import { completionState, TeraxCompletionProvider } from '../ai/completion';
import { TRANSLATION_DOMAIN } from './constants';

/**
 * The command that shows the AI panel's settings (plugins/ai.ts).
 */
const AI_SETTINGS_COMMAND = 'terax:ai-settings';

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
    // Once per cause, not per keystroke: the AI settings view keeps showing it.
    let told = '';
    completionState.changed.connect((_, status) => {
      if (status.state !== 'off' && status.state !== 'error') {
        told = '';
        return;
      }
      if (status.text === told) {
        return;
      }
      told = status.text;
      Notification.warning(trans.__(status.text), {
        autoClose: 8000,
        actions: app.commands.hasCommand(AI_SETTINGS_COMMAND)
          ? [
              {
                label: trans.__('AI settings'),
                callback: () => void app.commands.execute(AI_SETTINGS_COMMAND)
              }
            ]
          : []
      });
    });
  }
};
