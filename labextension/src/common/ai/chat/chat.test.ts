import { describe, expect, it } from 'vitest';

import {
  applyEvent,
  applyEvents,
  buildChat,
  cellAttachment,
  cellMentionAtCaret,
  cellMentions,
  cutNote,
  emptyChat,
  errorAction,
  errorText,
  expandSnippets,
  fenceFor,
  filterCells,
  firstLine,
  formatCost,
  formatTokens,
  type IChatApproval,
  type IChatEvent,
  type INotebookCellInfo,
  type IStoredSession,
  keyNameIn,
  notebookCells,
  promptHistory,
  promptWithAttachments,
  splitPrompt,
  replayCommand,
  resolveCellMentions,
  slashCommand,
  tokenAtCaret,
  toolSubject,
  workflowApprovalDetails
} from '.';

function session(fields: Partial<IStoredSession> = {}): IStoredSession {
  return {
    id: 's1',
    plan_mode: false,
    rules: [],
    todos: [],
    run: null,
    pending_approvals: [],
    plan: [],
    usage: { input_tokens: 10, output_tokens: 5, cached_tokens: 0 },
    last_seq: 0,
    ...fields
  };
}

function approval(
  id: string,
  callId: string,
  fields: Partial<IChatApproval> = {}
): IChatApproval {
  return {
    id,
    session_id: 's1',
    run_id: 'r1',
    call_id: callId,
    tool: 'bash_run',
    status: 'pending',
    proposal: {
      tool: 'bash_run',
      kind: 'command',
      summary: 'Run touch x in .',
      payload: { command: 'touch x', cwd: '.' },
      path: '.',
      command: 'touch x',
      diff: null,
      hunks: []
    },
    decision: null,
    decided_by: null,
    created_at: 1,
    decided_at: null,
    auto_rule: null,
    ...fields
  };
}

let seq = 0;
/**
 * An event of a run, numbered in order. Its fields are what the reducer reads
 * (a run_started's run is only { id, steps }), hence the cast.
 */
function ev(
  type: IChatEvent['type'],
  fields: Record<string, unknown> = {}
): IChatEvent {
  seq += 1;
  return {
    type,
    seq,
    session_id: 's1',
    time: 0,
    run_id: 'r1',
    ...fields
  } as IChatEvent;
}

function live(): IChatEvent[] {
  seq = 0;
  return [
    ev('run_started', { run: { id: 'r1', steps: 0 }, prompt: 'hello' }),
    ev('step', { index: 1 }),
    ev('reasoning_delta', { text: 'Thinking' }),
    ev('reasoning_delta', { text: ' hard' }),
    ev('text_delta', { text: 'Hi ' }),
    ev('text_delta', { text: 'there' }),
    ev('tool_call_streaming', { call_id: 'c1', name: 'bash_run' }),
    ev('tool_call_started', {
      call_id: 'c1',
      name: 'bash_run',
      arguments: { command: 'touch x' }
    }),
    ev('usage', {
      input_tokens: 100,
      output_tokens: 20,
      cached_tokens: 0,
      cost: null
    })
  ];
}

