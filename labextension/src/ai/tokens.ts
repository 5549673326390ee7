/**
 * Public token of the AI panel.
 */
import { Token } from '@lumino/coreutils';

import type { Attachment } from '../common/ai/chat';

/**
 * The AI side panel, for features that hand it context.
 */
export interface ITeraxAi {
  /**
   * Show the panel and focus the prompt.
   */
  open(): void;
  /**
   * Attach context (a file, a selection, a terminal block) to the next
   * prompt and show the panel.
   */
  attach(attachment: Attachment): void;
  /**
   * Start a new session and show it.
   */
  newSession(): Promise<void>;
}

/**
 * The AI panel token.
 */
export const ITeraxAi = new Token<ITeraxAi>(
  'terax-jupyter:ITeraxAi',
  'The Terax AI side panel: open it and attach context to the next prompt.'
);
