/**
 * A structured file diff: hunks with line numbers, actions per hunk, and a
 * selection of changed lines (click, shift-click) with actions of its own.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type { LabIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import type { IGitFileDiff, IGitHunk } from '../api/git';
import { hunkStats, type LineSelection } from '../common/gitselection';
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
  let note = '';
  if (diff.binary) {
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
  const actions = actionsOf(mode);
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