describe('applyEvent', () => {
  it('streams text, reasoning and a tool card into a new turn', () => {
    const state = applyEvents(emptyChat('s1'), live());
    expect(state.running).toBe(true);
    expect(state.turns).toHaveLength(1);
    const [turn] = state.turns;
    expect(turn.prompt).toBe('hello');
    expect(turn.step).toBe(1);
    expect(turn.parts).toEqual([
      { kind: 'reasoning', text: 'Thinking hard' },
      { kind: 'text', text: 'Hi there' },
      { kind: 'tool', callId: 'c1' }
    ]);
    expect(state.tools.c1.status).toBe('running');
    expect(state.tools.c1.arguments).toEqual({ command: 'touch x' });
    expect(turn.usage).toEqual({
      input: 100,
      output: 20,
      cached: 0,
      cost: null
    });
    expect(state.usage.input).toBe(100);
    expect(state.lastSeq).toBe(9);
  });

  it('ignores replayed events', () => {
    const events = live();
    const once = applyEvents(emptyChat('s1'), events);
    const twice = applyEvents(once, events);
    expect(twice).toBe(once);
    expect(twice.turns[0].parts[1]).toEqual({ kind: 'text', text: 'Hi there' });
  });

  it('follows an approval to the finished call', () => {
    let state = applyEvents(emptyChat('s1'), live());
    const pending = approval('a1', 'c1');
    state = applyEvent(state, ev('approval_requested', { approval: pending }));
    expect(state.approvals.map(a => a.id)).toEqual(['a1']);
    expect(state.tools.c1.status).toBe('pending_approval');
    expect(state.tools.c1.approvalId).toBe('a1');
    state = applyEvent(
      state,
      ev('approval_resolved', { approval: { ...pending, status: 'approved' } })
    );
    expect(state.approvals).toEqual([]);
    expect(state.tools.c1.approval).toBe('approved');
    state = applyEvent(
      state,
      ev('tool_call_finished', {
        call_id: 'c1',
        name: 'bash_run',
        status: 'done',
        is_error: false,
        duration_ms: 12,
        content: 'exit 0',
        truncated: false,
        data: { exit_code: 0 }
      })
    );
    expect(state.tools.c1).toMatchObject({
      status: 'done',
      durationMs: 12,
      result: 'exit 0',
      data: { exit_code: 0 }
    });
    state = applyEvent(state, ev('finish', { reason: 'stop', steps: 2 }));
    expect(state.running).toBe(false);
    expect(state.turns[0]).toMatchObject({ running: false, finish: 'stop' });
  });

  it('cancels what was still running when the run ends', () => {
    let state = applyEvents(emptyChat('s1'), live());
    state = applyEvent(
      state,
      ev('approval_requested', { approval: approval('a1', 'c1') })
    );
    state = applyEvent(state, ev('approval_expired', { approval_id: 'a1' }));
    state = applyEvent(state, ev('finish', { reason: 'cancelled', steps: 1 }));
    expect(state.approvals).toEqual([]);
    expect(state.tools.c1.status).toBe('cancelled');
    expect(state.tools.c1.approval).toBe('expired');
  });

  it('nests a sub-agent under its call', () => {
    seq = 0;
    const state = applyEvents(emptyChat('s1'), [
      ev('run_started', { run: { id: 'r1' }, prompt: 'explore' }),
      ev('tool_call_started', {
        call_id: 'c1',
        name: 'run_subagent',
        arguments: { agent: 'explore', task: 'look' }
      }),
      ev('step', { index: 1, parent_call_id: 'c1' }),
      ev('text_delta', { text: 'found', parent_call_id: 'c1' }),
      ev('tool_call_started', {
        call_id: 'c2',
        name: 'grep',
        arguments: { pattern: 'x' },
        parent_call_id: 'c1'
      })
    ]);
    expect(state.turns[0].parts).toEqual([{ kind: 'tool', callId: 'c1' }]);
    expect(state.turns[0].step).toBe(0);
    expect(state.tools.c1.children).toEqual([
      { kind: 'text', text: 'found' },
      { kind: 'tool', callId: 'c2' }
    ]);
    expect(state.tools.c2.parentCallId).toBe('c1');
  });

  it('keeps the error for a banner and clears it on the next run', () => {
    seq = 0;
    let state = applyEvents(emptyChat('s1'), [
      ev('run_started', { run: { id: 'r1' }, prompt: 'hi' }),
      ev('error', {
        message: 'The key KEYED_API_KEY was refused.',
        reason: 'bad_key',
        provider: 'keyed'
      }),
      ev('finish', { reason: 'error', steps: 1 })
    ]);
    expect(state.error).toMatchObject({
      reason: 'bad_key',
      provider: 'keyed',
      runId: 'r1'
    });
    expect(state.turns[0].error?.reason).toBe('bad_key');
    state = applyEvent(
      state,
      ev('run_started', { run: { id: 'r2' }, prompt: 'again', run_id: 'r2' })
    );
    expect(state.error).toBeNull();
    expect(state.turns).toHaveLength(2);
  });

  it('queues plan items and applies them', () => {
    seq = 0;
    const item1 = approval('a1', 'c1', { status: 'queued' });
    const item2 = approval('a2', 'c2', { status: 'queued' });
    let state = applyEvents(emptyChat('s1'), [
      ev('run_started', { run: { id: 'r1' }, prompt: 'plan it' }),
      ev('tool_call_started', {
        call_id: 'c1',
        name: 'bash_run',
        arguments: {}
      }),
      ev('plan_item_queued', { approval: item1 }),
      ev('tool_call_started', {
        call_id: 'c2',
        name: 'bash_run',
        arguments: {}
      }),
      ev('plan_item_queued', { approval: item2 }),
      ev('finish', { reason: 'stop' })
    ]);
    expect(state.plan.map(a => a.id)).toEqual(['a1', 'a2']);
    expect(state.tools.c1.status).toBe('queued');
    state = applyEvent(
      state,
      ev('plan_applied', {
        run_id: undefined,
        outcomes: [
          {
            approval_id: 'a1',
            status: 'approved',
            result: 'ok',
            is_error: false
          },
          {
            approval_id: 'a2',
            status: 'failed',
            result: 'changed',
            is_error: true
          }
        ],
        stopped: true
      })
    );
    expect(state.plan.map(a => a.id)).toEqual(['a2']);
    expect(state.tools.c1.status).toBe('done');
    expect(state.tools.c2.status).toBe('queued');
    const parts = state.turns[0].parts;
    expect(parts[parts.length - 1]).toMatchObject({
      kind: 'note',
      tone: 'warning'
    });
  });

  it('keeps todos, rules and suggestions; asks for a reload on resync', () => {
    seq = 0;
    let state = applyEvents(emptyChat('s1'), [
      ev('todos', { todos: [{ content: 'a', status: 'pending' }] }),
      ev('rules', { rules: [{ tool: 'bash_run', command_prefix: 'ls' }] }),
      ev('suggestion', { command: 'npm start', explanation: 'serve' })
    ]);
    expect(state.todos).toHaveLength(1);
    expect(state.rules[0].command_prefix).toBe('ls');
    expect(state.suggestion?.command).toBe('npm start');
    state = applyEvent(state, { type: 'resync', seq: 99, session_id: 's1' });
    expect(state.stale).toBe(true);
    state = applyEvent(state, ev('deleted'));
    expect(state.deleted).toBe(true);
  });
});

