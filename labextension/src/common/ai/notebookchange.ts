/**
 * A notebook change set (`notebook_edit`): its cells and review units, the
 * operations the accepted units leave, and the steps that make them in a
 * notebook open in Lab, checked against the sources the agent saw.
 *
 * The server's `notebook_view/changes.py` is the reference: the same
 * operations, the same checks (a cell whose source is not the one proposed
 * refuses the whole change set), the same idempotence (an operation already
 * made is counted as done) and the same keeping of ids and outputs across a
 * type change.
 */
import { type IHunk, switchHunks } from './hunks';

export type NotebookOpKind =
  'insert' | 'replace' | 'delete' | 'move' | 'set_type' | 'clear_outputs';

/**
 * One operation as the server resolved it (every insert has its id).
 */
export interface INotebookOp {
  op: NotebookOpKind;
  id: string;
  after?: string | null;
  cell_type?: string;
  source?: string;
  expected_hash?: string;
}

/**
 * What the review shows of one operation, with its units (hunk indices).
 */
export interface INotebookCellChange {
  id: string;
  op: NotebookOpKind;
  cell_type: string | null;
  after: string | null;
  old_source: string;
  new_source: string;
  label: string;
  units: number[];
}

export interface INotebookChange {
  path: string;
  ops: INotebookOp[];
  cells: INotebookCellChange[];
  hunks: readonly IHunk[];
}

/**
 * A cell of the open notebook, as the checks read it.
 */
export interface ICellState {
  id: string;
  cell_type: string;
  source: string;
  hasOutputs: boolean;
}

/**
 * One step on the open notebook; indices are those at the time of the step.
 */
export type NotebookStep =
  | {
      kind: 'insert';
      index: number;
      cell: { id: string; cell_type: string; source: string };
    }
  | { kind: 'delete'; index: number }
  | { kind: 'source'; index: number; source: string }
  | { kind: 'move'; from: number; to: number }
  | { kind: 'type'; index: number; cell_type: string }
  | { kind: 'clear'; index: number };

/**
 * Why the open notebook cannot take the change set; nothing was changed.
 */
export class NotebookConflict extends Error {
  constructor(
    message: string,
    readonly cellId: string
  ) {
    super(message);
    this.name = 'NotebookConflict';
  }
}

const KINDS = new Set<string>([
  'insert',
  'replace',
  'delete',
  'move',
  'set_type',
  'clear_outputs'
]);
const STASH_KEY = 'stashed_outputs';
const ATTACHMENTS_KEY = 'stashed_attachments';

/**
 * The change set of a `notebook` proposal, or null for any other proposal
 * (or a payload that is not one).
 */
export function notebookChangeOf(proposal: {
  kind: string;
  path?: string | null;
  payload: Record<string, unknown>;
  hunks: readonly IHunk[];
}): INotebookChange | null {
  if (proposal.kind !== 'notebook' || !proposal.path) {
    return null;
  }
  const { ops, cells } = proposal.payload;
  if (
    !Array.isArray(ops) ||
    !Array.isArray(cells) ||
    ops.length !== cells.length ||
    !ops.every(isOp) ||
    !cells.every(isCellChange)
  ) {
    return null;
  }
  return {
    path: proposal.path,
    ops: ops as INotebookOp[],
    cells: cells as INotebookCellChange[],
    hunks: proposal.hunks
  };
}

/**
 * The operations the accepted units leave: a replace with some of its hunks
 * gets the source they make; one with none of its units is dropped, and what
 * was to go after a dropped insert goes where that insert would have gone.
 */
export function keptOps(
  change: INotebookChange,
  accepted: Iterable<number>
): INotebookOp[] {
  const chosen = new Set(accepted);
  const movedTo = new Map<string, string | null>();
  const kept: INotebookOp[] = [];
  change.ops.forEach((op, index) => {
    const cell = change.cells[index];
    const local = cell.units.filter(unit => chosen.has(unit));
    let next: INotebookOp = op;
    if (
      local.length &&
      op.op === 'replace' &&
      local.length < cell.units.length
    ) {
      const hunks = change.hunks.filter(h => cell.units.includes(h.index));
      next = { ...op, source: switchHunks(cell.old_source, hunks, [], local) };
    }
    const after = op.after ?? null;
    if (after !== null && movedTo.has(after)) {
      next = { ...next, after: movedTo.get(after) ?? null };
    }
    if (local.length) {
      kept.push(next);
    } else if (op.op === 'insert') {
      movedTo.set(op.id, next.after ?? null);
    }
  });
  return kept;
}

/**
 * The steps that make `ops` in a notebook whose cells are `cells`, with the
 * count of operations made and found made already.
 *
 * `expected` maps a cell id to the source the change set was proposed on;
 * each operation on an existing cell checks the cell's source before the
 * change set against it. Throws `NotebookConflict` (no step is returned)
 * when a cell is missing, changed, or shares its id.
 */
