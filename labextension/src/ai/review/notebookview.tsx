/**
 * The review of a notebook change set: one card per cell operation, each
 * diff hunk inside a replaced cell and each other operation with its own
 * Accept and Reject, and the whole cell at once.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { NO_NEWLINE } from '../../common/ai/hunks';
import type { INotebookCellChange } from '../../common/ai/notebookchange';
import type { IAiHunk } from '../../api/ai';
import { CSS } from './css';
import type { ReviewModel } from './model';

interface INotebookViewProps {
  model: ReviewModel;
  trans: TranslationBundle;
  active: number;
  onActivate: (hunk: number) => void;
}

/**
 * Every cell of the change set, in the order the operations apply.
 */
export function NotebookChangeList(
  props: INotebookViewProps
): JSX.Element | null {
  const { model, trans } = props;
  const change = model.notebookChange;
  if (!change) {
    return null;
  }
  return (
    <div className={CSS.cells} aria-label={trans.__('Cells')}>
      {change.cells.map((cell, position) => (
        <CellCard
          key={`${cell.id}:${position}`}
          {...props}
          cell={cell}
          hunks={model.hunks.filter(h => cell.units.includes(h.index))}
        />
      ))}
    </div>
  );
}

function opText(cell: INotebookCellChange, trans: TranslationBundle): string {
  switch (cell.op) {
    case 'insert':
      return cell.after
        ? trans.__('New %1 cell after %2', cell.cell_type ?? '', cell.after)
        : trans.__('New %1 cell at the top', cell.cell_type ?? '');
    case 'replace':
      return trans.__('Edit cell %1', cell.id);
    case 'delete':
      return trans.__('Delete cell %1', cell.id);
    case 'move':
      return cell.after
        ? trans.__('Move cell %1 after %2', cell.id, cell.after)
        : trans.__('Move cell %1 to the top', cell.id);
    case 'set_type':
      return trans.__('Make cell %1 a %2 cell', cell.id, cell.cell_type ?? '');
    default:
      return trans.__('Clear the outputs of cell %1', cell.id);
  }
}

function CellCard(
  props: INotebookViewProps & {
    cell: INotebookCellChange;
    hunks: IAiHunk[];
  }
): JSX.Element {
  const { model, trans, cell, hunks } = props;
  const editable = model.editable;
  const accepted = cell.units.filter(unit => model.isAccepted(unit)).length;
  const title = opText(cell, trans);
  const setAll = (value: boolean): void =>
    cell.units.forEach(unit => model.setAccepted(unit, value));
  return (
    <section
      className={CSS.cell}
      data-cell={cell.id}
      data-op={cell.op}
      data-state={
        accepted === cell.units.length
          ? 'accepted'
          : accepted
            ? 'partial'
            : 'rejected'
      }
      aria-label={title}
    >
      <div className={CSS.cellHeader}>
        <span className={CSS.hunkTitle}>{title}</span>
        {cell.cell_type && cell.op !== 'set_type' ? (
          <span className={CSS.cellType}>{cell.cell_type}</span>
        ) : null}
        {cell.units.length > 1 ? (
          <span className={CSS.choice} role="group" aria-label={title}>
            <button
              type="button"
              className={CSS.choiceButton}
              data-action="accept-cell"
              aria-pressed={accepted === cell.units.length}
              disabled={!editable}
              onClick={() => setAll(true)}
            >
              {trans.__('Accept Cell')}
            </button>
            <button
              type="button"
              className={CSS.choiceButton}
              data-action="reject-cell"
              aria-pressed={accepted === 0}
              disabled={!editable}
              onClick={() => setAll(false)}
            >
              {trans.__('Reject Cell')}
            </button>
          </span>
        ) : null}
      </div>
      {hunks.map(hunk => (
        <UnitView
          key={hunk.index}
          {...props}
          hunk={hunk}
          name={
            cell.units.length > 1
              ? trans.__(
                  'Hunk %1 of cell %2',
                  cell.units.indexOf(hunk.index) + 1,
                  cell.id
                )
              : title
          }
        />
      ))}
    </section>
  );
}

function UnitView(
  props: INotebookViewProps & { hunk: IAiHunk; name: string }
): JSX.Element {
  const { model, trans, hunk, name } = props;
  const accepted = model.isAccepted(hunk.index);
  const active = props.active === hunk.index;
  const classes = [CSS.hunk, CSS.unit];
  if (active) {
    classes.push(CSS.active);
  }
  if (!accepted) {
    classes.push(CSS.rejected);
  }
  const lines = hunk.lines.filter(line => line !== NO_NEWLINE);
  return (
    <div
      className={classes.join(' ')}
      data-hunk={hunk.index}
      data-state={accepted ? 'accepted' : 'rejected'}
      aria-current={active ? 'true' : undefined}
      onClick={() => props.onActivate(hunk.index)}
    >
      <div className={CSS.unitBar}>
        <span className={CSS.hunkMeta}>{name}</span>
        <span className={CSS.choice} role="group" aria-label={name}>
          <button
            type="button"
            className={CSS.choiceButton}
            data-action="accept"
            aria-pressed={accepted}
            disabled={!model.editable}
            onClick={() => model.setAccepted(hunk.index, true)}
          >
            {trans.__('Accept')}
          </button>
          <button
            type="button"
            className={CSS.choiceButton}
            data-action="reject"
            aria-pressed={!accepted}
            disabled={!model.editable}
            onClick={() => model.setAccepted(hunk.index, false)}
          >
            {trans.__('Reject')}
          </button>
        </span>
      </div>
      {lines.length ? (
        <pre className={CSS.unitLines}>
          {lines.map((line, i) => (
            <div key={i} data-line={line.slice(0, 1)}>
              {line}
            </div>
          ))}
        </pre>
      ) : null}
    </div>
  );
}
