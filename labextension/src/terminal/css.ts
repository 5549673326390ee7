/**
 * CSS class names of the Terax terminal.
 */

/**
 * CSS classes of the terminal panel, its panes and their parts.
 */
export namespace CSS {
  export const panel = 'jp-TeraxTerminal';
  export const split = 'jp-TeraxTerminal-split';
  export const pane = 'jp-TeraxTerminal-pane';
  export const activePane = 'jp-mod-activePane';
  export const multiPane = 'jp-mod-multiPane';
  export const body = 'jp-TeraxTerminal-body';
  export const host = 'jp-TeraxTerminal-xterm';
  export const gutter = 'jp-TeraxTerminal-gutter';
  export const gutterBar = 'jp-TeraxTerminal-gutterBar';
  export const status = 'jp-TeraxTerminal-status';
  export const dropTarget = 'jp-mod-dropTarget';
  export const header = 'jp-TeraxBlock-header';
  export const chip = 'jp-TeraxBlock-chip';
  export const badge = 'jp-TeraxBlock-badge';
  export const meta = 'jp-TeraxBlock-meta';
  export const actions = 'jp-TeraxBlock-actions';
  export const action = 'jp-TeraxBlock-action';
  export const selected = 'jp-mod-selected';
  export const flash = 'jp-mod-flash';
  export const input = 'jp-TeraxInput';
  export const inputPrompt = 'jp-TeraxInput-prompt';
  export const inputEditor = 'jp-TeraxInput-editor';
  export const inputHint = 'jp-TeraxInput-hint';
  export const ghost = 'jp-TeraxInput-ghost';
  export const findBar = 'jp-TeraxFind';
  export const findInput = 'jp-TeraxFind-input';
  export const findCount = 'jp-TeraxFind-count';
  export const findButton = 'jp-TeraxFind-button';
  export const outline = 'jp-TeraxOutline';
  export const outlineHeader = 'jp-TeraxOutline-header';
  export const outlineList = 'jp-TeraxOutline-list';
  export const outlineItem = 'jp-TeraxOutline-item';
  export const outlineRow = 'jp-TeraxOutline-row';
  export const outlineCaret = 'jp-TeraxOutline-caret';
  export const outlineCommand = 'jp-TeraxOutline-command';
  export const outlineOutput = 'jp-TeraxOutline-output';
  export const outlineEmpty = 'jp-TeraxOutline-empty';
  export const banner = 'jp-TeraxTerminal-banner';
}

/**
 * The `data-status` of a block: how its command ended.
 */
export type BlockStatus = 'running' | 'success' | 'failure' | 'unknown';

/**
 * The status of an exit code (undefined: still running).
 */
export function blockStatus(exitCode: number | null | undefined): BlockStatus {
  if (exitCode === undefined) {
    return 'running';
  }
  if (exitCode === null) {
    return 'unknown';
  }
  return exitCode === 0 ? 'success' : 'failure';
}
