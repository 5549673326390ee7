/**
 * The input line below a terminal: a small CodeMirror editor to compose a
 * command (multi-line, shell highlighting), with history on Up/Down, grey
 * inline suggestions from the shell history and path completion on Tab.
 */
import {
  autocompletion,
  completionStatus,
  startCompletion
} from '@codemirror/autocomplete';
import {
  defaultKeymap,
  history,
  historyKeymap,
  insertNewline
} from '@codemirror/commands';
import { StreamLanguage, syntaxHighlighting } from '@codemirror/language';
import { shell } from '@codemirror/legacy-modes/mode/shell';
import { Compartment, EditorState, Prec } from '@codemirror/state';
import {
  drawSelection,
  EditorView,
  keymap,
  placeholder
} from '@codemirror/view';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import type { IFolderEntry } from '../api/fs';
import {
  HistoryNavigator,
  inlineCompletion,
  mergeHistory
} from '../common/history';
import { commonPrefix } from '../common/terminal/shell';
import { CSS } from './css';
import {
  fontTheme,
  fromHistory,
  ghostField,
  setGhost,
  SHELL_HIGHLIGHT,
  type IInputFont
} from './editor';
import { isFolder, PathCompleter, wordText } from './pathcomplete';

export type { IInputFont } from './editor';

/**
 * How long typing pauses before the history is asked for a suggestion.
 */
const SUGGEST_DEBOUNCE_MS = 120;

/**
 * The input line widget.
 */
export class CommandInput extends Widget {
  constructor(options: CommandInput.IOptions) {
    super();
    this._options = options;
    this._paths = new PathCompleter(options.cwd, options.listFolder);
    const trans = options.trans;
    this.addClass(CSS.input);

    const prompt = document.createElement('span');
    prompt.className = CSS.inputPrompt;
    prompt.textContent = '❯';
    prompt.setAttribute('aria-hidden', 'true');
    const host = document.createElement('div');
    host.className = CSS.inputEditor;
    const hint = document.createElement('span');
    hint.className = CSS.inputHint;
    hint.textContent = trans.__('⏎ run · ⇧⏎ new line · Tab complete');
    this.node.append(prompt, host, hint);

    this._view = new EditorView({
      parent: host,
      state: EditorState.create({
        doc: '',
        extensions: [
          this._theme.of(fontTheme(options.font)),
          history(),
          drawSelection(),
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({
            'aria-label': trans.__('Command'),
            autocapitalize: 'off',
            autocorrect: 'off',
            spellcheck: 'false'
          }),
          placeholder(trans.__('Type a command…')),
          StreamLanguage.define(shell),
          syntaxHighlighting(SHELL_HIGHLIGHT),
          ghostField,
          autocompletion({
            override: [context => this._paths.complete(context)],
            activateOnTyping: false,
            icons: false,
            closeOnBlur: true,
            maxRenderedOptions: 100
          }),
          Prec.highest(keymap.of(this._keys())),
          keymap.of([...historyKeymap, ...defaultKeymap]),
          EditorView.updateListener.of(update => {
            if (update.docChanged) {
              const own = update.transactions.some(t =>
                t.annotation(fromHistory)
              );
              if (!own) {
                this._navigator.reset();
              }
              this._scheduleSuggestion(own);
            }
            if (update.focusChanged && update.view.hasFocus) {
              this._prefetchHistory();
            }
          })
        ]
      })
    });
  }

  /**
   * The text typed.
   */
  get value(): string {
    return this._view.state.doc.toString();
  }

  set value(text: string) {
    this._setText(text, true);
  }

  get hasFocus(): boolean {
    return this._view.hasFocus;
  }

  /**
   * Focus the editor (cursor at the end when it had no focus).
   */
  focus(): void {
    if (!this._view.hasFocus) {
      this._view.focus();
    }
  }

  /**
   * Change the editor's font.
   */
  setFont(font: IInputFont): void {
    this._view.dispatch({ effects: this._theme.reconfigure(fontTheme(font)) });
  }

  /**
   * Remember a command sent from elsewhere in this view (a rerun).
   */
  remember(command: string): void {
    if (command.trim()) {
      this._local = [command, ...this._local.filter(c => c !== command)].slice(
        0,
        500
      );
    }
  }

  /**
   * Forget cached history so the next Up asks the server again.
   */
  invalidateHistory(): void {
    this._serverHistory = null;
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._suggestController?.abort();
    if (this._suggestTimer !== null) {
      clearTimeout(this._suggestTimer);
    }
    this._view.destroy();
    super.dispose();
  }

