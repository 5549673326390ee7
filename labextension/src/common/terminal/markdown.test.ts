import { describe, expect, it } from 'vitest';

import { blockMarkdown, SNIPPET_MAX_LINES } from './markdown';

describe('blockMarkdown', () => {
  it('shows the facts, the command and the output', () => {
    expect(
      blockMarkdown({
        command: 'false',
        output: 'oops\r\n',
        cwd: '/projects',
        exitCode: 1,
        durationMs: 12
      })
    ).toBe(
      [
        'Terminal command (in `/projects`, exit code 1, 12 ms):',
        '',
        '```console',
        '$ false',
        'oops',
        '```',
        ''
      ].join('\n')
    );
  });

  it('uses a fence longer than any backtick run in the output', () => {
    const text = blockMarkdown({ command: 'cat README.md', output: '````\nx' });
    expect(text).toContain('`````console\n');
  });

  it('keeps the end of long output', () => {
    const output = Array.from(
      { length: SNIPPET_MAX_LINES + 5 },
      (_, i) => `l${i}`
    ).join('\n');
    const text = blockMarkdown({ command: 'seq', output });
    expect(text).toContain('(first 5 lines of output omitted)');
    expect(text).not.toContain('\nl4\n');
    expect(text).toContain(`l${SNIPPET_MAX_LINES + 4}`);
  });

  it('says when the scrollback lost the start', () => {
    expect(
      blockMarkdown({ command: 'x', output: 'y', truncated: true })
    ).toContain('no longer available');
  });
});
