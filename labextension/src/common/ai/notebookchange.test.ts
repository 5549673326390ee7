import { describe, expect, it } from 'vitest';

import {
  expectedSources,
  type ICellState,
  type INotebookChange,
  keptOps,
  NotebookConflict,
  notebookChangeOf,
  planSteps,
  retyped
} from './notebookchange';

// What the server's notebook_edit proposes for: a two-hunk edit of cell b,
// two inserts after it (the second after the first), clearing the outputs
// of c and moving a to the end.

const OLD_B = Array.from({ length: 12 }, (_, n) => `l${n}\n`).join('');
const NEW_B = OLD_B.replace('l1\n', 'one\n').replace('l10\n', 'ten\n');

const whole = (index: number, lines: string[]) => ({
  index,
  header: '@@ @@',
  old_start: 0,
  old_lines: 0,
  new_start: lines.length ? 1 : 0,
  new_lines: lines.length ? 1 : 0,
  lines
});

const PROPOSAL = {
  kind: 'notebook',
  path: 'nb.ipynb',
  payload: {
    path: 'nb.ipynb',
    ops: [
      { op: 'replace', id: 'b', expected_hash: '99976727d0da', source: NEW_B },
      {
        op: 'insert',
        id: 'n1',
        after: 'b',
        cell_type: 'code',
        source: 'x = 1'
      },
      {
        op: 'insert',
        id: 'n2',
        after: 'n1',
        cell_type: 'markdown',
        source: '## y'
      },
      { op: 'clear_outputs', id: 'c', expected_hash: 'd287bb7f9d15' },
      { op: 'move', id: 'a', expected_hash: '4321893dc18b', after: 'c' }
    ],
    cells: [
      cell('b', 'replace', OLD_B, NEW_B, [0, 1]),
      cell('n1', 'insert', '', 'x = 1', [2], 'b'),
      cell('n2', 'insert', '', '## y', [3], 'n1'),
      cell('c', 'clear_outputs', 'print(1)', 'print(1)', [4]),
      cell('a', 'move', '# T', '# T', [5], 'c')
    ]
  },
  hunks: [
    {
      index: 0,
      header: '@@ -1,5 +1,5 @@ cell b',
      old_start: 1,
      old_lines: 5,
      new_start: 1,
      new_lines: 5,
      lines: [' l0', '-l1', '+one', ' l2', ' l3', ' l4']
    },
    {
      index: 1,
      header: '@@ -8,5 +8,5 @@ cell b',
      old_start: 8,
      old_lines: 5,
      new_start: 8,
      new_lines: 5,
      lines: [' l7', ' l8', ' l9', '-l10', '+ten', ' l11']
    },
    whole(2, ['+x = 1', '\\ No newline at end of file']),
    whole(3, ['+## y', '\\ No newline at end of file']),
    whole(4, []),
    whole(5, [])
  ]
};

function cell(
  id: string,
  op: string,
  oldSource: string,
  newSource: string,
  units: number[],
  after: string | null = null
) {
  return {
    id,
    op,
    cell_type: 'code',
    after,
    old_source: oldSource,
    new_source: newSource,
    label: `${op} ${id}`,
    units
  };
}

const CELLS: ICellState[] = [
  { id: 'a', cell_type: 'markdown', source: '# T', hasOutputs: false },
  { id: 'b', cell_type: 'code', source: OLD_B, hasOutputs: false },
  { id: 'c', cell_type: 'code', source: 'print(1)', hasOutputs: true }
];

function change(): INotebookChange {
  const parsed = notebookChangeOf(PROPOSAL);
  if (!parsed) {
    throw new Error('not a change set');
  }
  return parsed;
}

/** The cells after running `steps` as the open notebook would. */
function run(
  cells: ICellState[],
  steps: ReturnType<typeof planSteps>['steps']
): ICellState[] {
  const out = cells.map(c => ({ ...c }));
  for (const step of steps) {
    switch (step.kind) {
      case 'insert':
        out.splice(step.index, 0, { ...step.cell, hasOutputs: false });
        break;
      case 'delete':
        out.splice(step.index, 1);
        break;
      case 'source':
        out[step.index].source = step.source;
        break;
      case 'move':
        out.splice(step.to, 0, ...out.splice(step.from, 1));
        break;
      case 'type':
        out[step.index].cell_type = step.cell_type;
        break;
      case 'clear':
        out[step.index].hasOutputs = false;
        break;
    }
  }
  return out;
}

