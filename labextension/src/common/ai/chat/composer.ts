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

/**
 * A notebook cell as the `@notebook.ipynb#cell` picker and mentions read it.
 */
export interface INotebookCellInfo {
  /** The cell's nbformat id. */
  id: string;
  /** `code`, `markdown` or `raw`. */
  type: string;
  source: string;
  /** The notebook's language (from its metadata), for code cells. */
  language?: string;
  /** The error output of the cell's last run (nbformat), if it raised. */
  error?: { ename?: unknown; evalue?: unknown; traceback?: unknown };
}

/**
 * An `@notebook.ipynb#cell` token: where it is, its notebook and cell id.
 */
export interface ICellMention {
  start: number;
  end: number;
  path: string;
  cellId: string;
}

/**
 * Like `@path`, a mention is one word: a notebook path with spaces cannot be
 * mentioned (attach its cell with "Ask Terax About This Cell").
 */
const NOTEBOOK = /\.ipynb$/i;

/**
 * The `@notebook.ipynb#query` word the caret is in, if any: the notebook and
 * what is typed after `#` (up to the caret).
 */
export function cellMentionAtCaret(
  text: string,
  caret: number
): (ITokenAtCaret & { path: string }) | null {
  const at = tokenAtCaret(text, caret, '@');
  if (!at) {
    return null;
  }
  const hash = at.query.indexOf('#');
  if (hash < 0) {
    return null;
  }
  const path = at.query.slice(0, hash);
  if (!NOTEBOOK.test(path)) {
    return null;
  }
  return { ...at, path, query: at.query.slice(hash + 1) };
}

/**
 * Every `@notebook.ipynb#cell` word of a prompt, in order (a trailing
 * `.`, `,`, `;`, `:`, `!`, `?` or `)` ends the id).
 */
export function cellMentions(text: string): ICellMention[] {
  const found: ICellMention[] = [];
  const word = /(^|\s)@(\S+?\.ipynb)#([A-Za-z0-9_-]+)(?=[.,;:!?)]*(?:\s|$))/gi;
  for (let match = word.exec(text); match; match = word.exec(text)) {
    const start = match.index + match[1].length;
    found.push({
      start,
      end: start + match[0].length - match[1].length,
      path: match[2],
      cellId: match[3]
    });
  }
  return found;
}

/**
 * The first non-blank line of a cell's source, trimmed.
 */
export function firstLine(source: string): string {
  for (const line of source.split('\n')) {
    if (line.trim()) {
      return line.trim();
    }
  }
  return '';
}

/**
 * How well `query` matches `text` as a subsequence (case-insensitive):
 * higher is better, -1 for no match. A substring beats a scattered match,
 * an earlier one a later one.
 */
export function fuzzyScore(query: string, text: string): number {
  const q = query.toLowerCase();
  const t = text.toLowerCase();
  if (!q) {
    return 0;
  }
  const at = t.indexOf(q);
  if (at >= 0) {
    return 1000 - Math.min(at, 500);
  }
  let position = 0;
  let gaps = 0;
  for (const char of q) {
    const next = t.indexOf(char, position);
    if (next < 0) {
      return -1;
    }
    gaps += next - position;
    position = next + 1;
  }
  return Math.max(1, 500 - gaps);
}

/**
 * The cells the picker offers for what is typed after `#`: a fuzzy match on
 * the id (ranked first), or the text found in the source; notebook order
 * among equals (and when nothing is typed).
 */
export function filterCells(
  cells: readonly INotebookCellInfo[],
  query: string,
  limit = 8
): INotebookCellInfo[] {
  const q = query.trim().toLowerCase();
  return cells
    .map((cell, index) => {
      const byId = fuzzyScore(q, cell.id);
      const at = q ? cell.source.toLowerCase().indexOf(q) : 0;
      const score =
        byId >= 0 ? 1000 + byId : at >= 0 ? 1000 - Math.min(at, 999) : -1;
      return { cell, index, score };
    })
    .filter(item => item.score >= 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, limit)
    .map(item => item.cell);
}

