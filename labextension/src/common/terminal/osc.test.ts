import { describe, expect, it } from 'vitest';

import {
  isTrusted,
  parseShellMark,
  parseWorkingDirectory,
  percentDecode
} from './osc';

describe('parseShellMark', () => {
  it('reads prompt and input marks', () => {
    expect(parseShellMark('A;nonce=ab12')).toEqual({
      kind: 'A',
      nonce: 'ab12'
    });
    expect(parseShellMark('B;nonce=ab12')).toEqual({
      kind: 'B',
      nonce: 'ab12'
    });
  });

  it('decodes the command line of a command mark', () => {
    expect(
      parseShellMark('C;nonce=ab12;cmdline_url=echo%20hi%3B%20false')
    ).toEqual({ kind: 'C', nonce: 'ab12', command: 'echo hi; false' });
  });

  it('decodes UTF-8 escapes', () => {
    const mark = parseShellMark('C;nonce=n;cmdline_url=echo%20h%C3%A9llo');
    expect(mark).toEqual({ kind: 'C', nonce: 'n', command: 'echo héllo' });
  });

  it('reads the exit code of an end mark', () => {
    expect(parseShellMark('D;1;nonce=ab12')).toEqual({
      kind: 'D',
      nonce: 'ab12',
      exitCode: 1
    });
    expect(parseShellMark('D;0;nonce=x')).toMatchObject({ exitCode: 0 });
    expect(parseShellMark('D;nonce=x')).toMatchObject({ exitCode: null });
    expect(parseShellMark('D;abc;nonce=x')).toMatchObject({ exitCode: null });
  });

  it('ignores letters it does not know', () => {
    expect(parseShellMark('P;k=v')).toBeNull();
    expect(parseShellMark('')).toBeNull();
  });

  it('has an empty nonce when none is given', () => {
    expect(parseShellMark('A')).toEqual({ kind: 'A', nonce: '' });
  });
});

describe('isTrusted', () => {
  it('needs the session nonce', () => {
    const mark = parseShellMark('A;nonce=good')!;
    expect(isTrusted(mark, 'good')).toBe(true);
    expect(isTrusted(mark, 'other')).toBe(false);
    expect(isTrusted(parseShellMark('A')!, '')).toBe(false);
  });
});

describe('parseWorkingDirectory', () => {
  it('reads the path of a file URL', () => {
    expect(parseWorkingDirectory('file://host/home/me/my%20project')).toBe(
      '/home/me/my project'
    );
    expect(parseWorkingDirectory('file:///tmp')).toBe('/tmp');
  });

  it('reads a Windows drive path', () => {
    expect(parseWorkingDirectory('file://pc/C:/Users/me')).toBe('C:/Users/me');
  });

  it('rejects anything else', () => {
    expect(parseWorkingDirectory('http://host/x')).toBeNull();
    expect(parseWorkingDirectory('/tmp')).toBeNull();
  });
});

describe('percentDecode', () => {
  it('keeps malformed escapes readable', () => {
    expect(percentDecode('100%')).toBe('100%');
    expect(percentDecode('a%FFb%20c')).toBe('a\uFFFDb c');
  });
});
