/**
 * A structured file diff: hunks with line numbers, actions per hunk, and a
 * selection of changed lines (click, shift-click) with actions of its own.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type { LabIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import type { IGitConflict, IGitFileDiff, IGitHunk } from '../api/git';
import { hunkStats, type LineSelection } from '../common/git/selection';
import { DiffCSS } from './css';
import { discardIcon, stageIcon, unstageIcon } from './icons';

/**
 * What can be done to the changes of a diff.
 */
export type DiffAction = 'stage' | 'unstage' | 'discard';

/**
 * Which actions a diff offers: a work-tree diff stages and discards, an
 * index diff unstages, a commit's diff is read-only.
 */
export type DiffMode = 'worktree' | 'index' | 'readonly';

/**
 * Props of {@link DiffView}.
 */
export interface IDiffViewProps {
  diff: IGitFileDiff | null;
  loading: boolean;
  error: string | null;
  mode: DiffMode;
  trans: TranslationBundle;
  selection?: LineSelection;
  onSelection?: (selection: LineSelection) => void;
  onHunk?: (action: DiffAction, hunk: number) => void;
  onSelectedLines?: (action: DiffAction) => void;
  /** An operation is running: actions are disabled. */
  busy?: boolean;
  /** A conflicted file: resolve it with one side (offered when given). */
  onTakeSide?: (side: 'ours' | 'theirs') => void;
  /** A conflicted file: open it in an editor (its conflict markers). */
  onOpenFile?: () => void;
}

/**
 * The actions of a mode.
 */
export function actionsOf(mode: DiffMode): DiffAction[] {
  switch (mode) {
    case 'worktree':
      return ['stage', 'discard'];
    case 'index':
      return ['unstage'];
    default:
      return [];
  }
}

const ICONS: Record<DiffAction, LabIcon> = {
  stage: stageIcon,
  unstage: unstageIcon,
  discard: discardIcon
};

/**
 * A file's diff.
 */
export function DiffView(props: IDiffViewProps): JSX.Element {
  const { diff, loading, error, mode, trans } = props;
  if (error) {
    return (
      <div className={DiffCSS.diff}>
        <div className={DiffCSS.note} role="alert" data-kind="error">
          {error}
        </div>
      </div>
    );
  }
  if (!diff) {
    return (
      <div className={DiffCSS.diff} aria-busy={loading}>
        <div className={DiffCSS.note}>
          {loading ? trans.__('Loading…') : ''}
        </div>
      </div>
    );
  }
  const conflict = diff.status === 'conflicted' ? diff.conflict : null;
  let note = '';
  if (conflict) {
    note = '';
  } else if (diff.binary) {
    note = trans.__('Binary file (%1); no text diff.', formatSize(diff.size));
  } else if (diff.too_large) {
    note = trans.__(
      'This diff is too large to show (%1).',
      formatSize(diff.size)
    );
  } else if (!diff.hunks.length) {
    note = trans.__('No content changes (mode or rename only).');
  }
  const selection = props.selection;
  // A conflicted file is resolved as a whole: its hunks are only shown.
  const actions = conflict ? [] : actionsOf(mode);
  return (
    <div
      className={DiffCSS.diff}
      data-file={diff.file}
      data-source={diff.source}
      aria-busy={loading}
      tabIndex={-1}
      onKeyDown={event => {
        if (event.key === 'Escape' && selection && selection.size > 0) {
          event.preventDefault();
          event.stopPropagation();
          props.onSelection?.(selection.restrict([]));
        }
      }}
    >
      {conflict ? (
        <ConflictBar {...props} diff={diff} conflict={conflict} />
      ) : null}
      {note ? <div className={DiffCSS.note}>{note}</div> : null}
      {selection && selection.size > 0 && actions.length ? (
        <SelectionBar {...props} selection={selection} actions={actions} />
      ) : null}
      {diff.hunks.map(hunk => (
        <Hunk
          key={hunk.index}
          hunk={hunk}
          {...props}
          diff={diff}
          actions={actions}
        />
      ))}
    </div>
  );
}

/**
 * What ours and theirs are, in the terms of the operation in progress (in a
 * rebase, git's "ours" is the branch being rebased onto).
 */
