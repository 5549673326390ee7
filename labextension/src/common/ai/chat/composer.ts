/**
 * The composer's small parsers: slash commands, replays, the token at the
 * caret, snippets, attachments in the prompt, the prompt history.
 */

import type { IChatState } from './types';

/**
 * A slash command typed alone in the composer.
 */
export type SlashCommand = 'plan' | 'init' | 'new' | 'clear' | null;

/**
 * The slash command a prompt is, if it is one.
 */
export function slashCommand(text: string): SlashCommand {
  const match = /^\/(plan|init|new|clear)\s*$/.exec(text.trim());
  return match ? (match[1] as SlashCommand) : null;
}

/**
 * `/replay <workflow> [name=value ...]`: replay a saved browser workflow with
 * no model call. Values may be quoted ("two words" or 'two words').
 */
export interface IReplayCommand {
  workflow: string;
  inputs: Record<string, string>;
}

/**
 * The replay a prompt asks for; null when it is no `/replay`; an error
 * message when it is one but cannot be read.
 */
export function replayCommand(text: string): IReplayCommand | string | null {
  const match = /^\/replay(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) {
    return null;
  }
  const rest = (match[1] ?? '').trim();
  const word = /^([a-z0-9][a-z0-9_.-]*)(?:\s+|$)/.exec(rest);
  if (!word) {
    return 'Name the workflow: /replay <workflow> [name=value ...]';
  }
  const inputs: Record<string, string> = {};
  const pair =
    /^([A-Za-z_][A-Za-z0-9_]*)=(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s"'][^\s]*|))(?:\s+|$)/;
  let tail = rest.slice(word[0].length);
  while (tail) {
    const found = pair.exec(tail);
    if (!found) {
      return `Cannot read the inputs at "${tail.slice(0, 40)}": write name=value (quote values with spaces).`;
    }
    const value =
      found[2] !== undefined
        ? found[2].replace(/\\(.)/g, '$1')
        : (found[3] ?? found[4] ?? '');
    inputs[found[1]] = value;
    tail = tail.slice(found[0].length);
  }
  return { workflow: word[1], inputs };
}

/**
 * The prompt `/init` sends.
 */
export const INIT_PROMPT =
  'Look around this project (its layout, build and test commands, conventions) and write ' +
  'a concise TERAX.md at the workspace root for future sessions: what the project is, ' +
  'how to build, test and lint it, and the conventions to follow. Read existing docs ' +
  'first; if TERAX.md exists, improve it rather than starting over.';

/**
 * A word being typed at the caret that starts with `trigger` (`@` for a
 * file, `#` for a snippet): its start offset and the text after the trigger.
 */
export interface ITokenAtCaret {
  start: number;
  end: number;
  query: string;
}

/**
 * The `@...` or `#...` word the caret is in, if any (the trigger must start
 * the text or follow whitespace).
 */
export function tokenAtCaret(
  text: string,
  caret: number,
  trigger: '@' | '#'
): ITokenAtCaret | null {
  let start = caret;
  while (start > 0 && !/\s/.test(text[start - 1])) {
    start--;
  }
  if (text[start] !== trigger) {
    return null;
  }
  let end = caret;
  while (end < text.length && !/\s/.test(text[end])) {
    end++;
  }
  return { start, end, query: text.slice(start + 1, caret) };
}

/**
 * Replace `[start, end)` of `text` with `insert`; returns the text and the
 * caret after the insert.
 */
export function replaceRange(
  text: string,
  start: number,
  end: number,
  insert: string
): { text: string; caret: number } {
  return {
    text: text.slice(0, start) + insert + text.slice(end),
    caret: start + insert.length
  };
}

/**
 * Expand every `#name` word that names a snippet (unknown names stay).
 */
export function expandSnippets(
  text: string,
  snippets: Readonly<Record<string, string>>
): string {
  return text.replace(/(^|\s)#([\w.-]+)(?=\s|$)/g, (whole, space, name) =>
    Object.prototype.hasOwnProperty.call(snippets, name)
      ? space + snippets[name]
      : whole
  );
}

/**
 * Context attached to a prompt.
 */
export type Attachment =
  | { kind: 'file'; path: string }
  | {
      kind: 'selection';
      label: string;
      text: string;
      path?: string;
      language?: string;
    }
  | { kind: 'block'; label: string; markdown: string }
  | {
      kind: 'cell';
      label: string;
      /** The notebook, relative to the server root. */
      path: string;
      /** The cell's nbformat id, for the agent's notebook tools. */
      cellId: string;
      source: string;
      language?: string;
      /** The error the cell's last run raised (its traceback, as plain text). */
      error?: string;
    };

/**
 * The longest traceback attached, in characters (its end is kept: the error
 * line and the frames nearest to it).
 */
const MAX_ERROR = 8000;

// CSI and OSC sequences, and other two-byte escapes (tracebacks are coloured).
const ANSI =
  // eslint-disable-next-line no-control-regex
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

/**
 * A cell's error output as text: `ename: evalue` and the traceback without
 * its colours, the end kept when it is long.
 */
export function errorText(output: {
  ename?: unknown;
  evalue?: unknown;
  traceback?: unknown;
}): string {
  const frames = Array.isArray(output.traceback)
    ? output.traceback.filter((f): f is string => typeof f === 'string')
    : [];
  const head = `${String(output.ename ?? 'Error')}: ${String(output.evalue ?? '')}`;
  const text = (frames.length ? frames.join('\n') : head).replace(ANSI, '');
  return text.length > MAX_ERROR ? '…' + text.slice(-MAX_ERROR) : text;
}

/**
 * A fence longer than any backtick run in `text`.
 */
export function fenceFor(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) {
    longest = Math.max(longest, run.length);
  }
  return '`'.repeat(Math.max(3, longest + 1));
}

