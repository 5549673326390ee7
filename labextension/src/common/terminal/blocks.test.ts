import { describe, expect, it } from 'vitest';

import { BlockLedger, lastAtOrBefore, type IServerBlock } from './blocks';

function server(
  id: number,
  command: string,
  exit: number | null = 0
): IServerBlock {
  return {
    id,
    command,
    cwd: '/projects',
    exit_code: exit,
    started_at: 1000 + id,
    ended_at: exit === null ? null : 1001 + id,
    duration_ms: exit === null ? null : 12,
    running: exit === null
  };
}

describe('BlockLedger', () => {
  it('numbers live blocks of a fresh session from 1', () => {
    const ledger = new BlockLedger<string>();
    ledger.attach(0);
    expect(ledger.replaying).toBe(false);
    const first = ledger.start('echo hi', '/projects', 'h1');
    expect(ledger.running).toBe(first);
    ledger.end(0);
    const second = ledger.start('false', '/projects', 'h2');
    ledger.end(1);
    expect(ledger.serverId(first)).toBe(1);
    expect(ledger.serverId(second)).toBe(2);
    expect(first.exitCode).toBe(0);
    expect(second.exitCode).toBe(1);
    expect(ledger.running).toBeNull();
  });

  it('maps replayed marks to the newest blocks at attach time', () => {
    const ledger = new BlockLedger<string>();
    ledger.attach(5);
    expect(ledger.replaying).toBe(true);
    // The ring kept the marks of the last three commands only.
    const replayed = ['c', 'd', 'e'].map(c => ledger.start(c, null, c));
    ledger.endReplay();
    const live = ledger.start('f', null, 'f');
    // A block that started while the list was being fetched is included.
    ledger.setServerBlocks(
      ['a', 'b', 'c', 'd', 'e', 'f'].map((c, i) => server(i + 1, c))
    );
    expect(replayed.map(e => ledger.serverId(e))).toEqual([3, 4, 5]);
    expect(ledger.serverId(live)).toBe(6);
    expect(ledger.info(replayed[0])?.duration_ms).toBe(12);
  });

  it('learns the base id from the first live start event', () => {
    const ledger = new BlockLedger<string>();
    ledger.attach(2);
    const old = ledger.start('ls', null, 'old');
    ledger.end(0);
    ledger.endReplay();
    const fresh = ledger.start('pwd', null, 'new');
    expect(ledger.serverId(fresh)).toBeNull();
    const matched = ledger.update(server(42, 'pwd', null), 'start');
    expect(matched).toBe(fresh);
    expect(ledger.serverId(fresh)).toBe(42);
    expect(ledger.serverId(old)).toBe(41);
  });

  it('matches events that arrive before their mark is parsed', () => {
    const ledger = new BlockLedger<string>();
    ledger.attach(0);
    expect(ledger.update(server(1, 'sleep 1', null), 'start')).toBeNull();
    const entry = ledger.start('sleep 1', null, 'h');
    expect(ledger.info(entry)?.running).toBe(true);
    expect(ledger.update(server(1, 'sleep 1', 0), 'end')).toBe(entry);
    expect(ledger.info(entry)?.exit_code).toBe(0);
  });

  it('gives no record when the commands disagree', () => {
    const ledger = new BlockLedger<string>();
    ledger.attach(0);
    const entry = ledger.start('echo a', null, 'h');
    ledger.update(server(1, 'echo b'), 'start');
    expect(ledger.info(entry)).toBeNull();
  });

  it('ends a block whose end mark was lost', () => {
    const ledger = new BlockLedger<string>();
    ledger.attach(0);
    const first = ledger.start('a', null, 'a');
    ledger.start('b', null, 'b');
    expect(first.exitCode).toBeNull();
  });

  it('forgets removed entries without renumbering the others', () => {
    const ledger = new BlockLedger<string>();
    ledger.attach(0);
    const first = ledger.start('a', null, 'a');
    ledger.end(0);
    const second = ledger.start('b', null, 'b');
    ledger.remove(first);
    expect(ledger.entries).toEqual([second]);
    expect(ledger.serverId(second)).toBe(2);
  });
});

describe('lastAtOrBefore', () => {
  const lines = [2, 5, 5, 9];
  const find = (line: number): number =>
    lastAtOrBefore(lines.length, i => lines[i], line);

  it('finds the last item starting at or before a line', () => {
    expect(find(1)).toBe(-1);
    expect(find(2)).toBe(0);
    expect(find(6)).toBe(2);
    expect(find(100)).toBe(3);
    expect(lastAtOrBefore(0, () => 0, 5)).toBe(-1);
  });
});