export function sideLabels(
  operation: IGitConflict['operation'],
  trans: TranslationBundle
): { ours: string; theirs: string } {
  switch (operation) {
    case 'rebase':
      return {
        ours: trans.__('Ours: the branch rebased onto'),
        theirs: trans.__('Theirs: your commit being replayed')
      };
    case 'cherry-pick':
      return {
        ours: trans.__('Ours: HEAD'),
        theirs: trans.__('Theirs: the commit being picked')
      };
    case 'revert':
      return {
        ours: trans.__('Ours: HEAD'),
        theirs: trans.__('Theirs: the change reverted')
      };
    default:
      return {
        ours: trans.__('Ours: HEAD (this branch)'),
        theirs: trans.__('Theirs: the branch merged in')
      };
  }
}

function ConflictBar(
  props: IDiffViewProps & { diff: IGitFileDiff; conflict: IGitConflict }
): JSX.Element {
  const { trans, conflict } = props;
  const labels = sideLabels(conflict.operation, trans);
  const sides = conflict.sides;
  const describe = (side: 'ours' | 'theirs'): string =>
    sides[side].present
      ? labels[side]
      : trans.__('%1 (deleted the file)', labels[side]);
  return (
    <div className={DiffCSS.conflict} data-regions={conflict.regions}>
      <div className={`${DiffCSS.conflict}-text`}>
        <strong>{trans.__('Conflicted.')}</strong>{' '}
        {conflict.regions
          ? trans._n(
              '%1 conflict region is left in the file (shown against HEAD below). Take one side, or edit the markers and stage the file.',
              '%1 conflict regions are left in the file (shown against HEAD below). Take one side, or edit the markers and stage the file.',
              conflict.regions,
              conflict.regions
            )
          : trans.__(
              'No conflict markers are left: stage the file to mark it resolved, or take one side.'
            )}
      </div>
      <div className={`${DiffCSS.conflict}-actions`} role="toolbar">
        {props.onTakeSide ? (
          <>
            <button
              type="button"
              className={DiffCSS.button}
              data-action="take-ours"
              disabled={props.busy}
              title={describe('ours')}
              onClick={() => props.onTakeSide?.('ours')}
            >
              {trans.__('Take Ours')}
            </button>
            <button
              type="button"
              className={DiffCSS.button}
              data-action="take-theirs"
              disabled={props.busy}
              title={describe('theirs')}
              onClick={() => props.onTakeSide?.('theirs')}
            >
              {trans.__('Take Theirs')}
            </button>
          </>
        ) : null}
        {props.onOpenFile ? (
          <button
            type="button"
            className={DiffCSS.button}
            data-action="open-merge"
            data-kind="quiet"
            title={trans.__('Edit the conflict markers in an editor')}
            onClick={() => props.onOpenFile?.()}
          >
            {trans.__('Open in Editor')}
          </button>
        ) : null}
      </div>
      {(['ours', 'theirs'] as const).map(side => (
        <details
          key={side}
          className={`${DiffCSS.conflict}-side`}
          data-side={side}
        >
          <summary>{describe(side)}</summary>
          {sides[side].text !== null ? (
            <pre>{sides[side].text}</pre>
          ) : (
            <div className={DiffCSS.note}>
              {!sides[side].present
                ? trans.__('This side deleted the file.')
                : sides[side].too_large
                  ? trans.__(
                      'Too large to show (%1).',
                      formatSize(sides[side].size)
                    )
                  : trans.__('Binary; not shown.')}
            </div>
          )}
        </details>
      ))}
    </div>
  );
}

function SelectionBar(
  props: IDiffViewProps & { selection: LineSelection; actions: DiffAction[] }
): JSX.Element {
  const { trans, selection, actions } = props;
  const labels: Record<DiffAction, string> = {
    stage: trans.__('Stage'),
    unstage: trans.__('Unstage'),
    discard: trans.__('Discard')
  };
  const titles: Record<DiffAction, string> = {
    stage: trans.__('Stage the selected lines'),
    unstage: trans.__('Unstage the selected lines'),
    discard: trans.__('Discard the selected lines')
  };
  return (
    <div className={DiffCSS.selectionBar} role="toolbar">
      <span>
        {trans._n('%1 line', '%1 lines', selection.size, selection.size)}
      </span>
      {actions.map(action => (
        <button
          key={action}
          type="button"
          className={DiffCSS.button}
          data-action={`${action}-lines`}
          data-kind={action === 'discard' ? 'danger' : undefined}
          disabled={props.busy}
          title={titles[action]}
          onClick={() => props.onSelectedLines?.(action)}
        >
          {labels[action]}
        </button>
      ))}
      <button
        type="button"
        className={DiffCSS.button}
        data-action="clear-selection"
        data-kind="quiet"
        title={trans.__('Clear the selection (Escape)')}
        onClick={() => props.onSelection?.(selection.restrict([]))}
      >
        {trans.__('Clear')}
      </button>
    </div>
  );
}

