import { describe, expect, it } from 'vitest';

import {
  changeCount,
  groupStatus,
  headLabel,
  type IBranchLike,
  messageSubject,
  pushPlan,
  splitEntryPath,
  statusCode
} from './status';

const branch: IBranchLike = {
  head: 'main',
  oid: '0123456789abcdef',
  detached: false,
  unborn: false,
  upstream: 'origin/main',
  ahead: 0,
  behind: 0
};

const entry = (path: string, status = 'modified') => ({
  path,
  old_path: null,
  status
});

describe('groupStatus', () => {
  it('orders groups, leaves out empty ones and sorts paths', () => {
    const groups = groupStatus({
      branch,
      staged: [entry('b.py'), entry('A.py')],
      unstaged: [],
      untracked: [entry('new.txt', 'untracked')],
      conflicted: [entry('c.py', 'unmerged')]
    });
    expect(groups.map(g => g.id)).toEqual([
      'conflicted',
      'staged',
      'untracked'
    ]);
    expect(groups[1].entries.map(e => e.path)).toEqual(['A.py', 'b.py']);
  });

  it('counts a file staged and changed again once', () => {
    expect(
      changeCount({
        branch,
        staged: [entry('a.py')],
        unstaged: [entry('a.py')],
        untracked: [entry('b.py')],
        conflicted: []
      })
    ).toBe(2);
  });
});

describe('labels', () => {
  it('gives one-letter codes', () => {
    expect(statusCode('modified')).toBe('M');
    expect(statusCode('renamed')).toBe('R');
    expect(statusCode('untracked')).toBe('U');
    expect(statusCode('strange')).toBe('?');
  });

  it('names the branch, a detached HEAD or an unborn branch', () => {
    expect(headLabel(branch)).toEqual({ kind: 'branch', text: 'main' });
    expect(headLabel({ ...branch, head: null, detached: true })).toEqual({
      kind: 'detached',
      text: '0123456'
    });
    expect(
      headLabel({ ...branch, oid: null, unborn: true, upstream: null })
    ).toEqual({ kind: 'unborn', text: 'main' });
  });

  it('splits paths and finds the subject', () => {
    expect(splitEntryPath('src/pkg/a.py')).toEqual({
      name: 'a.py',
      dir: 'src/pkg'
    });
    expect(splitEntryPath('a.py')).toEqual({ name: 'a.py', dir: '' });
    expect(splitEntryPath('sub/')).toEqual({ name: 'sub', dir: '' });
    expect(messageSubject('\n  Fix it  \n\nbody')).toBe('Fix it');
    expect(messageSubject(' \n ')).toBe('');
  });
});

describe('pushPlan', () => {
  it('pushes the commits ahead', () => {
    expect(pushPlan({ ...branch, ahead: 2 }, ['origin'])).toEqual({
      kind: 'push',
      upstream: 'origin/main',
      ahead: 2
    });
    expect(pushPlan(branch, ['origin'])).toEqual({
      kind: 'up-to-date',
      upstream: 'origin/main'
    });
  });

  it('says it will set an upstream, preferring origin', () => {
    expect(
      pushPlan({ ...branch, head: 'feature', upstream: null }, [
        'fork',
        'origin'
      ])
    ).toEqual({ kind: 'set-upstream', remote: 'origin', branch: 'feature' });
    expect(pushPlan({ ...branch, upstream: null }, ['fork'])).toEqual({
      kind: 'set-upstream',
      remote: 'fork',
      branch: 'main'
    });
  });

  it('has nothing to push without a remote or on a detached HEAD', () => {
    expect(pushPlan({ ...branch, upstream: null }, [])).toEqual({
      kind: 'unavailable'
    });
    expect(pushPlan({ ...branch, detached: true }, ['origin'])).toEqual({
      kind: 'unavailable'
    });
  });
});