describe('buildChat', () => {
  const messages = [
    {
      id: 1,
      run_id: 'r1',
      role: 'user',
      content: 'run it',
      status: 'complete'
    },
    {
      id: 2,
      run_id: 'r1',
      role: 'assistant',
      content: 'Sure.',
      reasoning: 'easy',
      tool_calls: [
        { id: 'c1', name: 'bash_run', arguments: { command: 'ls' } }
      ],
      status: 'complete'
    },
    {
      id: 3,
      run_id: 'r1',
      role: 'tool',
      content: 'a b',
      tool_call_id: 'c1',
      status: 'complete'
    },
    {
      id: 4,
      run_id: 'r1',
      role: 'assistant',
      content: 'Done.',
      status: 'complete'
    },
    {
      id: 5,
      run_id: null,
      role: 'user',
      content:
        '[The user discarded the plan (1 items); nothing of it was applied.]',
      status: 'complete'
    },
    { id: 6, run_id: 'r2', role: 'user', content: 'next', status: 'complete' },
    {
      id: 7,
      run_id: 'r2',
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'c2', name: 'bash_run', arguments: { command: 'rm x' } }
      ],
      status: 'complete'
    }
  ];
  const records = [
    {
      id: 'c1',
      run_id: 'r1',
      name: 'bash_run',
      arguments: { command: 'ls' },
      status: 'done',
      result: 'a b',
      data: { exit_code: 0 },
      is_error: false,
      duration_ms: 7
    }
  ];

  it('rebuilds turns, cards, notes and the pending approval', () => {
    const state = buildChat(
      session({
        run: { id: 'r2', steps: 1 },
        pending_approvals: [approval('a2', 'c2', { run_id: 'r2' })],
        last_seq: 42
      }),
      messages,
      records
    );
    expect(state.turns.map(t => t.prompt)).toEqual(['run it', 'next']);
    expect(state.turns[0].parts).toEqual([
      { kind: 'reasoning', text: 'easy' },
      { kind: 'text', text: 'Sure.' },
      { kind: 'tool', callId: 'c1' },
      { kind: 'text', text: 'Done.' },
      {
        kind: 'note',
        text: 'The user discarded the plan (1 items); nothing of it was applied.',
        tone: 'info'
      }
    ]);
    expect(state.tools.c1).toMatchObject({ status: 'done', durationMs: 7 });
    expect(state.tools.c2).toMatchObject({
      status: 'pending_approval',
      approvalId: 'a2'
    });
    expect(state.turns[1].running).toBe(true);
    expect(state.running).toBe(true);
    expect(state.lastSeq).toBe(42);
    expect(state.usage).toEqual({
      input: 10,
      output: 5,
      cached: 0,
      cost: null
    });
    // Events after the reload continue the same turn.
    const next = applyEvent(state, {
      type: 'approval_resolved',
      seq: 43,
      session_id: 's1',
      time: 0,
      run_id: 'r2',
      approval: approval('a2', 'c2', { status: 'denied' })
    });
    expect(next.approvals).toEqual([]);
    expect(next.tools.c2.approval).toBe('denied');
  });

  it('keeps per-turn usage from the live state', () => {
    const first = applyEvents(emptyChat('s1'), live());
    const rebuilt = buildChat(session(), messages, records, first);
    expect(rebuilt.turns[0].usage).toEqual({
      input: 100,
      output: 20,
      cached: 0,
      cost: null
    });
    expect(rebuilt.tools.c2.status).toBe('cancelled');
  });
});

