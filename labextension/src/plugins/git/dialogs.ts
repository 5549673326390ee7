/**
 * What the Git panel asks the user: the titles of its error messages, and
 * the confirmations before trusting a repository or discarding changes.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import type { IGitDiscardConfirmation, IGitTrust } from '../../api/git';
import type { OperationTitles } from '../../git';

/**
 * The title of each operation's error message.
 */
export function operationTitles(trans: TranslationBundle): OperationTitles {
  return {
    stage: trans.__('Could not stage'),
    unstage: trans.__('Could not unstage'),
    discard: trans.__('Could not discard'),
    commit: trans.__('Could not commit'),
    fetch: trans.__('Fetch failed'),
    pull: trans.__('Pull failed'),
    push: trans.__('Push failed'),
    checkout: trans.__('Could not switch branch'),
    branch: trans.__('Could not create the branch'),
    refresh: trans.__('Could not read the repository'),
    diff: trans.__('Could not show the diff'),
    trust: trans.__('Could not change the trust of the repository'),
    resolve: trans.__('Could not resolve the conflict'),
    operation: trans.__('Could not do that'),
    identity: trans.__('Could not save your identity')
  };
}

/**
 * What trusting lets run, said before the user decides (as a workspace
 * trust prompt does); true when the user trusts the repository.
 */
export async function confirmTrust(
  trans: TranslationBundle,
  root: string,
  trust: IGitTrust
): Promise<boolean> {
  const named = [
    ...trust.hooks.map(hook => trans.__('hook: %1', hook)),
    ...trust.programs.map(p => `${p.key} = ${p.value}`)
  ];
  const shown = named.slice(0, 12);
  const body = React.createElement(
    'div',
    { className: 'jp-TeraxGit-confirm jp-TeraxGit-trustDialog' },
    React.createElement(
      'p',
      null,
      trans.__(
        'Trusting %1 lets git run the programs this repository chooses: its hooks (when you commit, push, pull or switch branch), the filter drivers and fsmonitor its own configuration names (also when its status is read), and the signing, ssh and credential programs set in its configuration.',
        root
      )
    ),
    shown.length
      ? React.createElement(
          'ul',
          null,
          ...shown.map(item => React.createElement('li', { key: item }, item)),
          named.length > shown.length
            ? React.createElement(
                'li',
                { key: '…' },
                trans.__('and %1 more', named.length - shown.length)
              )
            : null
        )
      : null,
    React.createElement(
      'p',
      { className: 'jp-TeraxGit-confirm-warning' },
      trans.__(
        'Trust only a repository whose files and .git folder you control: a cloned project or an unpacked archive can name any program.'
      )
    )
  );
  const result = await showDialog({
    title: trans.__('Trust this repository?'),
    body,
    buttons: [
      Dialog.cancelButton({ label: trans.__('Keep restricted') }),
      Dialog.warnButton({ label: trans.__('Trust') })
    ],
    defaultButton: 0
  });
  return result.button.accept;
}

/**
 * The lines and files a discard loses, said before it; true when the user
 * discards.
 */
export async function confirmDiscard(
  trans: TranslationBundle,
  confirmation: IGitDiscardConfirmation
): Promise<boolean> {
  const { summary } = confirmation;
  const files = Array.isArray(summary.files) ? summary.files : [];
  const fileCount = Array.isArray(summary.files)
    ? summary.files.length
    : Number(summary.files) || 0;
  const shown = files.slice(0, 8);
  const body = React.createElement(
    'div',
    { className: 'jp-TeraxGit-confirm' },
    React.createElement(
      'p',
      null,
      summary.lines_lost > 0
        ? trans._n(
            '%1 changed line will be lost',
            '%1 changed lines will be lost',
            summary.lines_lost,
            summary.lines_lost
          ) +
            ' ' +
            trans._n('in %1 file.', 'in %1 files.', fileCount, fileCount)
        : trans._n(
            'The changes to %1 file will be lost.',
            'The changes to %1 files will be lost.',
            fileCount,
            fileCount
          )
    ),
    shown.length
      ? React.createElement(
          'ul',
          null,
          ...shown.map(file => React.createElement('li', { key: file }, file)),
          files.length > shown.length
            ? React.createElement(
                'li',
                { key: '…' },
                trans.__('and %1 more', files.length - shown.length)
              )
            : null
        )
      : null,
    React.createElement(
      'p',
      { className: 'jp-TeraxGit-confirm-warning' },
      trans.__('This cannot be undone.')
    )
  );
  const result = await showDialog({
    title: trans.__('Discard changes?'),
    body,
    buttons: [
      Dialog.cancelButton(),
      Dialog.warnButton({ label: trans.__('Discard') })
    ],
    defaultButton: 0
  });
  return result.button.accept;
}

/**
 * A yes/no question with a warning button; true on yes.
 */
export async function confirm(
  title: string,
  body: string,
  label: string
): Promise<boolean> {
  const result = await showDialog({
    title,
    body,
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label })],
    defaultButton: 0
  });
  return result.button.accept;
}