  private _keys() {
    const completing = (view: EditorView): boolean =>
      completionStatus(view.state) !== null;
    return [
      {
        key: 'Enter',
        run: (view: EditorView) => {
          if (completing(view)) {
            return false;
          }
          this._submit();
          return true;
        }
      },
      {
        key: 'Shift-Enter',
        run: (view: EditorView) => insertNewline(view)
      },
      {
        key: 'ArrowUp',
        run: (view: EditorView) => {
          if (completing(view)) {
            return false;
          }
          const head = view.state.selection.main.head;
          if (view.state.doc.lineAt(head).number !== 1) {
            return false;
          }
          return this._historyOlder();
        }
      },
      {
        key: 'ArrowDown',
        run: (view: EditorView) => {
          if (completing(view)) {
            return false;
          }
          const head = view.state.selection.main.head;
          if (view.state.doc.lineAt(head).number !== view.state.doc.lines) {
            return false;
          }
          return this._historyNewer();
        }
      },
      {
        key: 'Tab',
        run: (view: EditorView) => {
          if (completing(view)) {
            return false;
          }
          if (this._acceptGhost()) {
            return true;
          }
          void this._tabComplete();
          return true;
        }
      },
      {
        key: 'ArrowRight',
        run: () => this._acceptGhost()
      },
      {
        key: 'End',
        run: () => this._acceptGhost()
      },
      {
        key: 'Ctrl-c',
        run: (view: EditorView) => {
          if (!view.state.selection.main.empty) {
            return false; // the browser copies the selection
          }
          if (view.state.doc.length > 0) {
            this._setText('', false);
          } else {
            this._options.onKeys('\x03');
          }
          return true;
        }
      },
      {
        key: 'Ctrl-d',
        run: (view: EditorView) => {
          if (view.state.doc.length > 0) {
            return false;
          }
          this._options.onKeys('\x04');
          return true;
        }
      },
      {
        key: 'Ctrl-l',
        run: () => {
          this._options.onKeys('\x0c');
          return true;
        }
      },
      {
        key: 'Ctrl-r',
        run: () => {
          this._options.onReverseSearch();
          return true;
        }
      },
      {
        key: 'Escape',
        run: (view: EditorView) => {
          if (completing(view)) {
            return false;
          }
          if (view.state.field(ghostField)) {
            view.dispatch({ effects: setGhost.of('') });
            return true;
          }
          return false;
        }
      }
    ];
  }

  private _submit(): void {
    const text = this.value;
    this._suggestController?.abort();
    this._navigator.reset();
    this._setText('', false);
    this.remember(text);
    this._serverHistory = null;
    this._options.onSubmit(text);
  }

  private _setText(text: string, fromNavigation: boolean): void {
    const view = this._view;
    view.dispatch({
      changes: { from: 0, to: view.state.doc.length, insert: text },
      selection: { anchor: text.length },
      effects: setGhost.of(''),
      annotations: fromNavigation ? fromHistory.of(true) : undefined,
      scrollIntoView: true
    });
  }

  private _historyOlder(): boolean {
    if (!this._navigator.active) {
      if (this._serverHistory === null) {
        // The first Up before the history arrived: ask, then step.
        void this._loadHistory().then(() => {
          if (!this.isDisposed && !this._navigator.active) {
            this._beginHistory();
            const text = this._navigator.older();
            if (text !== null) {
              this._setText(text, true);
            }
          }
        });
        return true;
      }
      this._beginHistory();
    }
    const text = this._navigator.older();
    if (text !== null) {
      this._setText(text, true);
    }
    return true;
  }

  private _historyNewer(): boolean {
    const text = this._navigator.newer();
    if (text === null) {
      return false;
    }
    this._setText(text, true);
    return true;
  }

  private _beginHistory(): void {
    this._navigator.begin(
      this.value,
      mergeHistory(this._local, this._serverHistory ?? [])
    );
  }

  private _prefetchHistory(): void {
    if (this._serverHistory === null) {
      void this._loadHistory();
    }
  }

  private async _loadHistory(): Promise<void> {
    try {
      this._serverHistory = await this._options.history('', 200);
    } catch {
      this._serverHistory = [];
    }
  }

