/**
 * The header of a command block: a chip at the right end of the block's
 * prompt line (an xterm decoration element) with the folder, the duration,
 * the exit badge and, on hover, the block's actions.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { copyIcon, LabIcon, refreshIcon } from '@jupyterlab/ui-components';

import { formatDuration } from '../common/listnav';
import { type BlockStatus, CSS } from './css';
import { askTeraxIcon, copyOutputIcon } from './icons';

/**
 * Actions of a block header.
 */
export type BlockAction = 'copy-command' | 'copy-output' | 'rerun' | 'ask';

/**
 * What a header shows.
 */
export interface IHeaderState {
  command: string;
  status: BlockStatus;
  exitCode: number | null | undefined;
  cwd: string | null;
  durationMs: number | null;
  selected: boolean;
}

/**
 * Fill a decoration element with the header's parts.
 */
export function buildHeader(
  element: HTMLElement,
  trans: TranslationBundle,
  onAction: (action: BlockAction) => void
): void {
  element.classList.add(CSS.header);
  element.replaceChildren();
  const chip = document.createElement('div');
  chip.className = CSS.chip;
  const actions = document.createElement('span');
  actions.className = CSS.actions;
  const button = (
    action: BlockAction,
    icon: LabIcon,
    label: string
  ): HTMLButtonElement => {
    const node = document.createElement('button');
    node.type = 'button';
    node.className = CSS.action;
    node.title = label;
    node.setAttribute('aria-label', label);
    node.dataset.action = action;
    icon.element({ container: node, tag: 'span' });
    node.addEventListener('mousedown', event => {
      // Keep xterm from starting a selection under the button.
      event.stopPropagation();
      event.preventDefault();
    });
    node.addEventListener('click', event => {
      event.stopPropagation();
      onAction(action);
    });
    return node;
  };
  actions.append(
    button('copy-command', copyIcon, trans.__('Copy Command')),
    button('copy-output', copyOutputIcon, trans.__('Copy Output')),
    button('rerun', refreshIcon, trans.__('Run Again')),
    button('ask', askTeraxIcon, trans.__('Ask Terax About This Block'))
  );
  const cwd = document.createElement('span');
  cwd.className = CSS.meta;
  cwd.dataset.field = 'cwd';
  const duration = document.createElement('span');
  duration.className = CSS.meta;
  duration.dataset.field = 'duration';
  const badge = document.createElement('span');
  badge.className = CSS.badge;
  chip.append(actions, cwd, duration, badge);
  element.append(chip);
}

/**
 * Show a block's state in its header.
 */
export function renderHeader(
  element: HTMLElement,
  state: IHeaderState,
  trans: TranslationBundle
): void {
  const { exitCode, status, cwd } = state;
  element.dataset.status = status;
  element.dataset.command = state.command;
  element.dataset.exitCode =
    exitCode === undefined || exitCode === null ? '' : String(exitCode);
  element.classList.toggle(CSS.selected, state.selected);
  const cwdNode = element.querySelector<HTMLElement>('[data-field="cwd"]');
  if (cwdNode) {
    cwdNode.textContent = cwd ? shortFolder(cwd) : '';
    cwdNode.title = cwd ?? '';
    cwdNode.hidden = !cwd;
  }
  const durationNode = element.querySelector<HTMLElement>(
    '[data-field="duration"]'
  );
  if (durationNode) {
    const ms = state.durationMs;
    durationNode.textContent = ms !== null ? formatDuration(ms) : '';
    durationNode.hidden = ms === null;
  }
  const badge = element.querySelector<HTMLElement>(`.${CSS.badge}`);
  if (badge) {
    badge.dataset.status = status;
    switch (status) {
      case 'running':
        badge.textContent = trans.__('running');
        badge.title = trans.__('The command is running');
        break;
      case 'unknown':
        badge.textContent = '?';
        badge.title = trans.__('The exit code is not known');
        break;
      default:
        badge.textContent = String(exitCode);
        badge.title = trans.__('Exit code %1', String(exitCode));
    }
  }
}

/**
 * Keep the chip off the command text: drop the folder, then the duration,
 * then shrink the badge to a dot, then hide it, as the prompt line's text
 * (`usedColumns` of `columns`) reaches under it. The hover actions stay.
 */
export function fitHeader(
  element: HTMLElement,
  usedColumns: number,
  columns: number
): void {
  const chip = element.firstElementChild as HTMLElement | null;
  const width = element.clientWidth;
  if (!chip || !(width > 0) || !(columns > 0)) {
    return;
  }
  const textEnd = (usedColumns / columns) * width;
  // The chip sits 14px from the right edge (CSS) and keeps 8px off the text.
  const fits = (): boolean => width - 14 - chip.offsetWidth >= textEnd + 8;
  // 'none': the line is full; the gutter bar still shows the status.
  for (const level of ['full', 'compact', 'badge', 'dot', 'none']) {
    element.dataset.fit = level;
    if (fits()) {
      break;
    }
  }
}

/**
 * Put the header's chip `rows` rows below the header line (0: on it), on the
 * last row of a command line that wrapped.
 */
export function placeHeaderChip(element: HTMLElement, rows: number): void {
  const chip = element.firstElementChild as HTMLElement | null;
  if (!chip) {
    return;
  }
  element.dataset.rows = String(rows);
  chip.style.transform =
    rows > 0 ? `translateY(${rows * element.offsetHeight}px)` : '';
}

/**
 * The last two segments of a folder, for a compact header.
 */
export function shortFolder(path: string): string {
  const parts = path.split('/').filter(Boolean);
  if (parts.length <= 2) {
    return path;
  }
  return '…/' + parts.slice(-2).join('/');
}
