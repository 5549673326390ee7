/**
 * Public tokens of the Terax terminal.
 */
import type { IWidgetTracker } from '@jupyterlab/apputils';
import { Token } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';

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
 * The Terax terminals of the page.
 */
export interface ITeraxTerminals {
  /**
   * The terminal tabs.
   */
  readonly tracker: IWidgetTracker<Widget>;
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
  open(options?: { cwd?: string }): Promise<Widget>;
}

/**
 * The Terax terminals token.
 */
export const ITeraxTerminals = new Token<ITeraxTerminals>(
  'terax-jupyter:ITeraxTerminals',
  'The Terax block terminals: their tabs and the "Ask Terax" hook.'
);
