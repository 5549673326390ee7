/**
 * The terminal's palette items and launcher card.
 */
import type { ICommandPalette } from '@jupyterlab/apputils';
import type { ILauncher } from '@jupyterlab/launcher';
import type { TranslationBundle } from '@jupyterlab/translation';

import { PALETTE_CATEGORY } from '../constants';
import { CommandIDs } from './ids';

/**
 * Add the commands to the palette.
 */
export function addToPalette(
  palette: ICommandPalette | null,
  trans: TranslationBundle
): void {
  const category = trans.__(PALETTE_CATEGORY);
  for (const command of [
    CommandIDs.newTerminal,
    CommandIDs.attachTerminal,
    CommandIDs.splitRight,
    CommandIDs.splitDown,
    CommandIDs.closePane,
    CommandIDs.focusNextPane,
    CommandIDs.focusPreviousPane,
    CommandIDs.toggleBlocks,
    CommandIDs.askAboutBlock
  ]) {
    palette?.addItem({ command, category, args: { isPalette: true } });
  }
}

/**
 * Add the launcher card, unless terminals are off by policy (no card to
 * click that can only fail).
 */
export function addLauncher(
  launcher: ILauncher | null,
  trans: TranslationBundle,
  turnedOff: boolean
): void {
  if (!turnedOff) {
    launcher?.add({
      command: CommandIDs.newTerminal,
      category: trans.__('Other'),
      rank: 1
    });
  }
}
