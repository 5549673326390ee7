import { describe, expect, it } from 'vitest';

import { isTerminalReport } from './reports';

describe('isTerminalReport', () => {
  it('knows what xterm.js answers to replayed queries', () => {
    for (const report of [
      '\x1b]10;rgb:2121/2121/2121\x1b\\',
      '\x1b]11;rgb:ffff/ffff/ffff\x07',
      '\x1b[?12;2$y',
      '\x1b[2;1$y',
      '\x1b[?1;2c',
      '\x1b[>0;276;0c',
      '\x1b[0n',
      '\x1b[24;1R',
      '\x1b[4;720;1280t',
      '\x1b[?0u',
      '\x1bP1$r0m\x1b\\',
      '\x1bP>|xterm.js(6.0.0)\x1b\\'
    ]) {
      expect(isTerminalReport(report), JSON.stringify(report)).toBe(true);
    }
  });

  it('takes several answers in one event', () => {
    expect(
      isTerminalReport(
        '\x1b]10;rgb:2121/2121/2121\x1b\\\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?12;2$y'
      )
    ).toBe(true);
  });

  it('lets keys, text and mouse events through', () => {
    for (const typed of [
      'ls\r',
      '\x1b',
      '\x1b[A',
      '\x1bOA',
      '\x1b[15~',
      '\x1b[1;5C',
      '\x1bx',
      '\x1b[<0;10;5M',
      '\x1b[97;5u',
      '\x1b[200~pasted\x1b[201~',
      '\x1b[I',
      '\x1b[?1;2c and text'
    ]) {
      expect(isTerminalReport(typed), JSON.stringify(typed)).toBe(false);
    }
  });
});
