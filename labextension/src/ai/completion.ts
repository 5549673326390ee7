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
import { type ISignal, Signal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';

import { complete, type ICompletionRequest } from '../api/ai';
import { TeraxAPIError } from '../api/request';
import {
  completionFailure,
  cursorContext,
  type ICompletionStatus,
  languageOf
} from '../common/ai/completion';

/**
 * The last known state of inline completion, shared by the provider (which
 * sets it) and the AI settings view and notifications (which show it).
 */
export class CompletionState {
  get status(): ICompletionStatus {
    return this._status;
  }

  get changed(): ISignal<this, ICompletionStatus> {
    return this._changed;
  }

  /**
   * The provider and model the chat uses now (the AI panel tells); sent with
   * each request so a model picked for chat is the one completions use unless
   * one is set for completion.
   */
  get chat(): { provider: string; model: string } {
    return this._chat;
  }

  setChat(provider: string, model: string): void {
    this._chat = { provider, model };
  }

  set(status: ICompletionStatus): void {
    const old = this._status;
    if (
      old.state === status.state &&
      old.text === status.text &&
      old.detail === status.detail
    ) {
      return;
    }
    this._status = status;
    this._changed.emit(status);
  }

  private _status: ICompletionStatus = {
    state: 'unknown',
    text: 'Completion: not used yet',
    detail: ''
  };
  private _chat = { provider: '', model: '' };
  private readonly _changed = new Signal<this, ICompletionStatus>(this);
}

/**
 * The one state of this page (the completion and AI panel plugins share it).
 */
export const completionState = new CompletionState();

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
  /**
   * Where the outcome of each request is told (the page's shared state
   * when absent).
   */
  state?: CompletionState;
}

/**
 * Asks `POST ai/complete` for the text at the cursor. Lab debounces the
 * calls (`debouncerDelay` of the provider's settings); a newer request aborts
 * the one before it, so the server stops the model call it no longer needs.
 * A failure is no suggestion (ghost text is no place for error messages);
 * why it failed goes to the shared {@link CompletionState}, which the AI
 * settings view shows and a notification tells once per new cause.
 */
export class TeraxCompletionProvider implements IInlineCompletionProvider {
  constructor(options: ITeraxCompletionProviderOptions) {
    this._trans = options.trans;
    this._serverSettings = options.serverSettings;
    this._complete = options.complete ?? complete;
    this._state = options.state ?? completionState;
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
    if (settings.enabled === false) {
      this._state.set({
        state: 'disabled',
        text: 'Completion off: not enabled',
        detail:
          'Enable the Terax AI provider in Settings › Inline Completer to get suggestions as you type.'
      });
    } else if (this._state.status.state === 'disabled') {
      this._state.set({
        state: 'unknown',
        text: 'Completion: on, not used yet',
        detail: ''
      });
    }
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
    const chat = this._state.chat;
    if (chat.provider && chat.model) {
      body.chat_provider = chat.provider;
      body.chat_model = chat.model;
    }
    try {
      const answer = await this._complete(body, {
        signal: controller.signal,
        settings: this._serverSettings
      });
      this._state.set({
        state: 'ok',
        text: `Completion: ${answer.provider} · ${answer.model}`,
        detail: `${answer.mode === 'fim' ? 'fill-in-the-middle' : 'chat'}, ${Math.round(answer.latency_ms)} ms`
      });
      if (controller.signal.aborted || !answer.text.trim()) {
        return { items: [] };
      }
      return { items: [{ insertText: answer.text }] };
    } catch (error) {
      if (!controller.signal.aborted) {
        this._state.set(failureOf(error));
      }
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
  private _state: CompletionState;
  private _controller: AbortController | null = null;
  private _provider: string | undefined;
  private _model: string | undefined;
}

/**
 * The status of a failed request: the server's reason, or no answer at all.
 */
function failureOf(error: unknown): ICompletionStatus {
  if (error instanceof TeraxAPIError) {
    return completionFailure(
      error.reason,
      error.message,
      error.response.status
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return completionFailure('', message, 0);
}

/**
 * The path of the document a widget shows (file editor, notebook), if any.
 */
function pathOf(widget: Widget | undefined): string | undefined {
  const context = (widget as { context?: { path?: unknown } } | undefined)
    ?.context;
  return typeof context?.path === 'string' ? context.path : undefined;
}
