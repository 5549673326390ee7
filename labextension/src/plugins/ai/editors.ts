/**
 * The editor of the current document (file editor or notebook cell), as the
 * AI panel reads and writes it, without depending on their packages.
 */
import type { CodeEditor } from '@jupyterlab/codeeditor';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { Widget } from '@lumino/widgets';

import type { INotebookCellInfo } from '../../common/ai/chat';

/**
 * A document widget as far as this plugin needs it (file editors and
 * notebooks, without depending on their packages).
 */
interface IDocumentLike {
  context?: { path?: unknown };
  content?: {
    editor?: CodeEditor.IEditor;
    activeCell?: { editor?: CodeEditor.IEditor | null } | null;
  };
}

/**
 * A notebook's active cell as far as this plugin needs it (without the
 * notebook package): Lab's cell model and the notebook's metadata.
 */
interface INotebookLike {
  context?: { path?: unknown };
  content?: {
    activeCell?: {
      model?: {
        id?: unknown;
        type?: unknown;
        sharedModel?: { getSource(): string };
        outputs?: { toJSON(): unknown[] };
      };
    } | null;
    model?: { getMetadata?(key: string): unknown } | null;
  };
}

/**
 * The active cell of a notebook widget: its notebook, id, source, language
 * and the error its last run raised (if it did), or null.
 */
export function currentCell(widget: Widget | null): {
  path: string;
  cellId: string;
  kind: string;
  source: string;
  language?: string;
  error?: IErrorOutput;
} | null {
  const notebook = widget as unknown as INotebookLike | null;
  const path = notebook?.context?.path;
  const model = notebook?.content?.activeCell?.model;
  if (
    typeof path !== 'string' ||
    !path.toLowerCase().endsWith('.ipynb') ||
    typeof model?.id !== 'string' ||
    !model.sharedModel
  ) {
    return null;
  }
  const info = notebook?.content?.model?.getMetadata?.('language_info') as
    { name?: unknown } | undefined;
  const error = errorOutput(model);
  return {
    path,
    cellId: model.id,
    kind: typeof model.type === 'string' ? model.type : 'code',
    source: model.sharedModel.getSource(),
    language: typeof info?.name === 'string' ? info.name : undefined,
    error
  };
}

/**
 * A cell model as far as this plugin needs it.
 */
interface ICellModelLike {
  id?: unknown;
  type?: unknown;
  sharedModel?: { getSource(): string };
  outputs?: { toJSON(): unknown[] };
}

/**
 * The error output among a cell's outputs, if there is one.
 */
function errorOutput(model: ICellModelLike): IErrorOutput | undefined {
  const outputs = model.outputs?.toJSON() ?? [];
  return outputs.find(
    (output): output is IErrorOutput =>
      typeof output === 'object' &&
      output !== null &&
      (output as { output_type?: unknown }).output_type === 'error'
  );
}

/**
 * The cells of an open notebook widget as its model holds them now (unsaved
 * edits included), or null when the widget is no notebook.
 */
export function openNotebookCells(
  widget: Widget | null
): INotebookCellInfo[] | null {
  const notebook = widget as unknown as {
    content?: {
      model?: {
        cells?: Iterable<ICellModelLike>;
        getMetadata?(key: string): unknown;
      } | null;
    };
  } | null;
  const model = notebook?.content?.model;
  const cells = model?.cells;
  if (!cells || typeof cells[Symbol.iterator] !== 'function') {
    return null;
  }
  const info = model.getMetadata?.('language_info') as
    { name?: unknown } | undefined;
  const language = typeof info?.name === 'string' ? info.name : undefined;
  const found: INotebookCellInfo[] = [];
  for (const cell of cells) {
    if (typeof cell.id !== 'string' || !cell.sharedModel) {
      continue;
    }
    found.push({
      id: cell.id,
      type: typeof cell.type === 'string' ? cell.type : 'code',
      source: cell.sharedModel.getSource(),
      language,
      error: errorOutput(cell)
    });
  }
  return found;
}

/**
 * The chip label of an attached cell: its notebook, and its error's name.
 */
export function cellLabel(
  trans: TranslationBundle
): (name: string, ename: string | null) => string {
  return (name, ename) =>
    ename !== null
      ? trans.__('%1 cell (%2)', name, ename || trans.__('error'))
      : trans.__('%1 cell', name);
}

/**
 * An error output of a code cell (nbformat).
 */
export interface IErrorOutput {
  output_type: 'error';
  ename?: unknown;
  evalue?: unknown;
  traceback?: unknown;
}

/**
 * The editor of a document widget and the document's path, or null.
 */
export function currentEditor(
  widget: Widget | null
): { editor: CodeEditor.IEditor; path: string } | null {
  const doc = widget as unknown as IDocumentLike | null;
  const editor = doc?.content?.editor ?? doc?.content?.activeCell?.editor;
  if (!editor) {
    return null;
  }
  const path = typeof doc?.context?.path === 'string' ? doc.context.path : '';
  return { editor, path };
}

/**
 * The editor's selected text ('' when nothing is selected).
 */
export function selectedText(editor: CodeEditor.IEditor): string {
  const range = editor.getSelection();
  const start = editor.getOffsetAt(range.start);
  const end = editor.getOffsetAt(range.end);
  const source = editor.model.sharedModel.getSource();
  return source.slice(Math.min(start, end), Math.max(start, end));
}

/**
 * Insert text at the editor's selection (or cursor) and focus it.
 */
export function insertText(editor: CodeEditor.IEditor, text: string): void {
  if (editor.replaceSelection) {
    editor.replaceSelection(text);
  } else {
    const offset = editor.getOffsetAt(editor.getCursorPosition());
    editor.model.sharedModel.updateSource(offset, offset, text);
  }
  editor.focus();
}

/**
 * The Markdown language of a file's code, by extension.
 */
export const LANGUAGES: Record<string, string> = {
  '.py': 'python',
  '.ts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.json': 'json',
  '.md': 'markdown',
  '.sh': 'bash',
  '.rs': 'rust',
  '.go': 'go',
  '.java': 'java',
  '.c': 'c',
  '.cpp': 'cpp',
  '.css': 'css',
  '.html': 'html',
  '.yaml': 'yaml',
  '.yml': 'yaml',
  '.toml': 'toml',
  '.sql': 'sql',
  '.ipynb': 'python'
};
