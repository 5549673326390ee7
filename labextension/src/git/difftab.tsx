/**
 * The diff of the file chosen in the Git panel, in a main-area tab: the
 * sidebar keeps the list, the diff gets the width code needs.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget, UseSignal } from '@jupyterlab/ui-components';
import * as React from 'react';

import { DiffTabCSS } from './css';
import { type DiffAction, type DiffMode, DiffView } from './diffview';
import type { GitModel } from './model';

/**
 * What the diff tab asks of the application.
 */
export interface IGitDiffHost {
  /** Open a repository file in an editor. */
  openFile(repositoryPath: string): void;
}

/**
 * The content of the diff tab; follows the model's open file.
 */
export class GitDiffView extends ReactWidget {
  constructor(options: GitDiffView.IOptions) {
    super();
    this._options = options;
    this.addClass(DiffTabCSS.tab);
  }

  get model(): GitModel {
    return this._options.model;
  }

  protected override render(): JSX.Element {
    const { model } = this._options;
    return (
      <UseSignal signal={model.changed} initialSender={model}>
        {() => <DiffTab {...this._options} />}
      </UseSignal>
    );
  }

  private readonly _options: GitDiffView.IOptions;
}

/**
 * A namespace for GitDiffView statics.
 */
export namespace GitDiffView {
  export interface IOptions {
    model: GitModel;
    trans: TranslationBundle;
    host: IGitDiffHost;
  }
}

function DiffTab(props: GitDiffView.IOptions): JSX.Element {
  const { model, trans, host } = props;
  const selected = model.selected;
  if (!selected) {
    return (
      <div className={DiffTabCSS.empty}>
        {trans.__('Choose a changed file in the Git panel to see its diff.')}
      </div>
    );
  }
  const conflicted = selected.group === 'conflicted';
  const mode: DiffMode = conflicted
    ? 'readonly'
    : selected.group === 'staged'
      ? 'index'
      : 'worktree';
  const groupLabels: Record<string, string> = {
    staged: trans.__('Staged (HEAD → index)'),
    unstaged: trans.__('Changes (index → working tree)'),
    untracked: trans.__('Untracked (new file)'),
    conflicted: trans.__('Conflicted (HEAD → working tree)')
  };
  const busy = model.isBusy();
  const onHunk = (action: DiffAction, hunk: number): void =>
    void model.applyToDiff(action, [{ hunk }]);
  return (
    <div className={DiffTabCSS.body}>
      <div className={DiffTabCSS.header}>
        <span className={DiffTabCSS.path} title={selected.path}>
          {selected.path}
        </span>
        <span className={`${DiffTabCSS.header}-group`}>
          {groupLabels[selected.group] ?? selected.group}
        </span>
        <button
          type="button"
          className="jp-TeraxDiff-button"
          data-action="open-file"
          data-kind="quiet"
          onClick={() => host.openFile(selected.path)}
        >
          {trans.__('Open File')}
        </button>
      </div>
      <DiffView
        diff={model.diff}
        loading={model.diffLoading}
        error={model.diffError}
        mode={mode}
        trans={trans}
        selection={model.selection}
        busy={busy}
        onSelection={selection => model.setSelection(selection)}
        onHunk={onHunk}
        onSelectedLines={action => void model.applyToDiff(action)}
        onTakeSide={
          conflicted
            ? side => void model.takeSide([selected.path], side)
            : undefined
        }
        onOpenFile={conflicted ? () => host.openFile(selected.path) : undefined}
      />
    </div>
  );
}
