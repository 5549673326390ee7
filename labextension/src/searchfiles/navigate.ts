/**
 * Open a file in Lab's editor with a search match selected.
 */
import type { CodeEditor } from '@jupyterlab/codeeditor';
import type { IDocumentManager } from '@jupyterlab/docmanager';
import type { IDocumentWidget } from '@jupyterlab/docregistry';

import type { IGrepLine } from '../api/fs';
import { utf16Index } from '../common/highlight';

/**
 * Where to put the cursor: a server match (1-based line, code-point ranges
 * into a window of the line that starts at `offset`).
 */
export interface IMatchLocation {
  readonly match: IGrepLine;
  /** Which of the line's ranges to select (the first by default). */
  readonly rangeIndex?: number;
}

/**
 * Open `path` (or reveal its tab) and, for a text editor, select the match
 * and scroll it into view. Notebooks and other viewers are just opened.
 */
export async function openAtMatch(
  docManager: IDocumentManager,
  path: string,
  location: IMatchLocation
): Promise<IDocumentWidget | undefined> {
  const widget = docManager.openOrReveal(path);
  if (!widget) {
    return undefined;
  }
  await widget.context.ready;
  await widget.revealed;
  const content = widget.content as unknown as { ready?: Promise<void> };
  if (content.ready instanceof Promise) {
    // A file editor puts the loaded text into CodeMirror on its own `ready`.
    await content.ready;
  }
  const editor = editorOf(widget);
  if (!editor) {
    return widget;
  }
  const { match } = location;
  const line = Math.max(0, match.line - 1);
  const range = match.ranges[location.rangeIndex ?? 0] ?? [0, 0];
  // Columns are UTF-16 offsets in the editor; the server counts code points
  // from the start of its window into the line.
  const lineText = editor.getLine(line) ?? '';
  const start = {
    line,
    column: utf16Index(lineText, match.offset + range[0])
  };
  const end = {
    line,
    column: utf16Index(lineText, match.offset + range[1])
  };
  editor.setCursorPosition(start);
  editor.setSelection({ start, end });
  editor.revealSelection({ start, end });
  editor.focus();
  return widget;
}

/**
 * The code editor inside a document widget, if it has one (file editor).
 */
export function editorOf(widget: IDocumentWidget): CodeEditor.IEditor | null {
  const content = widget.content as unknown as { editor?: unknown };
  const editor = content.editor as Partial<CodeEditor.IEditor> | undefined;
  if (
    editor &&
    typeof editor.setCursorPosition === 'function' &&
    typeof editor.setSelection === 'function' &&
    typeof editor.revealSelection === 'function' &&
    typeof editor.getLine === 'function'
  ) {
    return editor as CodeEditor.IEditor;
  }
  return null;
}
