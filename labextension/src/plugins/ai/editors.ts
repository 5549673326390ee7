/**
 * The editor of the current document (file editor or notebook cell), as the
 * AI panel reads and writes it, without depending on their packages.
 */
import type { CodeEditor } from '@jupyterlab/codeeditor';
import type { Widget } from '@lumino/widgets';

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
  const outputs = model.outputs?.toJSON() ?? [];
  const error = outputs.find(
    (output): output is IErrorOutput =>
      typeof output === 'object' &&
      output !== null &&
      (output as { output_type?: unknown }).output_type === 'error'
  );
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