describe('composer helpers', () => {
  it('finds slash commands', () => {
    expect(slashCommand('/plan')).toBe('plan');
    expect(slashCommand(' /init ')).toBe('init');
    expect(slashCommand('/plan this')).toBeNull();
    expect(slashCommand('hello')).toBeNull();
  });

  it('reads /replay with its inputs, quoted or not', () => {
    expect(replayCommand('/replay sign-in')).toEqual({
      workflow: 'sign-in',
      inputs: {}
    });
    expect(
      replayCommand(
        '/replay sign-in username=bob password="pw with \\"quotes\\"" note=\'a b\''
      )
    ).toEqual({
      workflow: 'sign-in',
      inputs: { username: 'bob', password: 'pw with "quotes"', note: 'a b' }
    });
    expect(replayCommand('/replay x empty=')).toEqual({
      workflow: 'x',
      inputs: { empty: '' }
    });
    expect(replayCommand('replay sign-in')).toBeNull();
    expect(replayCommand('/replays')).toBeNull();
    expect(replayCommand('/replay')).toMatch(/Name the workflow/);
    expect(replayCommand('/replay Bad_Name')).toMatch(/Name the workflow/);
    expect(replayCommand('/replay x user bob')).toMatch(
      /Cannot read the inputs/
    );
    expect(replayCommand('/replay x a="unterminated')).toMatch(
      /Cannot read the inputs/
    );
  });

  it('finds the @ or # word at the caret', () => {
    expect(tokenAtCaret('read @src/ap now', 12, '@')).toEqual({
      start: 5,
      end: 12,
      query: 'src/ap'
    });
    expect(tokenAtCaret('mail a@b', 8, '@')).toBeNull();
    expect(tokenAtCaret('#fix', 4, '#')).toEqual({
      start: 0,
      end: 4,
      query: 'fix'
    });
    expect(tokenAtCaret('no token', 3, '#')).toBeNull();
  });

  it('expands known snippets only', () => {
    expect(
      expandSnippets('#review this and #nope', { review: 'Review carefully:' })
    ).toBe('Review carefully: this and #nope');
  });

  it('adds attachments to the prompt', () => {
    const prompt = promptWithAttachments('Why?', [
      { kind: 'file', path: 'src/app.py' },
      {
        kind: 'selection',
        label: 'x',
        text: 'a ``` b',
        path: 'x.py',
        language: 'python'
      },
      { kind: 'block', label: 'ls', markdown: '`ls`' }
    ]);
    expect(prompt).toContain('- src/app.py');
    expect(prompt).toContain('````python\na ``` b\n````');
    expect(prompt).toContain('Terminal block:\n`ls`');
    expect(promptWithAttachments('plain', [])).toBe('plain');
    expect(fenceFor('none')).toBe('```');
  });

  it('attaches a notebook cell by notebook and id, with its error', () => {
    const traceback = [
      '\x1b[0;31m----------\x1b[0m',
      '\x1b[0;31mZeroDivisionError\x1b[0m  Traceback (most recent call last)',
      'Cell \x1b[0;32mIn[2], line 1\x1b[0m\n----> 1 1/0',
      '\x1b[0;31mZeroDivisionError\x1b[0m: division by zero'
    ];
    const error = errorText({
      ename: 'ZeroDivisionError',
      evalue: 'division by zero',
      traceback
    });
    expect(error).not.toContain('\x1b');
    expect(error.split('\n').pop()).toBe('ZeroDivisionError: division by zero');
    // Without a traceback: the name and the value.
    expect(errorText({ ename: 'KeyError', evalue: "'x'" })).toBe(
      "KeyError: 'x'"
    );
    // A long traceback keeps its end (the error line).
    const long = errorText({
      traceback: ['x'.repeat(20000), 'ValueError: bad']
    });
    expect(long.length).toBeLessThan(8100);
    expect(long.startsWith('…')).toBe(true);
    expect(long.endsWith('ValueError: bad')).toBe(true);

    const cell = {
      kind: 'cell' as const,
      label: 'a.ipynb cell',
      path: 'work/a.ipynb',
      cellId: 'c-1',
      source: 'print(1/0)',
      language: 'python',
      error
    };
    const prompt = promptWithAttachments('Fix it.', [cell]);
    expect(prompt).toContain('Notebook cell work/a.ipynb#c-1 (notebook_read');
    expect(prompt).toContain('```python\nprint(1/0)\n```');
    expect(prompt).toContain('Its error:\n```\n');
    expect(prompt.endsWith('ZeroDivisionError: division by zero\n```')).toBe(
      true
    );
    const plainCell = { ...cell, error: undefined };
    expect(promptWithAttachments('Why?', [plainCell])).not.toContain(
      'Its error'
    );
    const split = splitPrompt(prompt);
    expect(split.text).toBe('Fix it.');
    expect(`${split.text}\n\n${split.context}`).toBe(prompt);
  });

  it('splits a sent prompt into what was typed and its context', () => {
    const selection = {
      kind: 'selection' as const,
      label: 'x',
      text: 'x = 1',
      path: 'x.py',
      language: 'python'
    };
    for (const attachments of [
      [{ kind: 'file' as const, path: 'a.py' }],
      [selection],
      [{ kind: 'block' as const, label: 'ls', markdown: '`ls`' }],
      [{ kind: 'file' as const, path: 'a.py' }, selection]
    ]) {
      const prompt = promptWithAttachments('Why?\n\nReally.', attachments);
      const split = splitPrompt(prompt);
      expect(split.text).toBe('Why?\n\nReally.');
      expect(`${split.text}\n\n${split.context}`).toBe(prompt);
    }
    // Typed text that merely mentions a heading mid-line stays whole.
    const typed = 'Look at the Terminal block: it failed.\n\nAnd then?';
    expect(splitPrompt(typed)).toEqual({ text: typed, context: null });
  });

  it('lists own prompts newest first without repeats', () => {
    seq = 0;
    const state = applyEvents(emptyChat('s1'), [
      ev('run_started', {
        run_id: 'a',
        run: { id: 'a', steps: 0 },
        prompt: 'one'
      }),
      ev('run_started', {
        run_id: 'b',
        run: { id: 'b', steps: 0 },
        prompt: 'two'
      }),
      ev('run_started', {
        run_id: 'c',
        run: { id: 'c', steps: 0 },
        prompt: 'one'
      })
    ]);
    expect(promptHistory(state)).toEqual(['one', 'two']);
  });
});

