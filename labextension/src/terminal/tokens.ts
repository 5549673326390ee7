/**
 * Public tokens of the Terax terminal.
 */
import type { IWidgetTracker } from '@jupyterlab/apputils';
import { Token } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';

import type { ServerMessage } from '../api/preview';

/**
 * A command block someone asks Terax about.
 */
export interface IBlockQuestion {
  /** The session the block ran in. */
  sessionId: string;
  /** The server's block id (null when the server no longer knows it). */
  blockId: number | null;
  command: string;
  cwd: string | null;
  exitCode: number | null;
  durationMs: number | null;
  /** The block's output, escapes stripped. */
  output: string;
  /** The start of the output is no longer in the scrollback. */
  truncated: boolean;
  /** The block as a Markdown snippet. */
  markdown: string;
}

/**
 * Handles "Ask Terax about this block" (the AI panel registers one).
 */
export type AskHandler = (question: IBlockQuestion) => void | Promise<void>;

/**
 * Takes a link Ctrl/Cmd+clicked in a terminal; true when it took it (else
 * the link opens in a new browser tab).
 */
export type LinkHandler = (uri: string) => boolean;

/**
 * A dev server a terminal session started (or that stopped), as its
 * stream reported it. A session shown in two panes reports it twice.
 */
export interface IServerEvent {
  sessionId: string;
  /** The terminal's name, for messages. */
  sessionName: string;
  server: ServerMessage;
}

/**
 * A pane of a terminal tab, as other plugins use it.
 */
export interface ITeraxTerminalPane {
  /**
   * The text selected in the pane's terminal ('' when none).
   */
  readonly selection: string;
  /**
   * Run a command in the pane's session, as if typed at the prompt.
   */
  runCommand(text: string): void;
}

/**
 * A terminal tab (split panes), as other plugins use it.
 */
export interface ITeraxTerminalPanel extends Widget {
  /**
   * The pane that last had the focus (the first pane before any did).
   */
  readonly activePane: ITeraxTerminalPane | null;
  /**
   * The active pane once its session is connected (a new tab connects
   * first); null when it does not connect within `timeoutMs`.
   */
  connectedPane(timeoutMs?: number): Promise<ITeraxTerminalPane | null>;
}

/**
 * The Terax terminals of the page.
 */
export interface ITeraxTerminals {
  /**
   * The terminal tabs.
   */
  readonly tracker: IWidgetTracker<ITeraxTerminalPanel>;
  /**
   * Emitted for every "Ask Terax about this block".
   */
  readonly askRequested: ISignal<ITeraxTerminals, IBlockQuestion>;
  /**
   * Take over "Ask Terax about this block"; without a handler the block is
   * copied to the clipboard as Markdown. The last handler set wins.
   */
  setAskHandler(handler: AskHandler): IDisposable;
  /**
   * Open a new terminal tab (in `cwd`, the server root when absent).
   */
  open(options?: { cwd?: string }): Promise<ITeraxTerminalPanel>;
  /**
   * Emitted when a terminal's session starts a dev server, or one stops.
   */
  readonly serverDetected: ISignal<ITeraxTerminals, IServerEvent>;
  /**
   * Take Ctrl/Cmd+clicked links (the web preview opens local ones). The
   * last handler set wins.
   */
  setLinkHandler(handler: LinkHandler): IDisposable;
}

/**
 * The Terax terminals token.
 */
export const ITeraxTerminals = new Token<ITeraxTerminals>(
  'terax-jupyter:ITeraxTerminals',
  'The Terax block terminals: their tabs and the "Ask Terax" hook.'
);
