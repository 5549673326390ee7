/**
 * Applying a notebook change set through the notebook open in Lab: its
 * shared model (the one real-time collaboration shares, when it is on) takes
 * the accepted operations in one transaction and the document is saved, so
 * the user's unsaved edits are kept and nothing is written under them. The
 * server then finds the change made and writes nothing.
 */
import type { IAiApproval } from '../../api/ai';
import {
  expectedSources,
  keptOps,
  notebookChangeOf,
  type NotebookStep,
  planSteps,
  retyped
} from '../../common/ai/notebookchange';

/**
 * A cell of a shared notebook, as far as applying needs it (structurally
 * `@jupyter/ydoc`'s `ISharedCell`).
 */
export interface ISharedCellLike {
  readonly id: string;
  readonly cell_type: string;
  getSource(): string;
  setSource(source: string): void;
  toJSON(): object;
  readonly outputs?: readonly unknown[];
  readonly execution_count?: number | null;
  setOutputs?(outputs: unknown[]): void;
  setExecutionCount?(count: number | null): void;
}

/**
 * A shared notebook, as far as applying needs it (`ISharedNotebook`).
 */
export interface ISharedNotebookLike {
  readonly cells: readonly ISharedCellLike[];
  transact(f: () => void, undoable?: boolean): void;
  insertCell(
    index: number,
    cell: { cell_type: string; [key: string]: unknown }
  ): unknown;
  deleteCell(index: number): void;
  moveCell(from: number, to: number): void;
}

/**
 * A notebook open in Lab: its shared model and a way to save it.
 */
export interface IOpenNotebook {
  sharedModel: ISharedNotebookLike;
  save(): Promise<void>;
}

/**
 * How long a notebook shared through a collaboration room waits for the room
 * to save the change before saving it itself.
 */
export const ROOM_SAVE_MS = 10000;

/**
 * The shared document of a collaboration room, as far as saving needs it:
 * the room (jupyter-collaboration's server) saves it by itself a moment after
 * a change and then sets its `hash` state.
 */
export interface IRoomDocumentLike {
  readonly changed: {
    connect(slot: (sender: unknown, change: IStateChanges) => void): unknown;
    disconnect(slot: (sender: unknown, change: IStateChanges) => void): unknown;
  };
}

interface IStateChanges {
  stateChange?: readonly { name: string }[];
}

/**
 * Save a document a collaboration room shares: wait for the room's own save
 * (its `hash` changes), and save explicitly only when none comes in
 * `timeoutMs` (the room's autosave is off). An explicit save while another
 * client types makes the room reload the file and drop that typing
 * (jupyter-collaboration 5.0), so it is the last resort. Call it right after
 * the change, in the same task.
 */
export function saveThroughRoom(
  shared: IRoomDocumentLike,
  save: () => Promise<void>,
  timeoutMs = ROOM_SAVE_MS
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      shared.changed.disconnect(onChange);
    };
    const onChange = (_: unknown, change: IStateChanges): void => {
      if (change.stateChange?.some(state => state.name === 'hash')) {
        done();
        resolve();
      }
    };
    const timer = setTimeout(() => {
      done();
      save().then(resolve, reject);
    }, timeoutMs);
    shared.changed.connect(onChange);
  });
}

/**
 * Finds the notebook open at a path (null: it is not open, the server
 * writes the file).
 */
export type OpenNotebookFinder = (path: string) => IOpenNotebook | null;

let finder: OpenNotebookFinder | null = null;

/**
 * Set by the plugin that knows Lab's documents.
 */
export function setOpenNotebookFinder(find: OpenNotebookFinder | null): void {
  finder = find;
}

/**
 * What applying in the open notebook did.
 */
export interface IOpenNotebookResult {
  /** The notebook was open and took the change (or had it already). */
  open: boolean;
  applied: number;
  already: number;
}

/**
 * Before a notebook approval is approved with `accepted` hunks (null: all),
 * make the change in the notebook if it is open in Lab, and save it.
 *
 * Throws `NotebookConflict` when a cell it changes differs in the open
 * notebook (an edit the user has not saved, or one made since): nothing is
 * changed, and the decision should not be sent.
 */
export async function applyInOpenNotebook(
  approval: IAiApproval,
  accepted: readonly number[] | null
): Promise<IOpenNotebookResult> {
  const change = notebookChangeOf(approval.proposal);
  const notebook = change && finder ? finder(change.path) : null;
  if (!change || !notebook) {
    return { open: false, applied: 0, already: 0 };
  }
  const all = change.hunks.map(h => h.index);
  const ops = keptOps(change, accepted ?? all);
  const shared = notebook.sharedModel;
  const cells = shared.cells.map(cell => ({
    id: cell.id,
    cell_type: cell.cell_type,
    source: cell.getSource(),
    hasOutputs:
      cell.cell_type === 'code' &&
      ((cell.outputs?.length ?? 0) > 0 ||
        (cell.execution_count ?? null) !== null)
  }));
  const { steps, applied, already } = planSteps(
    cells,
    ops,
    expectedSources(change)
  );
  if (steps.length) {
    shared.transact(() => steps.forEach(step => run(shared, step)));
    await notebook.save();
  }
  return { open: true, applied, already };
}

function run(shared: ISharedNotebookLike, step: NotebookStep): void {
  switch (step.kind) {
    case 'insert':
      shared.insertCell(step.index, {
        ...step.cell,
        metadata: {},
        ...(step.cell.cell_type === 'code'
          ? { outputs: [], execution_count: null }
          : {})
      });
      return;
    case 'delete':
      shared.deleteCell(step.index);
      return;
    case 'source':
      shared.cells[step.index].setSource(step.source);
      return;
    case 'move':
      shared.moveCell(step.from, step.to);
      return;
    case 'type': {
      const json = shared.cells[step.index].toJSON() as Record<string, unknown>;
      const next = retyped(json, step.cell_type);
      shared.deleteCell(step.index);
      shared.insertCell(step.index, next as { cell_type: string });
      return;
    }
    case 'clear': {
      const cell = shared.cells[step.index];
      cell.setOutputs?.([]);
      cell.setExecutionCount?.(null);
      return;
    }
  }
}
