/**
 * The source-control commands: show the panel, History, commit, switch
 * branch, fetch / pull / push, refresh, trust.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { ICommandPalette } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';

import { commitIcon, gitIcon, type GitModel, type GitPanel } from '../../git';
import { PALETTE_CATEGORY } from '../constants';
import type { IHistoryTabs } from './history';
import { CommandIDs } from './ids';

/**
 * Why changes or pushes are off (translated), or null.
 */
export interface IGitRestrictions {
  readOnly: string | null;
  pushOff: string | null;
}

/**
 * Add the commands.
 */
export function addCommands(
  app: JupyterFrontEnd,
  trans: TranslationBundle,
  model: GitModel,
  panel: GitPanel,
  history: IHistoryTabs,
  restrictions: IGitRestrictions
): void {
  const { commands } = app;
  const { readOnly, pushOff } = restrictions;
  const showPanel = (): void => {
    app.shell.activateById(panel.id);
  };

  commands.addCommand(CommandIDs.openPanel, {
    label: trans.__('Git'),
    caption: trans.__('Show the Git panel'),
    icon: args => (args.isPalette ? undefined : gitIcon),
    execute: () => {
      showPanel();
      panel.focusCommit();
    }
  });
  commands.addCommand(CommandIDs.history, {
    label: trans.__('Git History'),
    caption: trans.__('Show the commit graph of the repository'),
    icon: args => (args.isPalette ? undefined : commitIcon),
    describedBy: {
      args: {
        type: 'object',
        properties: {
          path: {
            type: 'string',
            description: 'Absolute path of the repository work tree.'
          }
        }
      }
    },
    execute: args =>
      history.open(typeof args.path === 'string' ? args.path : undefined)
  });
  commands.addCommand(CommandIDs.commit, {
    label: trans.__('Commit…'),
    caption:
      readOnly ?? trans.__('Write a commit message for the staged changes'),
    isEnabled: () => !readOnly,
    execute: () => {
      showPanel();
      panel.focusCommit();
    }
  });
  commands.addCommand(CommandIDs.switchBranch, {
    label: trans.__('Switch Branch…'),
    caption: readOnly ?? trans.__('Switch to another branch or create one'),
    isEnabled: () => !readOnly && model.state === 'ready',
    execute: () => {
      showPanel();
      panel.openSwitcher();
    }
  });
  const remoteCommand = (
    id: string,
    operation: 'fetch' | 'pull' | 'push',
    label: string
  ): void => {
    const off = readOnly ?? (operation === 'push' ? pushOff : null);
    commands.addCommand(id, {
      label: off ? trans.__('%1 (%2)', label, off.replace(/\.$/, '')) : label,
      caption: off ?? undefined,
      isEnabled: () =>
        !off && model.state === 'ready' && !model.isBusy(operation),
      execute: () => model.remote(operation)
    });
  };
  remoteCommand(CommandIDs.fetch, 'fetch', trans.__('Git Fetch'));
  remoteCommand(CommandIDs.pull, 'pull', trans.__('Git Pull'));
  remoteCommand(CommandIDs.push, 'push', trans.__('Git Push'));
  commands.addCommand(CommandIDs.refresh, {
    label: trans.__('Refresh Git Status'),
    execute: () => model.refresh(true)
  });
  commands.addCommand(CommandIDs.trust, {
    label: () =>
      model.trust?.trusted
        ? trans.__('Stop Trusting This Repository')
        : trans.__('Trust This Repository…'),
    caption: trans.__(
      'Whether git may run the hooks and programs this repository names'
    ),
    isEnabled: () =>
      model.state === 'ready' &&
      !!model.trust?.can_change &&
      !model.isBusy('trust'),
    execute: () => model.setTrusted(!model.trust?.trusted)
  });
}

/**
 * Add the commands to the palette.
 */
export function addToPalette(
  palette: ICommandPalette | null,
  trans: TranslationBundle
): void {
  for (const command of [
    CommandIDs.openPanel,
    CommandIDs.history,
    CommandIDs.commit,
    CommandIDs.switchBranch,
    CommandIDs.fetch,
    CommandIDs.pull,
    CommandIDs.push,
    CommandIDs.refresh,
    CommandIDs.trust
  ]) {
    palette?.addItem({ command, category: trans.__(PALETTE_CATEGORY) });
  }
}
