import { describe, expect, it } from 'vitest';

import { HistoryNavigator, inlineCompletion, mergeHistory } from './history';

describe('HistoryNavigator', () => {
  it('walks older and back to the draft', () => {
    const nav = new HistoryNavigator();
    nav.begin('', ['ls', 'pwd', 'ls', 'echo hi']);
    expect(nav.active).toBe(false);
    expect(nav.older()).toBe('ls');
    expect(nav.active).toBe(true);
    expect(nav.older()).toBe('pwd');
    expect(nav.older()).toBe('echo hi');
    expect(nav.older()).toBeNull();
    expect(nav.newer()).toBe('pwd');
    expect(nav.newer()).toBe('ls');
    expect(nav.newer()).toBe('');
    expect(nav.active).toBe(false);
    expect(nav.newer()).toBeNull();
  });

  it('only visits commands that extend the draft', () => {
    const nav = new HistoryNavigator();
    nav.begin('git', ['ls', 'git status', 'git', 'git log']);
    expect(nav.older()).toBe('git status');
    expect(nav.older()).toBe('git log');
    expect(nav.older()).toBeNull();
    expect(nav.newer()).toBe('git status');
    expect(nav.newer()).toBe('git');
  });
});

describe('mergeHistory', () => {
  it('puts local commands first without repeats', () => {
    expect(mergeHistory(['b', 'a'], ['a', 'c', '', 'b'])).toEqual([
      'b',
      'a',
      'c'
    ]);
  });
});

describe('inlineCompletion', () => {
  it('completes with the first suggestion that extends the text', () => {
    expect(inlineCompletion('git s', ['git log', 'git status'])).toBe('tatus');
    expect(inlineCompletion('git s', ['git s'])).toBe('');
    expect(inlineCompletion('', ['ls'])).toBe('');
    expect(inlineCompletion('  ', ['  ls'])).toBe('');
    expect(inlineCompletion('for', ['for x in 1\ndo'])).toBe('');
  });
});
