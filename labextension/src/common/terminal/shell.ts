/**
 * Shell words: quoting paths for a POSIX shell, finding the word under the
 * cursor and completing it as a path.
 */

const SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * Quote `text` as one word for a POSIX shell (as Python's `shlex.quote`):
 * unchanged when it is made of safe characters only, else in single quotes
 * with each `'` written as `'\''`.
 */
export function shellQuote(text: string): string {
  if (text !== '' && SAFE.test(text)) {
    return text;
  }
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Join a path relative to the server root onto the root (absolute paths are
 * returned unchanged). Uses the root's separator.
 */
export function absoluteFromRoot(root: string, path: string): string {
  if (isAbsolute(path)) {
    return path;
  }
  const separator = root.includes('\\') && !root.includes('/') ? '\\' : '/';
  const trimmed = path.replace(/^\/+/, '');
  if (!trimmed) {
    return root;
  }
  const base = root.endsWith(separator) ? root : root + separator;
  return base + (separator === '/' ? trimmed : trimmed.replace(/\//g, '\\'));
}

/**
 * Paths dropped from Lab's file browser as one line of shell words:
 * absolute (joined to the server root when relative), quoted, a space apart.
 * Paths of other contents drives (`"drive:path"`) lose their drive prefix.
 */
export function droppedPaths(paths: readonly string[], root: string): string {
  return paths
    .map(path => {
      const local = path.replace(/^[A-Za-z0-9_-]{2,}:(?!\/\/)/, '');
      return shellQuote(root ? absoluteFromRoot(root, local) : local);
    })
    .join(' ');
}

/**
 * Whether a path is absolute (POSIX, or a Windows drive or UNC path).
 */
export function isAbsolute(path: string): boolean {
  return (
    path.startsWith('/') ||
    /^[A-Za-z]:[\\/]/.test(path) ||
    path.startsWith('\\\\')
  );
}

/**
 * The shell word that ends at the cursor.
 */
export interface IWordAtCursor {
  /** Offset of the word's first character in the line. */
  from: number;
  /** The cursor offset. */
  to: number;
  /** The word as typed (escapes and quotes included). */
  raw: string;
  /** The word as the shell reads it (escapes and quotes removed). */
  text: string;
  /** The word is the command name (the first word of a simple command). */
  isCommand: boolean;
  /** An open quote the word started with (`'` or `"`), or empty. */
  quote: string;
}

const COMMAND_SEPARATORS = new Set([';', '|', '&', '(', ')']);

/**
 * The shell word ending at `cursor` in `line` (empty when the cursor follows
 * a blank or an operator).
 */
export function wordAtCursor(line: string, cursor: number): IWordAtCursor {
  let from = 0;
  let quote = '';
  let commandPosition = true;
  let inWord = false;
  for (let index = 0; index < cursor; index++) {
    const char = line[index];
    if (quote) {
      if (char === quote) {
        quote = '';
      } else if (char === '\\' && quote === '"') {
        index++;
      }
      continue;
    }
    if (char === '\\') {
      if (!inWord) {
        from = index;
        inWord = true;
      }
      index++;
      continue;
    }
    if (char === ' ' || char === '\t' || char === '\n') {
      if (inWord) {
        commandPosition = false;
      }
      inWord = false;
      continue;
    }
    if (COMMAND_SEPARATORS.has(char)) {
      inWord = false;
      commandPosition = true;
      continue;
    }
    if (!inWord) {
      from = index;
      inWord = true;
    }
    if (char === "'" || char === '"') {
      quote = char;
    }
  }
  if (!inWord) {
    from = cursor;
  }
  const raw = line.slice(from, cursor);
  const opening = raw.startsWith("'") || raw.startsWith('"') ? raw[0] : '';
  return {
    from,
    to: cursor,
    raw,
    text: unescapeWord(raw),
    isCommand: commandPosition,
    quote: quote || (opening && !raw.slice(1).includes(opening) ? opening : '')
  };
}

/**
 * Remove the quotes and backslash escapes of a (possibly unfinished) word.
 */
export function unescapeWord(raw: string): string {
  let out = '';
  let quote = '';
  for (let index = 0; index < raw.length; index++) {
    const char = raw[index];
    if (quote) {
      if (char === quote) {
        quote = '';
      } else if (char === '\\' && quote === '"' && index + 1 < raw.length) {
        out += raw[++index];
      } else {
        out += char;
      }
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === '\\' && index + 1 < raw.length) {
      out += raw[++index];
    } else {
      out += char;
    }
  }
  return out;
}

/**
 * Write a completed name back in the style the word was typed in: inside
 * the open quote, or with backslashes before special characters.
 */
export function escapeForWord(text: string, quote: string): string {
  if (quote === "'") {
    return text.replace(/'/g, `'\\''`);
  }
  if (quote === '"') {
    return text.replace(/(["\\$`])/g, '\\$1');
  }
  return text.replace(/([^A-Za-z0-9_@%+=:,./~-])/g, '\\$1');
}

/**
 * Whether a word should be completed as a path: it has a slash or starts
 * like a path, or it is an argument (not the command name).
 */
export function isPathLike(word: IWordAtCursor): boolean {
  const text = word.text;
  if (text.startsWith('$') || text.startsWith('-')) {
    return false;
  }
  return (
    !word.isCommand ||
    text.includes('/') ||
    text.startsWith('.') ||
    text.startsWith('~')
  );
}

/**
 * A path word split into the folder to list and the name prefix to match.
 */
export interface IPathQuery {
  /** The folder to list: absolute, or null when it cannot be resolved. */
  folder: string | null;
  /** What the word has up to and including its last slash. */
  folderPart: string;
  /** The partial name after the last slash. */
  prefix: string;
}

/**
 * Resolve a path word against the shell's working folder.
 *
 * `~` and `$VAR` are left to the shell: their folders are not resolved here.
 */
export function pathQuery(text: string, cwd: string): IPathQuery {
  const slash = text.lastIndexOf('/');
  const folderPart = slash >= 0 ? text.slice(0, slash + 1) : '';
  const prefix = text.slice(slash + 1);
  if (folderPart.startsWith('~') || folderPart.includes('$')) {
    return { folder: null, folderPart, prefix };
  }
  let folder: string;
  if (folderPart.startsWith('/')) {
    folder = folderPart;
  } else {
    folder = cwd.endsWith('/') ? cwd + folderPart : `${cwd}/${folderPart}`;
  }
  return { folder: normalizeFolder(folder), folderPart, prefix };
}

/**
 * Collapse `.`, `..` and repeated slashes of an absolute POSIX path.
 */
export function normalizeFolder(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') {
      continue;
    }
    if (part === '..') {
      parts.pop();
    } else {
      parts.push(part);
    }
  }
  return '/' + parts.join('/');
}

/**
 * The longest common prefix of some names.
 */
export function commonPrefix(names: readonly string[]): string {
  if (names.length === 0) {
    return '';
  }
  let prefix = names[0];
  for (const name of names.slice(1)) {
    let index = 0;
    while (
      index < prefix.length &&
      index < name.length &&
      prefix[index] === name[index]
    ) {
      index++;
    }
    prefix = prefix.slice(0, index);
    if (!prefix) {
      break;
    }
  }
  return prefix;
}