describe('views', () => {
  it('maps error reasons to actions and finds key names', () => {
    expect(errorAction('bad_key')).toBe('settings');
    expect(errorAction('key_not_for_url')).toBe('settings');
    expect(errorAction('provider_unreachable')).toBe('test');
    expect(errorAction('rate_limited')).toBe('retry');
    expect(errorAction('context_too_long')).toBe('new-session');
    expect(errorAction('whatever')).toBeNull();
    expect(keyNameIn('Set OPENAI_API_KEY in settings.')).toBe('OPENAI_API_KEY');
    expect(keyNameIn('no key here')).toBeNull();
  });

  it('formats tokens and tool subjects', () => {
    expect(formatTokens(950)).toBe('950');
    expect(formatTokens(12_345)).toBe('12k');
    expect(formatTokens(1_234)).toBe('1.2k');
    expect(formatTokens(2_500_000)).toBe('2.5M');
    expect(
      toolSubject({ name: 'bash_run', arguments: { command: 'ls\nx' } })
    ).toBe('ls');
    expect(toolSubject({ name: 'todo_write', arguments: null })).toBe('');
    expect(
      toolSubject({
        name: 'browser_open',
        arguments: { url: 'http://localhost:5173/' }
      })
    ).toBe('http://localhost:5173/');
    expect(
      toolSubject({
        name: 'browser_click',
        arguments: { role: 'button', name: 'Sign in' }
      })
    ).toBe('Sign in');
  });
});

describe('cost', () => {
  it('adds the cost of priced calls and stays unknown without prices', () => {
    let state = applyEvents(emptyChat('s1'), [
      ev('run_started', { run: { id: 'r1', steps: 0 }, prompt: 'x' }),
      ev('usage', {
        input_tokens: 1000,
        output_tokens: 100,
        cached_tokens: 0,
        cost: 0.0045
      }),
      ev('usage', {
        input_tokens: 1000,
        output_tokens: 100,
        cached_tokens: 0,
        cost: 0.0045
      })
    ]);
    expect(state.usage.cost).toBeCloseTo(0.009);
    state = applyEvents(emptyChat('s2'), [
      ev('run_started', { run: { id: 'r2', steps: 0 }, prompt: 'x' }),
      ev('usage', {
        input_tokens: 10,
        output_tokens: 1,
        cached_tokens: 0,
        cost: null
      })
    ]);
    expect(state.usage.cost).toBeNull();
  });

  it('formats small and large amounts', () => {
    expect(formatCost(0)).toBe('$0');
    expect(formatCost(0.0045)).toBe('$0.0045');
    expect(formatCost(0.125)).toBe('$0.125');
    expect(formatCost(12.5)).toBe('$12.50');
  });
});