  private _scheduleSuggestion(fromNavigation: boolean): void {
    const view = this._view;
    const typed = this.value;
    const ghost = view.state.field(ghostField);
    // Keep the rest of the grey text while the typing follows it.
    if (ghost && this._ghostFor && typed.startsWith(this._ghostFor)) {
      const consumed = typed.slice(this._ghostFor.length);
      if (ghost.startsWith(consumed) && consumed.length < ghost.length) {
        this._ghostFor = typed;
        view.dispatch({ effects: setGhost.of(ghost.slice(consumed.length)) });
      } else {
        view.dispatch({ effects: setGhost.of('') });
      }
    } else if (ghost) {
      view.dispatch({ effects: setGhost.of('') });
    }
    if (this._suggestTimer !== null) {
      clearTimeout(this._suggestTimer);
      this._suggestTimer = null;
    }
    this._suggestController?.abort();
    if (fromNavigation || !typed.trim() || typed.includes('\n')) {
      return;
    }
    this._suggestTimer = setTimeout(() => {
      this._suggestTimer = null;
      void this._suggest(typed);
    }, SUGGEST_DEBOUNCE_MS);
  }

  private async _suggest(typed: string): Promise<void> {
    const controller = new AbortController();
    this._suggestController = controller;
    let suggestions: string[];
    try {
      suggestions = await this._options.history(typed, 8, controller.signal);
    } catch {
      return;
    }
    if (controller.signal.aborted || this.isDisposed || this.value !== typed) {
      return;
    }
    const rest = inlineCompletion(typed, [...this._local, ...suggestions]);
    const view = this._view;
    const head = view.state.selection.main;
    if (rest && head.empty && head.head === view.state.doc.length) {
      this._ghostFor = typed;
      view.dispatch({ effects: setGhost.of(rest) });
    }
  }

  private _acceptGhost(): boolean {
    const view = this._view;
    const ghost = view.state.field(ghostField);
    const main = view.state.selection.main;
    if (!ghost || !main.empty || main.head !== view.state.doc.length) {
      return false;
    }
    const end = view.state.doc.length;
    view.dispatch({
      changes: { from: end, insert: ghost },
      selection: { anchor: end + ghost.length },
      effects: setGhost.of('')
    });
    return true;
  }

  /**
   * Tab: one candidate is inserted; several extend the word to their common
   * prefix and open the list.
   */
  private async _tabComplete(): Promise<void> {
    const view = this._view;
    const found = await this._paths.candidates(view.state, false);
    if (!found || view.state.doc.toString() !== found.doc) {
      return;
    }
    const { word, query, entries } = found;
    if (entries.length === 0) {
      return;
    }
    const insert = (text: string, open: boolean): void => {
      const replacement = wordText(text, word.quote, open);
      view.dispatch({
        changes: { from: word.from, to: word.to, insert: replacement },
        selection: { anchor: word.from + replacement.length }
      });
    };
    if (entries.length === 1) {
      insert(query.folderPart + entries[0].name, isFolder(entries[0]));
      return;
    }
    const prefix = commonPrefix(entries.map(e => e.name));
    if (prefix.length > query.prefix.length) {
      insert(query.folderPart + prefix, true);
    }
    startCompletion(view);
  }

  private readonly _options: CommandInput.IOptions;
  private readonly _view: EditorView;
  private readonly _theme = new Compartment();
  private readonly _navigator = new HistoryNavigator();
  private _local: string[] = [];
  private _serverHistory: string[] | null = null;
  private _suggestTimer: ReturnType<typeof setTimeout> | null = null;
  private _suggestController: AbortController | null = null;
  private _ghostFor = '';
  private readonly _paths: PathCompleter;
}

/**
 * A namespace for CommandInput statics.
 */
export namespace CommandInput {
  export interface IOptions {
    trans: TranslationBundle;
    font: IInputFont;
    /** The shell's working folder (absolute), for path completion. */
    cwd: () => string;
    /** Commands from the history for a typed text, newest first. */
    history: (
      typed: string,
      limit: number,
      signal?: AbortSignal
    ) => Promise<string[]>;
    /** The entries of a folder (absolute path). */
    listFolder: (path: string) => Promise<IFolderEntry[]>;
    /** Enter: run the text. */
    onSubmit: (text: string) => void;
    /** Raw keys for the shell (Ctrl+C on an empty line, Ctrl+D, Ctrl+L). */
    onKeys: (data: string) => void;
    /** Ctrl+R: hand over to the shell's own reverse history search. */
    onReverseSearch: () => void;
  }
}