/**
 * The cells of a notebook's nbformat JSON (cells without an id are left
 * out: they cannot be named).
 */
export function notebookCells(content: unknown): INotebookCellInfo[] {
  const notebook = content as {
    cells?: unknown;
    metadata?: { language_info?: { name?: unknown } };
  } | null;
  if (!notebook || !Array.isArray(notebook.cells)) {
    return [];
  }
  const language = notebook.metadata?.language_info?.name;
  const cells: INotebookCellInfo[] = [];
  for (const raw of notebook.cells) {
    const cell = raw as {
      id?: unknown;
      cell_type?: unknown;
      source?: unknown;
      outputs?: unknown;
    };
    if (typeof cell?.id !== 'string' || !cell.id) {
      continue;
    }
    const source = Array.isArray(cell.source)
      ? cell.source.join('')
      : typeof cell.source === 'string'
        ? cell.source
        : '';
    const outputs = Array.isArray(cell.outputs) ? cell.outputs : [];
    const error = outputs.find(
      output =>
        typeof output === 'object' &&
        output !== null &&
        (output as { output_type?: unknown }).output_type === 'error'
    );
    cells.push({
      id: cell.id,
      type: typeof cell.cell_type === 'string' ? cell.cell_type : 'code',
      source,
      language: typeof language === 'string' ? language : undefined,
      error
    });
  }
  return cells;
}

/**
 * The longest cell source attached, in characters.
 */
export const MAX_CELL_SOURCE = 20000;

/**
 * The attachment of a notebook cell (as "Ask Terax About This Cell" and an
 * `@notebook.ipynb#cell` mention attach it); `label` names it on its chip.
 */
export function cellAttachment(
  path: string,
  cell: INotebookCellInfo,
  label: (name: string, ename: string | null) => string
): Extract<Attachment, { kind: 'cell' }> {
  const error = cell.error ? errorText(cell.error) : undefined;
  const name = path.split('/').pop() ?? path;
  const ename = typeof cell.error?.ename === 'string' ? cell.error.ename : '';
  return {
    kind: 'cell',
    label: label(name, error ? ename : null),
    path,
    cellId: cell.id,
    source: cell.source.slice(0, MAX_CELL_SOURCE),
    language: cell.type === 'markdown' ? 'markdown' : cell.language,
    error
  };
}

/**
 * The cell attachments a prompt's `@notebook.ipynb#cell` words name, read
 * now (`load` gives a notebook's cells, null when there is no such
 * notebook); else the first mention that names no notebook or no cell.
 */
export async function resolveCellMentions(
  text: string,
  load: (path: string) => Promise<readonly INotebookCellInfo[] | null>,
  label: (name: string, ename: string | null) => string = (name, ename) =>
    ename ? `${name} cell (${ename})` : `${name} cell`
): Promise<
  | { attachments: Extract<Attachment, { kind: 'cell' }>[] }
  | { missing: ICellMention; reason: 'notebook' | 'cell' }
> {
  const mentions = cellMentions(text);
  const notebooks = new Map<string, readonly INotebookCellInfo[] | null>();
  const attachments: Extract<Attachment, { kind: 'cell' }>[] = [];
  for (const mention of mentions) {
    if (!notebooks.has(mention.path)) {
      let cells: readonly INotebookCellInfo[] | null = null;
      try {
        cells = await load(mention.path);
      } catch {
        cells = null;
      }
      notebooks.set(mention.path, cells);
    }
    const cells = notebooks.get(mention.path);
    if (!cells) {
      return { missing: mention, reason: 'notebook' };
    }
    const cell = cells.find(c => c.id === mention.cellId);
    if (!cell) {
      return { missing: mention, reason: 'cell' };
    }
    if (
      !attachments.some(
        a => a.path === mention.path && a.cellId === mention.cellId
      )
    ) {
      attachments.push(cellAttachment(mention.path, cell, label));
    }
  }
  return { attachments };
}