describe('workflowApprovalDetails', () => {
  const proposal = (
    kind: IChatApproval['proposal']['kind'],
    shown: Record<string, unknown> | undefined
  ): IChatApproval['proposal'] => ({
    tool: 'browser_run_destructive_workflow',
    kind,
    summary: 'Replay destructive workflow',
    path: null,
    command: 'On http://127.0.0.1:9/items',
    diff: null,
    hunks: [],
    payload: { name: 'delete-item', inputs: { who: 'mallory' }, shown }
  });

  it('shows scope, origin, version, the start page and the exact steps', () => {
    const details = workflowApprovalDetails(
      proposal('replay', {
        scope: 'http://127.0.0.1:9',
        origin: 'http://127.0.0.1:9',
        version: 3,
        side_effect: 'destructive',
        url: 'http://127.0.0.1:9/items',
        title: 'Items',
        steps: [
          { kind: 'navigate', url: 'http://127.0.0.1:9/items' },
          { kind: 'type', role: 'textbox', name: 'Who', value: '{{who}}' },
          { kind: 'click', role: 'button', name: 'Confirm delete' }
        ]
      })
    );
    expect(details).toEqual({
      scope: 'http://127.0.0.1:9',
      origin: 'http://127.0.0.1:9',
      version: 3,
      sideEffect: 'destructive',
      previousVersion: null,
      previousSideEffect: null,
      page: 'http://127.0.0.1:9/items (Items)',
      steps: [
        'open http://127.0.0.1:9/items',
        "type {{who}} into textbox 'Who'",
        "click button 'Confirm delete'"
      ],
      // What will be typed is shown with the steps: it is part of what is approved.
      inputs: [{ name: 'who', value: 'mallory', secret: false }]
    });
  });

  it('masks inputs typed into password-like fields and skips bare placeholders', () => {
    const details = workflowApprovalDetails({
      ...proposal('replay', {
        scope: 'http://127.0.0.1:9',
        origin: 'http://127.0.0.1:9',
        version: 1,
        side_effect: 'mutating',
        steps: [
          { kind: 'type', role: 'textbox', name: 'Password', value: '{{pw}}' },
          { kind: 'type', role: 'textbox', name: 'User', value: '{{user}}' },
          { kind: 'type', role: 'textbox', name: 'Note', value: '{{note}}' }
        ]
      }),
      payload: {
        inputs: {
          user: 'bob',
          pw: 'hunter2',
          note: '{{note}}',
          api_token: 'x'
        },
        shown: {
          steps: [
            { kind: 'type', role: 'textbox', name: 'Password', value: '{{pw}}' }
          ]
        }
      }
    });
    expect(details?.inputs).toEqual([
      { name: 'api_token', value: 'x', secret: true },
      { name: 'pw', value: 'hunter2', secret: true },
      { name: 'user', value: 'bob', secret: false }
    ]);
  });

  it('shows what a save replaces and never a typed literal', () => {
    const details = workflowApprovalDetails(
      proposal('workflow', {
        scope: 'http://127.0.0.1:9',
        origin: 'http://127.0.0.1:9',
        version: 2,
        previous_version: 1,
        side_effect: 'read_only',
        previous_side_effect: 'destructive',
        steps: [
          { kind: 'type', role: 'textbox', name: 'Who', value: 'mallory' }
        ]
      })
    );
    expect(details?.previousVersion).toBe(1);
    expect(details?.previousSideEffect).toBe('destructive');
    expect(details?.page).toBeNull();
    expect(details?.steps).toEqual(["type (a value) into textbox 'Who'"]);
  });

  it('is null for other proposals and for replays without details', () => {
    expect(workflowApprovalDetails(proposal('command', {}))).toBeNull();
    expect(workflowApprovalDetails(proposal('replay', undefined))).toBeNull();
  });
});

describe('answers cut by the output limit or a content filter', () => {
  function cutRun(cut: Record<string, unknown>): IChatEvent[] {
    seq = 0;
    return [
      ev('run_started', { run: { id: 'r1', steps: 0 }, prompt: 'write it' }),
      ev('step', { index: 1 }),
      ev('tool_call_streaming', { call_id: 'c1', name: 'write_file' }),
      ev('answer_cut', cut),
      ev('tool_call_finished', {
        call_id: 'c1',
        name: 'write_file',
        status: 'error',
        is_error: true,
        content: '[Not run: the output limit of 4096 tokens cut this call off]',
        data: { reason: 'output_limit' }
      }),
      ev('finish', { ...cut, cut: cut.reason, reason: 'output_limit' })
    ];
  }
  const toolCut = {
    reason: 'length',
    tools: ['write_file'],
    max_output_tokens: 4096,
    continue_max_output_tokens: 8192
  };

  it('notes a tool call the limit cut off, with the higher limit', () => {
    const state = applyEvents(emptyChat('s1'), cutRun(toolCut));
    const [turn] = state.turns;
    expect(turn.finish).toBe('output_limit');
    expect(turn.cut).toEqual({
      reason: 'length',
      tools: ['write_file'],
      limit: 4096,
      continueLimit: 8192
    });
    expect(cutNote(turn.cut!)).toBe(
      'The output limit (4,096 tokens) cut off the call to write_file before ' +
        'its arguments were complete, so nothing was run.'
    );
    expect(state.tools.c1.status).toBe('error');
    expect(state.running).toBe(false);
  });

  it('takes the cut from the finish alone (a client that joined late)', () => {
    const events = cutRun(toolCut).filter(e => e.type !== 'answer_cut');
    const [turn] = applyEvents(emptyChat('s1'), events).turns;
    expect(turn.cut?.continueLimit).toBe(8192);
    expect(turn.cut?.tools).toEqual(['write_file']);
  });

  it('says why a text answer stopped, and nothing for one that ended', () => {
    seq = 0;
    const filtered = applyEvents(emptyChat('s1'), [
      ev('run_started', { run: { id: 'r1' }, prompt: 'x' }),
      ev('text_delta', { text: 'Half' }),
      ev('answer_cut', { reason: 'content_filter', tools: [] }),
      ev('finish', { reason: 'content_filter', cut: 'content_filter' })
    ]).turns[0];
    expect(filtered.cut?.continueLimit).toBeNull();
    expect(cutNote(filtered.cut!)).toBe(
      "The provider's content filter stopped the answer."
    );
    expect(
      cutNote({ reason: 'length', tools: [], limit: 8192, continueLimit: null })
    ).toBe('The answer was cut off at the output limit (8,192 tokens).');
    seq = 0;
    const ended = applyEvents(emptyChat('s1'), [
      ev('run_started', { run: { id: 'r1' }, prompt: 'x' }),
      ev('text_delta', { text: 'All' }),
      ev('finish', { reason: 'stop' })
    ]).turns[0];
    expect(ended.cut).toBeNull();
  });

  it("puts a sub-agent's cut into its card", () => {
    seq = 0;
    const state = applyEvents(emptyChat('s1'), [
      ev('run_started', { run: { id: 'r1' }, prompt: 'explore' }),
      ev('tool_call_started', {
        call_id: 'c1',
        name: 'run_subagent',
        arguments: { agent: 'explore', task: 'look' }
      }),
      ev('answer_cut', {
        reason: 'length',
        tools: [],
        max_output_tokens: 4096,
        parent_call_id: 'c1'
      })
    ]);
    expect(state.turns[0].cut).toBeNull();
    expect(state.tools.c1.children).toEqual([
      {
        kind: 'note',
        text: 'The answer was cut off at the output limit (4,096 tokens).',
        tone: 'warning'
      }
    ]);
  });

  it('keeps the cut through the reload at the finish', () => {
    const first = applyEvents(emptyChat('s1'), cutRun(toolCut));
    const rebuilt = buildChat(
      session(),
      [
        {
          id: 1,
          run_id: 'r1',
          role: 'user',
          content: 'write it',
          status: 'complete'
        },
        {
          id: 2,
          run_id: 'r1',
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'c1', name: 'write_file', arguments: {} }],
          status: 'cut'
        }
      ],
      [],
      first
    );
    expect(rebuilt.turns[0].cut).toEqual(first.turns[0].cut);
  });

  it('shows one note for a cut text answer after the reload', () => {
    seq = 0;
    const first = applyEvents(emptyChat('s1'), [
      ev('run_started', { run: { id: 'r1' }, prompt: 'x' }),
      ev('text_delta', { text: 'Half' }),
      ev('answer_cut', { reason: 'content_filter', tools: [] }),
      ev('finish', { reason: 'content_filter', cut: 'content_filter' })
    ]);
    const stored = [
      { id: 1, run_id: 'r1', role: 'user', content: 'x', status: 'complete' },
      { id: 2, run_id: 'r1', role: 'assistant', content: 'Half', status: 'cut' }
    ];
    const rebuilt = buildChat(session(), stored, [], first);
    expect(rebuilt.turns[0].parts).toEqual([{ kind: 'text', text: 'Half' }]);
    expect(rebuilt.turns[0].cut?.reason).toBe('content_filter');
    // A page loaded afresh knows only the stored status.
    expect(buildChat(session(), stored, []).turns[0].parts).toEqual([
      { kind: 'text', text: 'Half' },
      { kind: 'note', text: 'The answer was cut off.', tone: 'warning' }
    ]);
  });
});

