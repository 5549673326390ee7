/**
 * The AI panel plugin's id and command ids.
 */

export const PLUGIN_ID = 'terax-jupyter:ai';

/**
 * Command IDs of the AI panel.
 */
export namespace CommandIDs {
  export const open = 'terax:ai-open';
  export const newSession = 'terax:ai-new-session';
  export const stop = 'terax:ai-stop';
  export const attachFile = 'terax:ai-attach-file';
  export const attachSelection = 'terax:ai-attach-selection';
  export const attachTerminalSelection = 'terax:ai-attach-terminal-selection';
  export const attachCell = 'terax:ai-attach-cell';
  export const fixError = 'terax:ai-fix-error';
  export const settings = 'terax:ai-settings';
  /** Provided by the review plugin. */
  export const review = 'terax:ai-review';
}
