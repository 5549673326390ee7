/**
 * Where a key pressed in the terminal goes: to the program, to the browser
 * and Lab (copy, paste, Lab's shortcuts), or to the input line.
 */

/**
 * The parts of a keyboard event the decision needs.
 */
export interface IKeyPress {
  key: string;
  type: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
}

/**
 * The terminal's state for the decision.
 */
export interface IKeyContext {
  /** Text is selected in the terminal. */
  hasSelection: boolean;
  /** A full-screen program owns the screen (it gets nearly every key). */
  fullScreen: boolean;
  /** The "paste with Ctrl+V" setting. */
  pasteWithCtrlV: boolean;
  /** The input line shows (the shell waits at its prompt). */
  inputShown: boolean;
  /** The user handed the prompt to the shell (Ctrl+R) until the next command. */
  rawAtPrompt: boolean;
}

/**
 * `terminal`: xterm sends it to the program; `browser`: xterm leaves it to
 * the browser and Lab's shortcuts; `input`: it types into the input line.
 */
export type KeyRoute = 'terminal' | 'browser' | 'input';

/**
 * Decide where a key goes.
 */
export function routeKey(event: IKeyPress, context: IKeyContext): KeyRoute {
  const accel = event.ctrlKey || event.metaKey;
  const key = event.key.toLowerCase();
  const { fullScreen } = context;
  if (accel && !event.altKey) {
    if (key === 'c' && !event.shiftKey && context.hasSelection) {
      return 'browser'; // copy the selection
    }
    if (
      key === 'v' &&
      (event.shiftKey || (!fullScreen && context.pasteWithCtrlV))
    ) {
      return 'browser'; // the browser pastes into xterm
    }
    if (event.shiftKey) {
      return 'browser'; // Lab's shortcuts: the palette, split, ...
    }
    if (!fullScreen && ['f', 'arrowup', 'arrowdown'].includes(key)) {
      return 'browser'; // find, previous/next block
    }
  }
  if (
    event.altKey &&
    !accel &&
    !fullScreen &&
    (key === 'arrowleft' || key === 'arrowright')
  ) {
    return 'browser'; // previous/next pane
  }
  if (
    event.type === 'keydown' &&
    context.inputShown &&
    !context.rawAtPrompt &&
    event.key.length === 1 &&
    !event.ctrlKey &&
    !event.altKey &&
    !event.metaKey
  ) {
    return 'input';
  }
  return 'terminal';
}