describe('@notebook.ipynb#cell mentions', () => {
  const cells: INotebookCellInfo[] = [
    { id: 'intro', type: 'markdown', source: '# Loading the data\n\nText.' },
    {
      id: 'load-data-1',
      type: 'code',
      source: '\n  df = pd.read_csv("a.csv")  \nprint(df)',
      language: 'python'
    },
    {
      id: 'plot',
      type: 'code',
      source: 'df.plot()',
      language: 'python',
      error: {
        ename: 'KeyError',
        evalue: "'x'",
        traceback: ["\x1b[31mKeyError\x1b[0m: 'x'"]
      }
    }
  ];

  it('finds the mention the caret is in', () => {
    const text = 'why @work/nb.ipynb#lo now';
    expect(cellMentionAtCaret(text, 21)).toEqual({
      start: 4,
      end: 21,
      path: 'work/nb.ipynb',
      query: 'lo'
    });
    // Right after `#`: every cell.
    expect(cellMentionAtCaret('@nb.ipynb#', 10)).toEqual({
      start: 0,
      end: 10,
      path: 'nb.ipynb',
      query: ''
    });
    // An id with dashes, the caret inside it.
    expect(cellMentionAtCaret('@nb.ipynb#load-data-1 x', 14)?.query).toBe(
      'load'
    );
    // Not a notebook, no `#` yet, or a snippet word: no mention.
    expect(cellMentionAtCaret('@src/a.py#x', 11)).toBeNull();
    expect(cellMentionAtCaret('@nb.ipynb', 9)).toBeNull();
    expect(cellMentionAtCaret('#nb.ipynb#x', 11)).toBeNull();
    expect(cellMentionAtCaret('mail a@nb.ipynb#x', 17)).toBeNull();
  });

  it('finds every mention in a prompt', () => {
    const text =
      'Compare @a.ipynb#load-data-1 and @dir/b.ipynb#c_2, then @a.ipynb#plot.\n' +
      '@x.py#nope @c.ipynb# mail@d.ipynb#e';
    expect(cellMentions(text)).toEqual([
      { start: 8, end: 28, path: 'a.ipynb', cellId: 'load-data-1' },
      { start: 33, end: 49, path: 'dir/b.ipynb', cellId: 'c_2' },
      { start: 56, end: 69, path: 'a.ipynb', cellId: 'plot' }
    ]);
    // Like `@path`, a mention is one word: a path with spaces is not one.
    expect(cellMentions('see @my notes.ipynb#abc')).toEqual([]);
    expect(cellMentions('@My Notebook.IPYNB#abc')).toEqual([]);
    expect(cellMentions('@Upper.IPYNB#abc')[0].path).toBe('Upper.IPYNB');
  });

  it('filters the cells offered by id or source', () => {
    expect(filterCells(cells, '').map(c => c.id)).toEqual([
      'intro',
      'load-data-1',
      'plot'
    ]);
    expect(filterCells(cells, 'plot').map(c => c.id)).toEqual(['plot']);
    expect(filterCells(cells, 'read_csv').map(c => c.id)).toEqual([
      'load-data-1'
    ]);
    // Fuzzy on the id; the id's match first.
    expect(filterCells(cells, 'ld1').map(c => c.id)).toEqual(['load-data-1']);
    expect(filterCells(cells, 'load').map(c => c.id)).toEqual([
      'load-data-1',
      'intro'
    ]);
    expect(filterCells(cells, 'zzz')).toEqual([]);
    expect(filterCells(cells, '', 2)).toHaveLength(2);
    expect(firstLine(cells[1].source)).toBe('df = pd.read_csv("a.csv")');
    expect(firstLine('')).toBe('');
  });

  it('reads the cells of nbformat JSON', () => {
    const read = notebookCells({
      metadata: { language_info: { name: 'python' } },
      cells: [
        { id: 'a', cell_type: 'code', source: ['x = 1\n', 'y'], outputs: [] },
        { cell_type: 'code', source: 'no id' },
        {
          id: 'b',
          cell_type: 'code',
          source: '1/0',
          outputs: [
            { output_type: 'stream', text: 'hi' },
            { output_type: 'error', ename: 'ZeroDivisionError', evalue: 'x' }
          ]
        }
      ]
    });
    expect(read.map(c => [c.id, c.source])).toEqual([
      ['a', 'x = 1\ny'],
      ['b', '1/0']
    ]);
    expect(read[1].error?.ename).toBe('ZeroDivisionError');
    expect(read[0].language).toBe('python');
    expect(notebookCells(null)).toEqual([]);
    expect(notebookCells({ content: 'not a notebook' })).toEqual([]);
  });

  it('makes the same attachment as attaching the cell', () => {
    const label = (name: string, ename: string | null): string =>
      ename === null ? `${name} cell` : `${name} cell (${ename})`;
    const attachment = cellAttachment('w/nb.ipynb', cells[2], label);
    expect(attachment).toEqual({
      kind: 'cell',
      label: 'nb.ipynb cell (KeyError)',
      path: 'w/nb.ipynb',
      cellId: 'plot',
      source: 'df.plot()',
      language: 'python',
      error: "KeyError: 'x'"
    });
    expect(cellAttachment('nb.ipynb', cells[0], label)).toMatchObject({
      label: 'nb.ipynb cell',
      language: 'markdown',
      error: undefined
    });
  });

  it('resolves the mentions of a prompt when it is sent', async () => {
    const loads: string[] = [];
    const load = async (path: string) => {
      loads.push(path);
      return path === 'nb.ipynb' ? cells : null;
    };
    const resolved = await resolveCellMentions(
      'Fix @nb.ipynb#plot, like @nb.ipynb#load-data-1 and @nb.ipynb#plot',
      load
    );
    expect('attachments' in resolved && resolved.attachments).toMatchObject([
      { kind: 'cell', cellId: 'plot', error: "KeyError: 'x'" },
      { kind: 'cell', cellId: 'load-data-1', source: cells[1].source }
    ]);
    // Each notebook is read once.
    expect(loads).toEqual(['nb.ipynb']);
    const prompt = promptWithAttachments(
      'Fix it.',
      'attachments' in resolved ? resolved.attachments : []
    );
    expect(prompt).toContain('Notebook cell nb.ipynb#plot (notebook_read');
    expect(prompt).toContain('Its error:');

    // An unknown id, or notebook: what is missing, nothing attached.
    expect(
      await resolveCellMentions('see @nb.ipynb#plot and @nb.ipynb#gone', load)
    ).toEqual({
      missing: { start: 23, end: 37, path: 'nb.ipynb', cellId: 'gone' },
      reason: 'cell'
    });
    expect(await resolveCellMentions('@other.ipynb#a', load)).toMatchObject({
      reason: 'notebook',
      missing: { path: 'other.ipynb' }
    });
    const failing = async (): Promise<null> => {
      throw new Error('offline');
    };
    expect(await resolveCellMentions('@nb.ipynb#a', failing)).toMatchObject({
      reason: 'notebook'
    });
    // No mentions: nothing to read.
    expect(await resolveCellMentions('plain #snippet @a.py', load)).toEqual({
      attachments: []
    });
  });
});
