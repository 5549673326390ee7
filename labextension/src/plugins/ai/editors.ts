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
