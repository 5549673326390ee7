/**
 * The `ITeraxTerminals` service and the "Ask Terax about this block"
 * question built from a block.
 */
import type { WidgetTracker } from '@jupyterlab/apputils';
import type { ServerConnection } from '@jupyterlab/services';
import { DisposableDelegate, type IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { getBlockText } from '../api/pty';
import { blockMarkdown } from '../common/terminal/markdown';
import type { BlockEntry } from './blocks';
import type { TerminalPane } from './pane';
import type { TerminalPanel } from './panel';
import type {
  AskHandler,
  IBlockQuestion,
  IServerEvent,
  ITeraxTerminals,
  LinkHandler
} from './tokens';

/**
 * The service other plugins get.
 */
export class TerminalService implements ITeraxTerminals {
  constructor(
    readonly tracker: WidgetTracker<TerminalPanel>,
    private readonly _open: (args: { cwd?: string }) => Promise<TerminalPanel>
  ) {
    tracker.widgetAdded.connect((_, panel) => {
      const wire = (): void => panel.panes.forEach(pane => this._wire(pane));
      wire();
      panel.stateChanged.connect(wire);
    });
  }

  get serverDetected(): ISignal<this, IServerEvent> {
    return this._serverDetected;
  }

  setLinkHandler(handler: LinkHandler): IDisposable {
    this._linkHandler = handler;
    return new DisposableDelegate(() => {
      if (this._linkHandler === handler) {
        this._linkHandler = null;
      }
    });
  }

  get askRequested(): ISignal<this, IBlockQuestion> {
    return this._askRequested;
  }

  setAskHandler(handler: AskHandler): IDisposable {
    this._handler = handler;
    return new DisposableDelegate(() => {
      if (this._handler === handler) {
        this._handler = null;
      }
    });
  }

  open(options?: { cwd?: string }): Promise<TerminalPanel> {
    return this._open({ cwd: options?.cwd });
  }

  /**
   * Tell listeners; true when a handler took the question.
   */
  async ask(question: IBlockQuestion): Promise<boolean> {
    this._askRequested.emit(question);
    if (this._handler) {
      await this._handler(question);
      return true;
    }
    return false;
  }

  /**
   * A pane's links and its session's dev servers come through this service.
   */
  private _wire(pane: TerminalPane): void {
    if (this._wired.has(pane)) {
      return;
    }
    this._wired.add(pane);
    pane.linkHandler = uri => this._linkHandler?.(uri) ?? false;
    pane.model.serverDetected.connect((model, server) => {
      this._serverDetected.emit({
        sessionId: model.id,
        sessionName: model.name,
        server
      });
    });
  }

  private _handler: AskHandler | null = null;
  private _linkHandler: LinkHandler | null = null;
  private readonly _wired = new WeakSet<TerminalPane>();
  private readonly _askRequested = new Signal<this, IBlockQuestion>(this);
  private readonly _serverDetected = new Signal<this, IServerEvent>(this);
}

/**
 * A block as a question: its record and output from the server when it
 * still has them, else what the pane's terminal shows.
 */
export async function blockQuestion(
  pane: TerminalPane | null,
  sessionId: string,
  blockId: number | null,
  entry: BlockEntry | null,
  settings: ServerConnection.ISettings
): Promise<IBlockQuestion> {
  const blocks = pane?.blocks ?? null;
  let command = entry?.command ?? '';
  let cwd = entry?.cwd ?? null;
  let exitCode = entry?.exitCode ?? null;
  let durationMs = entry && blocks ? blocks.durationOf(entry) : null;
  let output = entry && blocks ? blocks.bufferText(entry) : '';
  let truncated = false;
  if (blockId !== null) {
    try {
      const text = await getBlockText(sessionId, blockId, 'plain', settings);
      command = text.block.command;
      cwd = text.block.cwd;
      exitCode = text.block.exit_code;
      durationMs = text.block.duration_ms;
      output = text.text;
      truncated = text.truncated;
    } catch (error) {
      if (!entry) {
        throw error;
      }
    }
  }
  return {
    sessionId,
    blockId,
    command,
    cwd,
    exitCode,
    durationMs,
    output,
    truncated,
    markdown: blockMarkdown({
      command,
      output,
      cwd,
      exitCode,
      durationMs,
      truncated
    })
  };
}