export function planSteps(
  cells: readonly ICellState[],
  ops: readonly INotebookOp[],
  expected: ReadonlyMap<string, string>
): { steps: NotebookStep[]; applied: number; already: number } {
  const state = cells.map(cell => ({ ...cell }));
  const before = new Map(cells.map(cell => [cell.id, cell.source]));
  const ids = new Map<string, number>();
  for (const cell of cells) {
    ids.set(cell.id, (ids.get(cell.id) ?? 0) + 1);
  }
  const steps: NotebookStep[] = [];
  let applied = 0;
  let already = 0;
  const find = (id: string): number => {
    if ((ids.get(id) ?? 0) > 1) {
      throw new NotebookConflict(
        `Several cells share the id ${id} in the open notebook.`,
        id
      );
    }
    return state.findIndex(cell => cell.id === id);
  };
  const check = (position: number, op: INotebookOp): void => {
    const want = expected.get(op.id);
    const had = before.get(op.id) ?? state[position].source;
    if (want !== undefined && had !== want) {
      throw new NotebookConflict(
        `Cell ${op.id} changed in the open notebook since this change was ` +
          'proposed; nothing was changed. Undo or save your edit of it and ask ' +
          'the agent to read it again, or reject that cell.',
        op.id
      );
    }
  };
  const anchor = (op: INotebookOp): number => {
    const after = op.after ?? null;
    if (after === null) {
      return -1;
    }
    const position = find(after);
    if (position < 0) {
      throw new NotebookConflict(
        `Cell ${after} (the cell to insert or move after) is no longer in the notebook.`,
        after
      );
    }
    return position;
  };
  const missing = (op: INotebookOp): NotebookConflict =>
    new NotebookConflict(`Cell ${op.id} is no longer in the notebook.`, op.id);

  for (const op of ops) {
    if (op.op === 'insert') {
      if (find(op.id) >= 0) {
        already += 1;
        continue;
      }
      const index = anchor(op) + 1;
      const cell = {
        id: op.id,
        cell_type: op.cell_type ?? 'code',
        source: op.source ?? ''
      };
      state.splice(index, 0, { ...cell, hasOutputs: false });
      ids.set(op.id, 1);
      steps.push({ kind: 'insert', index, cell });
      applied += 1;
      continue;
    }
    const position = find(op.id);
    if (op.op === 'delete') {
      if (position < 0) {
        already += 1;
        continue;
      }
      check(position, op);
      state.splice(position, 1);
      steps.push({ kind: 'delete', index: position });
      applied += 1;
      continue;
    }
    if (position < 0) {
      throw missing(op);
    }
    const cell = state[position];
    let step: NotebookStep | null = null;
    if (op.op === 'replace') {
      const source = op.source ?? '';
      if (cell.source !== source) {
        check(position, op);
        cell.source = source;
        step = { kind: 'source', index: position, source };
      }
    } else if (op.op === 'move') {
      const target = anchor(op);
      if (target !== position - 1 && target !== position) {
        check(position, op);
        const to = target > position ? target : target + 1;
        state.splice(to, 0, ...state.splice(position, 1));
        step = { kind: 'move', from: position, to };
      }
    } else if (op.op === 'set_type') {
      const cellType = op.cell_type ?? 'code';
      if (cell.cell_type !== cellType) {
        check(position, op);
        cell.cell_type = cellType;
        step = { kind: 'type', index: position, cell_type: cellType };
      }
    } else if (cell.hasOutputs) {
      check(position, op);
      cell.hasOutputs = false;
      step = { kind: 'clear', index: position };
    }
    if (step) {
      steps.push(step);
      applied += 1;
    } else {
      already += 1;
    }
  }
  return { steps, applied, already };
}

/**
 * The sources each cell of the change set was proposed on.
 */
export function expectedSources(change: INotebookChange): Map<string, string> {
  const expected = new Map<string, string>();
  change.cells.forEach(cell => {
    if (cell.op !== 'insert' && !expected.has(cell.id)) {
      expected.set(cell.id, cell.old_source);
    }
  });
  return expected;
}

/**
 * A cell's JSON as another type, with the same id: outputs a markdown or raw
 * cell cannot hold (and attachments a code cell cannot) wait in its metadata
 * and come back when it turns back (as the server does).
 */
export function retyped(
  cell: Record<string, unknown>,
  cellType: string
): Record<string, unknown> {
  const next: Record<string, unknown> = { ...cell, cell_type: cellType };
  const metadata = { ...((cell.metadata as Record<string, unknown>) ?? {}) };
  const terax = { ...((metadata.terax as Record<string, unknown>) ?? {}) };
  if (cell.cell_type === 'code') {
    const outputs = (cell.outputs as unknown[]) ?? [];
    const count = cell.execution_count ?? null;
    delete next.outputs;
    delete next.execution_count;
    if (outputs.length || count !== null) {
      terax[STASH_KEY] = { outputs, execution_count: count };
    }
  } else if (cellType === 'code') {
    const attachments = cell.attachments as Record<string, unknown> | undefined;
    if (attachments && Object.keys(attachments).length) {
      terax[ATTACHMENTS_KEY] = attachments;
    }
    delete next.attachments;
  }
  if (cellType === 'code') {
    const stashed = (terax[STASH_KEY] ?? {}) as Record<string, unknown>;
    delete terax[STASH_KEY];
    next.outputs = stashed.outputs ?? [];
    next.execution_count = stashed.execution_count ?? null;
  } else if (terax[ATTACHMENTS_KEY]) {
    next.attachments = terax[ATTACHMENTS_KEY];
    delete terax[ATTACHMENTS_KEY];
  }
  if (Object.keys(terax).length) {
    metadata.terax = terax;
  } else {
    delete metadata.terax;
  }
  next.metadata = metadata;
  return next;
}

function isOp(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const op = value as Record<string, unknown>;
  return (
    typeof op.op === 'string' && KINDS.has(op.op) && typeof op.id === 'string'
  );
}

function isCellChange(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const cell = value as Record<string, unknown>;
  return (
    typeof cell.id === 'string' &&
    typeof cell.old_source === 'string' &&
    typeof cell.new_source === 'string' &&
    Array.isArray(cell.units) &&
    cell.units.every(unit => typeof unit === 'number')
  );
}
