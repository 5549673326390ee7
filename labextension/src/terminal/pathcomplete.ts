/**
 * Path completion in the input line: the shell word before the cursor,
 * resolved against the shell's folder and listed with `GET fs/list`.
 */
import type {
  Completion,
  CompletionContext,
  CompletionResult
} from '@codemirror/autocomplete';
import type { EditorState } from '@codemirror/state';

import type { IFolderEntry } from '../api/fs';
import {
  escapeForWord,
  isPathLike,
  pathQuery,
  wordAtCursor,
  type IPathQuery,
  type IWordAtCursor
} from '../common/terminal/shell';

/**
 * How long a folder listing is reused.
 */
const LISTING_TTL_MS = 3000;

/**
 * What a completion request found.
 */
export interface IPathCandidates {
  /** The document it was computed for. */
  doc: string;
  /** The word, with offsets in the document. */
  word: IWordAtCursor;
  query: IPathQuery;
  entries: IFolderEntry[];
}

/**
 * Completes path words.
 */
export class PathCompleter {
  constructor(
    private readonly _cwd: () => string,
    private readonly _listFolder: (path: string) => Promise<IFolderEntry[]>
  ) {}

  /**
   * The completion source of the editor's list.
   */
  async complete(context: CompletionContext): Promise<CompletionResult | null> {
    const found = await this.candidates(context.state, context.explicit);
    if (!found || context.aborted) {
      return null;
    }
    const { word, query, entries } = found;
    const options: Completion[] = entries.map(entry => {
      const folder = isFolder(entry);
      return {
        label: entry.name + (folder ? '/' : ''),
        type: folder ? 'folder' : 'file',
        apply: wordText(query.folderPart + entry.name, word.quote, folder)
      };
    });
    return { from: word.from, to: word.to, options, filter: false };
  }

  /**
   * The entries that complete the word before the cursor; null when the
   * word is not a path (unless asked `explicit`ly) or cannot be resolved.
   */
  async candidates(
    state: EditorState,
    explicit: boolean
  ): Promise<IPathCandidates | null> {
    const doc = state.doc.toString();
    const head = state.selection.main.head;
    const line = state.doc.lineAt(head);
    const word = wordAtCursor(line.text, head - line.from);
    const cwd = this._cwd();
    if (!cwd || (!isPathLike(word) && !explicit)) {
      return null;
    }
    const query = pathQuery(word.text, cwd);
    if (query.folder === null) {
      return null;
    }
    const listing = await this._list(query.folder);
    const showHidden = query.prefix.startsWith('.');
    const entries = listing.filter(
      entry =>
        entry.name.startsWith(query.prefix) && (showHidden || !entry.hidden)
    );
    return {
      doc,
      word: { ...word, from: word.from + line.from, to: word.to + line.from },
      query,
      entries
    };
  }

  private async _list(folder: string): Promise<IFolderEntry[]> {
    const cached = this._listings.get(folder);
    if (cached && Date.now() - cached.at < LISTING_TTL_MS) {
      return cached.entries;
    }
    try {
      const entries = await this._listFolder(folder);
      this._listings.set(folder, { at: Date.now(), entries });
      if (this._listings.size > 20) {
        const oldest = this._listings.keys().next().value;
        if (oldest !== undefined) {
          this._listings.delete(oldest);
        }
      }
      return entries;
    } catch {
      return [];
    }
  }

  private readonly _listings = new Map<
    string,
    { at: number; entries: IFolderEntry[] }
  >();
}

/**
 * Whether an entry is a folder (or a link to one).
 */
export function isFolder(entry: IFolderEntry): boolean {
  return entry.type === 'directory' || entry.target_type === 'directory';
}

/**
 * A completed path written back as a shell word: a folder keeps its quote
 * open and ends with a slash; a file is closed and followed by a space.
 */
export function wordText(path: string, quote: string, open: boolean): string {
  const escaped = escapeForWord(path, quote);
  if (open) {
    return `${quote}${escaped}${path.endsWith('/') ? '' : '/'}`;
  }
  return `${quote}${escaped}${quote} `;
}