/**
 * The prompt sent: the typed text, then the attachments (files by path, for
 * the agent to read; selections and blocks inline).
 */
export function promptWithAttachments(
  text: string,
  attachments: readonly Attachment[]
): string {
  if (!attachments.length) {
    return text;
  }
  const files = attachments.filter(a => a.kind === 'file');
  const sections: string[] = [text.trim()];
  if (files.length) {
    sections.push(
      'Attached files (read them as needed):\n' +
        files.map(f => `- ${(f as { path: string }).path}`).join('\n')
    );
  }
  for (const attachment of attachments) {
    if (attachment.kind === 'selection') {
      const fence = fenceFor(attachment.text);
      const where = attachment.path ? ` from ${attachment.path}` : '';
      sections.push(
        `Selected text${where}:\n${fence}${attachment.language ?? ''}\n${
          attachment.text
        }\n${fence}`
      );
    } else if (attachment.kind === 'block') {
      sections.push(`Terminal block:\n${attachment.markdown}`);
    } else if (attachment.kind === 'cell') {
      const fence = fenceFor(attachment.source);
      let section =
        `Notebook cell ${attachment.path}#${attachment.cellId} ` +
        `(notebook_read shows it with its outputs):\n` +
        `${fence}${attachment.language ?? ''}\n${attachment.source}\n${fence}`;
      if (attachment.error) {
        const errorFence = fenceFor(attachment.error);
        section += `\nIts error:\n${errorFence}\n${attachment.error}\n${errorFence}`;
      }
      sections.push(section);
    }
  }
  return sections.filter(Boolean).join('\n\n');
}

/**
 * The headings `promptWithAttachments` puts before attached context.
 */
const CONTEXT_HEADING =
  /\n\n(?=Attached files \(read them as needed\):\n|Selected text(?: from [^\n]*)?:\n|Terminal block:\n|Notebook cell [^\n]*:\n)/;

/**
 * A sent prompt taken apart for display: what was typed, and the context
 * attached after it (null without any).
 */
export function splitPrompt(prompt: string): {
  text: string;
  context: string | null;
} {
  const match = CONTEXT_HEADING.exec(prompt);
  if (!match) {
    return { text: prompt, context: null };
  }
  return {
    text: prompt.slice(0, match.index),
    context: prompt.slice(match.index + match[0].length)
  };
}

/**
 * The prompts of a conversation, newest first (the composer's history).
 */
export function promptHistory(state: IChatState, limit = 100): string[] {
  const prompts: string[] = [];
  for (let i = state.turns.length - 1; i >= 0 && prompts.length < limit; i--) {
    const prompt = state.turns[i].prompt;
    if (prompt && !prompts.includes(prompt)) {
      prompts.push(prompt);
    }
  }
  return prompts;
}
