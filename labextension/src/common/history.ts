/**
 * Up/Down through earlier commands in the input line, as shells do: the
 * text typed before the first Up is kept, and only commands that start with
 * it are visited.
 */
export class HistoryNavigator {
  /**
   * Whether the user is browsing (Up was pressed and not undone by Down).
   */
  get active(): boolean {
    return this._index >= 0;
  }

  /**
   * Begin browsing from `draft` (what is typed now) over `commands`, newest
   * first.
   */
  begin(draft: string, commands: readonly string[]): void {
    this._draft = draft;
    const seen = new Set<string>();
    this._matches = [];
    for (const command of commands) {
      if (
        command.startsWith(draft) &&
        command !== draft &&
        !seen.has(command)
      ) {
        seen.add(command);
        this._matches.push(command);
      }
    }
    this._index = -1;
  }

  /**
   * The next older command, or null at the oldest one.
   */
  older(): string | null {
    if (this._index + 1 >= this._matches.length) {
      return null;
    }
    this._index++;
    return this._matches[this._index];
  }

  /**
   * The next newer command; the draft after the newest one; null when not
   * browsing.
   */
  newer(): string | null {
    if (this._index < 0) {
      return null;
    }
    this._index--;
    return this._index < 0 ? this._draft : this._matches[this._index];
  }

  /**
   * Stop browsing (the user typed or sent the line).
   */
  reset(): void {
    this._index = -1;
    this._matches = [];
    this._draft = '';
  }

  private _draft = '';
  private _matches: string[] = [];
  private _index = -1;
}

/**
 * Commands to browse: the ones sent from this view (newest first) before the
 * server's history, without repeats.
 */
export function mergeHistory(
  local: readonly string[],
  server: readonly string[]
): string[] {
  const seen = new Set<string>();
  const merged: string[] = [];
  for (const command of [...local, ...server]) {
    if (command && !seen.has(command)) {
      seen.add(command);
      merged.push(command);
    }
  }
  return merged;
}

/**
 * The rest of the first suggestion that extends what is typed (shown as
 * grey text after the cursor), or empty.
 */
export function inlineCompletion(
  typed: string,
  suggestions: readonly string[]
): string {
  if (!typed.trim()) {
    return '';
  }
  for (const command of suggestions) {
    if (command.startsWith(typed) && command.length > typed.length) {
      const rest = command.slice(typed.length);
      // One line at most: a multi-line command would not fit the grey text.
      const newline = rest.indexOf('\n');
      return newline >= 0 ? '' : rest;
    }
  }
  return '';
}
