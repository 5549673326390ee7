/**
 * The terminal plugin's id and command ids.
 */

export const PLUGIN_ID = 'terax-jupyter:terminal';

/**
 * Command IDs of the Terax terminal.
 */
export namespace CommandIDs {
  export const newTerminal = 'terax:new-terminal';
  export const attachTerminal = 'terax:attach-terminal';
  export const splitRight = 'terax:split-right';
  export const splitDown = 'terax:split-down';
  export const closePane = 'terax:close-pane';
  export const detachPane = 'terax:detach-pane';
  export const focusNextPane = 'terax:focus-next-pane';
  export const focusPreviousPane = 'terax:focus-previous-pane';
  export const find = 'terax:find-in-terminal';
  export const previousBlock = 'terax:previous-block';
  export const nextBlock = 'terax:next-block';
  export const toggleBlocks = 'terax:toggle-blocks';
  export const askAboutBlock = 'terax:ask-about-block';
  export const copyBlockOutput = 'terax:copy-block-output';
  export const rerunBlock = 'terax:rerun-block';
  export const copy = 'terax:copy';
  export const paste = 'terax:paste';
  export const clear = 'terax:clear';
}
