/**
 * A command block as a Markdown snippet (to paste into a chat or an issue).
 */
import { formatDuration } from '../listnav';

/**
 * What goes into the snippet.
 */
export interface IBlockSnippet {
  command: string;
  output: string;
  cwd?: string | null;
  exitCode?: number | null;
  durationMs?: number | null;
  /** The start of the output is missing (scrollback trimmed). */
  truncated?: boolean;
}

/**
 * Most output lines a snippet keeps (the end, where errors are).
 */
export const SNIPPET_MAX_LINES = 200;

/**
 * The snippet: a line of facts, then the command and its output in a
 * fenced `console` block whose fence is longer than any backtick run inside.
 */
export function blockMarkdown(block: IBlockSnippet): string {
  const facts: string[] = [];
  if (block.cwd) {
    facts.push(`in \`${block.cwd.replace(/`/g, "'")}\``);
  }
  if (block.exitCode !== undefined && block.exitCode !== null) {
    facts.push(`exit code ${block.exitCode}`);
  }
  if (block.durationMs !== undefined && block.durationMs !== null) {
    facts.push(formatDuration(block.durationMs));
  }
  let lines = block.output.replace(/\r\n?/g, '\n').replace(/\n+$/, '');
  let omitted = 0;
  const split = lines.split('\n');
  if (split.length > SNIPPET_MAX_LINES) {
    omitted = split.length - SNIPPET_MAX_LINES;
    lines = split.slice(-SNIPPET_MAX_LINES).join('\n');
  }
  const body = `$ ${block.command}${lines ? '\n' + lines : ''}`;
  const fence = '`'.repeat(Math.max(3, longestRun(body, '`') + 1));
  const parts = [
    `Terminal command${facts.length ? ' (' + facts.join(', ') + ')' : ''}:`,
    ''
  ];
  if (omitted > 0 || block.truncated) {
    parts.push(
      omitted > 0
        ? `(first ${omitted} lines of output omitted)`
        : '(the start of the output is no longer available)',
      ''
    );
  }
  parts.push(`${fence}console`, body, fence, '');
  return parts.join('\n');
}

function longestRun(text: string, char: string): number {
  let longest = 0;
  let current = 0;
  for (const c of text) {
    current = c === char ? current + 1 : 0;
    longest = Math.max(longest, current);
  }
  return longest;
}