describe('notebookChangeOf', () => {
  it('reads a notebook proposal and nothing else', () => {
    expect(change().cells.map(c => c.units)).toEqual([
      [0, 1],
      [2],
      [3],
      [4],
      [5]
    ]);
    expect(notebookChangeOf({ ...PROPOSAL, kind: 'edit' })).toBeNull();
    expect(
      notebookChangeOf({
        ...PROPOSAL,
        payload: { ...PROPOSAL.payload, cells: [] }
      })
    ).toBeNull();
  });
});

describe('keptOps', () => {
  it('keeps every operation when every unit is accepted', () => {
    expect(keptOps(change(), [0, 1, 2, 3, 4, 5])).toEqual(PROPOSAL.payload.ops);
  });

  it('rebuilds a replace from its accepted hunks', () => {
    const [replace] = keptOps(change(), [1]);
    expect(replace.source).toBe(OLD_B.replace('l10\n', 'ten\n'));
  });

  it('moves what followed a rejected insert to where it would have gone', () => {
    const ops = keptOps(change(), [3, 5]);
    expect(ops.map(op => [op.op, op.id, op.after])).toEqual([
      ['insert', 'n2', 'b'],
      ['move', 'a', 'c']
    ]);
  });
});

describe('planSteps', () => {
  it('makes the change set in order, as the server does', () => {
    const ops = keptOps(change(), [0, 1, 2, 3, 4, 5]);
    const plan = planSteps(CELLS, ops, expectedSources(change()));
    expect(plan).toMatchObject({ applied: 5, already: 0 });
    const after = run(CELLS, plan.steps);
    expect(after.map(c => c.id)).toEqual(['b', 'n1', 'n2', 'c', 'a']);
    expect(after[0].source).toBe(NEW_B);
    expect(after[3].hasOutputs).toBe(false);
    // Once made, the same change set is all done already and has no step.
    const again = planSteps(after, ops, expectedSources(change()));
    expect(again).toEqual({ steps: [], applied: 0, already: 5 });
  });

  it('refuses the whole change set when a cell it changes differs', () => {
    const edited = CELLS.map(c =>
      c.id === 'c' ? { ...c, source: 'print(2)  # typed by the user' } : c
    );
    const ops = keptOps(change(), [0, 1, 2, 3, 4, 5]);
    expect(() => planSteps(edited, ops, expectedSources(change()))).toThrow(
      NotebookConflict
    );
    // The user's edit of a cell the change set leaves alone is no conflict.
    const other = CELLS.map(c =>
      c.id === 'a' ? { ...c, source: '# Title, unsaved' } : c
    );
    expect(() =>
      planSteps(other, keptOps(change(), [0, 1]), expectedSources(change()))
    ).not.toThrow();
  });

  it('reports a missing cell and a shared id', () => {
    const ops = keptOps(change(), [4]);
    expect(() =>
      planSteps(
        CELLS.filter(c => c.id !== 'c'),
        ops,
        expectedSources(change())
      )
    ).toThrow(/Cell c is no longer in the notebook/);
    expect(() =>
      planSteps([...CELLS, { ...CELLS[2] }], ops, expectedSources(change()))
    ).toThrow(/share the id c/);
  });
});

describe('retyped', () => {
  it('keeps the id and brings the outputs back', () => {
    const code = {
      id: 'c',
      cell_type: 'code',
      source: 'print(1)',
      metadata: { tags: ['x'] },
      outputs: [{ output_type: 'stream', name: 'stdout', text: '1\n' }],
      execution_count: 2
    };
    const markdown = retyped(code, 'markdown');
    expect(markdown).not.toHaveProperty('outputs');
    expect(markdown.id).toBe('c');
    expect(retyped(markdown, 'code')).toEqual(code);
  });
});