function Hunk(
  props: IDiffViewProps & {
    diff: IGitFileDiff;
    hunk: IGitHunk;
    actions: DiffAction[];
  }
): JSX.Element {
  const { hunk, diff, trans, actions, selection } = props;
  const stats = hunkStats(hunk);
  const selectable = actions.length > 0 && !!selection;
  const titles: Record<DiffAction, string> = {
    stage: trans.__('Stage Hunk'),
    unstage: trans.__('Unstage Hunk'),
    discard: trans.__('Discard Hunk')
  };
  const context = hunk.header.replace(/^@@[^@]*@@\s?/, '');
  const onLine = (event: React.MouseEvent, line: number): void => {
    if (!selectable || !selection) {
      return;
    }
    event.preventDefault();
    const ref = { hunk: hunk.index, line };
    props.onSelection?.(
      event.shiftKey
        ? selection.extend(diff.hunks, ref)
        : selection.toggle(diff.hunks, ref)
    );
  };
  return (
    <div className={DiffCSS.hunk} data-hunk={hunk.index}>
      <div className={DiffCSS.hunkHeader}>
        <span
          className={DiffCSS.hunkTitle}
          title={hunk.header}
          onClick={() =>
            selectable &&
            selection &&
            props.onSelection?.(selection.toggleHunk(diff.hunks, hunk.index))
          }
        >
          <span>
            @@ -{hunk.old_start},{hunk.old_lines} +{hunk.new_start},
            {hunk.new_lines} @@
          </span>
          {context ? <span> {context}</span> : null}
        </span>
        <span className={`${DiffCSS.hunkHeader}-stats`}>
          {stats.additions ? <ins>+{stats.additions}</ins> : null}
          {stats.deletions ? <del>−{stats.deletions}</del> : null}
        </span>
        {actions.map(action => {
          const Icon = ICONS[action];
          return (
            <button
              key={action}
              type="button"
              className={DiffCSS.button}
              data-action={`${action}-hunk`}
              data-kind={action === 'discard' ? 'danger' : undefined}
              title={titles[action]}
              aria-label={titles[action]}
              disabled={props.busy}
              onClick={() => props.onHunk?.(action, hunk.index)}
            >
              <Icon.react tag="span" />
            </button>
          );
        })}
      </div>
      {hunk.lines.map((line, index) => {
        const selected =
          line.kind !== 'context' &&
          !!selection?.has({ hunk: hunk.index, line: index });
        return (
          <div
            key={index}
            className={DiffCSS.line}
            data-kind={line.kind}
            data-line={index}
            data-selected={selected ? 'true' : undefined}
            data-selectable={
              selectable && line.kind !== 'context' ? 'true' : undefined
            }
            onMouseDown={event => {
              if (event.shiftKey) {
                // Keep the browser from selecting text on shift-click.
                event.preventDefault();
              }
            }}
            onClick={event =>
              line.kind !== 'context' ? onLine(event, index) : undefined
            }
          >
            <span className={DiffCSS.number}>{line.old ?? ''}</span>
            <span className={DiffCSS.number}>{line.new ?? ''}</span>
            <span className={DiffCSS.sign}>
              {line.kind === 'add' ? '+' : line.kind === 'delete' ? '−' : ' '}
            </span>
            <span className={DiffCSS.text}>
              {line.text}
              {line.no_newline ? (
                <span className={`${DiffCSS.text}-eol`}>
                  {' '}
                  {trans.__('(no newline at end of file)')}
                </span>
              ) : null}
            </span>
          </div>
        );
      })}
    </div>
  );
}

/**
 * A file size for people.
 */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) {
    return '';
  }
  if (bytes < 1024) {
    return `${bytes} B`;
  }
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
