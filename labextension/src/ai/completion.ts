/**
 * Inline completion from the Terax server: a provider for JupyterLab's
 * inline completer (ghost text in file editors and notebook cells).
 */
import type {
  CompletionHandler,
  IInlineCompletionContext,
  IInlineCompletionItem,
  IInlineCompletionList,
  IInlineCompletionProvider
} from '@jupyterlab/completer';
import type { ServerConnection } from '@jupyterlab/services';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { JSONValue } from '@lumino/coreutils';
import type { Widget } from '@lumino/widgets';

import { complete, type ICompletionRequest } from '../api/ai';
import { cursorContext, languageOf } from '../common/completion';

/**
 * The provider's identifier in the inline completer's settings
 * (`providers.terax`).
 */
export const COMPLETION_PROVIDER_ID = 'terax';

/**
 * Options of {@link TeraxCompletionProvider}.
 */
export interface ITeraxCompletionProviderOptions {
  trans: TranslationBundle;
  /**
   * Connection settings; the page's defaults when absent.
   */
  serverSettings?: ServerConnection.ISettings;
  /**
   * The call to the server (tests replace it).
   */
  complete?: typeof complete;
}

/**
 * Asks `POST ai/complete` for the text at the cursor. Lab debounces the
 * calls (`debouncerDelay` of the provider's settings); a newer request aborts
 * the one before it, so the server stops the model call it no longer needs.
 * Any failure (no model configured, a provider error, an abort) is no
 * suggestion: ghost text is no place for error messages.
 */
export class TeraxCompletionProvider implements IInlineCompletionProvider {
  constructor(options: ITeraxCompletionProviderOptions) {
    this._trans = options.trans;
    this._serverSettings = options.serverSettings;
    this._complete = options.complete ?? complete;
  }

  readonly identifier = COMPLETION_PROVIDER_ID;

  get name(): string {
    return this._trans.__('Terax AI');
  }

  get schema(): ISettingRegistry.IProperty {
    return {
      properties: {
        provider: {
          title: this._trans.__('Provider'),
          description: this._trans.__(
            'Provider id for completions; empty: the server default (AiManager.completion_provider).'
          ),
          type: 'string'
        },
        model: {
          title: this._trans.__('Model'),
          description: this._trans.__(
            'Model for completions (a small, fast one); empty: the server default.'
          ),
          type: 'string'
        }
      },
      default: {
        // Lab's inline providers are opt-in; a model call per pause in typing
        // should be too.
        enabled: false,
        debouncerDelay: 300,
        timeout: 15000,
        provider: '',
        model: ''
      }
    };
  }

  configure(settings: { [property: string]: JSONValue }): void {
    const text = (value: JSONValue | undefined): string | undefined =>
      typeof value === 'string' && value.trim() ? value.trim() : undefined;
    this._provider = text(settings.provider);
    this._model = text(settings.model);
  }

  async fetch(
    request: CompletionHandler.IRequest,
    context: IInlineCompletionContext
  ): Promise<IInlineCompletionList<IInlineCompletionItem>> {
    this._controller?.abort();
    const controller = new AbortController();
    this._controller = controller;
    const body: ICompletionRequest = cursorContext(
      request.text,
      request.offset
    );
    const path = pathOf(context.widget);
    const language = languageOf(request.mimeType);
    if (path) {
      body.path = path;
    }
    if (language) {
      body.language = language;
    }
    if (this._provider) {
      body.provider = this._provider;
    }
    if (this._model) {
      body.model = this._model;
    }
    try {
      const answer = await this._complete(body, {
        signal: controller.signal,
        settings: this._serverSettings
      });
      if (controller.signal.aborted || !answer.text.trim()) {
        return { items: [] };
      }
      return { items: [{ insertText: answer.text }] };
    } catch {
      return { items: [] };
    } finally {
      if (this._controller === controller) {
        this._controller = null;
      }
    }
  }

  /**
   * Abort the request in flight, if any.
   */
  cancel(): void {
    this._controller?.abort();
    this._controller = null;
  }

  private _trans: TranslationBundle;
  private _serverSettings?: ServerConnection.ISettings;
  private _complete: typeof complete;
  private _controller: AbortController | null = null;
  private _provider: string | undefined;
  private _model: string | undefined;
}

/**
 * The path of the document a widget shows (file editor, notebook), if any.
 */
function pathOf(widget: Widget | undefined): string | undefined {
  const context = (widget as { context?: { path?: unknown } } | undefined)
    ?.context;
  return typeof context?.path === 'string' ? context.path : undefined;
}
