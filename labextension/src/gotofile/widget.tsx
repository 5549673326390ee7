/**
 * The Go to File overlay: a modal quick-open list over the whole window.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget, searchIcon, UseSignal } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { segmentsFromPositions } from '../common/highlight';
import { splitPath } from '../common/paths';
import type { FileIconResolver } from '../ui/fileicon';
import { Highlighted } from '../ui/highlighted';
import type { GoToFileModel } from './model';

/**
 * CSS classes of the overlay.
 */
export namespace CSS {
  export const overlay = 'jp-TeraxGoToFile';
  export const dialog = 'jp-TeraxGoToFile-dialog';
  export const inputRow = 'jp-TeraxGoToFile-inputRow';
  export const inputIcon = 'jp-TeraxGoToFile-inputIcon';
  export const input = 'jp-TeraxGoToFile-input';
  export const progress = 'jp-TeraxGoToFile-progress';
  export const list = 'jp-TeraxGoToFile-list';
  export const option = 'jp-TeraxGoToFile-option';
  export const active = 'jp-mod-active';
  export const icon = 'jp-TeraxGoToFile-icon';
  export const name = 'jp-TeraxGoToFile-name';
  export const folder = 'jp-TeraxGoToFile-folder';
  export const folderText = 'jp-TeraxGoToFile-folderText';
  export const mark = 'jp-TeraxGoToFile-mark';
  export const message = 'jp-TeraxGoToFile-message';
  export const error = 'jp-TeraxGoToFile-error';
  export const footer = 'jp-TeraxGoToFile-footer';
  export const footerFacts = 'jp-TeraxGoToFile-facts';
  export const warning = 'jp-TeraxGoToFile-warning';
  export const hints = 'jp-TeraxGoToFile-hints';
}

const LISTBOX_ID = 'terax-go-to-file-listbox';
const OPTION_ID = 'terax-go-to-file-option-';
const PAGE = 8;

/**
 * The modal overlay widget; shown with {@link GoToFileOverlay.open}.
 */
export class GoToFileOverlay extends ReactWidget {
  constructor(options: GoToFileOverlay.IOptions) {
    super();
    this.model = options.model;
    this._trans = options.trans;
    this._icons = options.icons;
    this._limit = options.limit ?? (() => 50);
    this._onOpenFile = options.onOpenFile;
    this.id = 'terax-go-to-file';
    this.addClass(CSS.overlay);
    // Lab's shortcuts stay out of the overlay: Ctrl+P here means "previous".
    this.node.dataset.lmSuppressShortcuts = 'true';
    this.node.addEventListener('focusout', this);
  }

  /**
   * Keep focus in the modal: a panel Lab activates late (the launcher after
   * start-up, say) must not take the keyboard away from the query.
   */
  handleEvent(event: Event): void {
    if (event.type !== 'focusout' || !this.isAttached) {
      return;
    }
    const next = (event as FocusEvent).relatedTarget;
    if (next instanceof Node && !this.node.contains(next)) {
      requestAnimationFrame(() => {
        if (this.isAttached) {
          this.node.querySelector<HTMLInputElement>(`.${CSS.input}`)?.focus();
        }
      });
    }
  }

  readonly model: GoToFileModel;

  get isOpen(): boolean {
    return this.isAttached;
  }

  /**
   * Show the overlay and search; the input keeps the last query, selected.
   */
  open(query?: string): void {
    if (!this.isAttached) {
      const active = document.activeElement;
      this._returnFocus = active instanceof HTMLElement ? active : null;
      Widget.attach(this, document.body);
    }
    if (query !== undefined) {
      this.model.setQuery(query);
    }
    void this.model.refresh();
    this._focusToken++;
    this.update();
  }

  /**
   * Hide the overlay and give focus back to where it was.
   */
  dismiss(): void {
    if (!this.isAttached) {
      return;
    }
    this.model.cancel();
    Widget.detach(this);
    const target = this._returnFocus;
    this._returnFocus = null;
    if (target && target.isConnected) {
      target.focus();
    }
  }

  protected override render(): JSX.Element {
    return (
      <UseSignal signal={this.model.changed} initialSender={this.model}>
        {() => (
          <GoToFileView
            model={this.model}
            trans={this._trans}
            icons={this._icons}
            limit={this._limit()}
            focusToken={this._focusToken}
            onOpenFile={path => this._openFile(path)}
            onClose={() => this.dismiss()}
          />
        )}
      </UseSignal>
    );
  }

  private _openFile(path: string): void {
    // Close first so the opened editor, not the old element, gets focus.
    this._returnFocus = null;
    this.dismiss();
    this._onOpenFile(path);
  }

  private readonly _trans: TranslationBundle;
  private readonly _icons: FileIconResolver;
  private readonly _limit: () => number;
  private readonly _onOpenFile: (path: string) => void;
  private _returnFocus: HTMLElement | null = null;
  private _focusToken = 0;
}

/**
 * A namespace for GoToFileOverlay statics.
 */
export namespace GoToFileOverlay {
  export interface IOptions {
    model: GoToFileModel;
    trans: TranslationBundle;
    icons: FileIconResolver;
    /**
     * The current result limit (from the settings).
     */
    limit?: () => number;
    onOpenFile: (path: string) => void;
  }
}

interface IViewProps {
  model: GoToFileModel;
  trans: TranslationBundle;
  icons: FileIconResolver;
  limit: number;
  focusToken: number;
  onOpenFile: (path: string) => void;
  onClose: () => void;
}

function GoToFileView(props: IViewProps): JSX.Element {
  const { model, trans, icons, onOpenFile, onClose } = props;
  const inputRef = React.useRef<HTMLInputElement>(null);
  const listRef = React.useRef<HTMLUListElement>(null);

  React.useEffect(() => {
    const input = inputRef.current;
    if (input) {
      input.focus();
      input.select();
    }
  }, [props.focusToken]);

  const results = model.results;
  const activeIndex = model.activeIndex;
  React.useEffect(() => {
    const option = listRef.current?.children[activeIndex];
    if (option instanceof HTMLElement) {
      option.scrollIntoView({ block: 'nearest' });
    }
  }, [activeIndex, results]);

  const openActive = (): void => {
    const item = model.activeItem;
    if (item) {
      onOpenFile(item.path);
    }
  };

  const onKeyDown = (event: React.KeyboardEvent<HTMLInputElement>): void => {
    const accel = event.ctrlKey || event.metaKey;
    let handled = true;
    if (event.key === 'ArrowDown' || (accel && event.code === 'KeyN')) {
      model.moveActive(1);
    } else if (event.key === 'ArrowUp' || (accel && event.code === 'KeyP')) {
      model.moveActive(-1);
    } else if (event.key === 'PageDown') {
      model.moveActive(PAGE);
    } else if (event.key === 'PageUp') {
      model.moveActive(-PAGE);
    } else if (event.key === 'Enter') {
      openActive();
    } else if (event.key === 'Escape') {
      onClose();
    } else if (event.key === 'Tab') {
      // Modal: focus stays in the input.
    } else {
      handled = false;
    }
    if (handled) {
      event.preventDefault();
      event.stopPropagation();
    }
  };

  const onBackdropMouseDown = (event: React.MouseEvent): void => {
    if (event.target === event.currentTarget) {
      event.preventDefault();
      onClose();
    }
  };

  const status = model.status;
  const activeId = activeIndex >= 0 ? `${OPTION_ID}${activeIndex}` : undefined;
  let message: JSX.Element | null = null;
  if (status === 'error') {
    message = (
      <div className={`${CSS.message} ${CSS.error}`} role="alert">
        {trans.__('Could not search files: %1', model.error ?? '')}
      </div>
    );
  } else if (status !== 'idle' && results.length === 0 && status === 'ready') {
    message = (
      <div className={CSS.message} role="status">
        {model.resultsQuery
          ? trans.__('No files match “%1”', model.resultsQuery)
          : trans.__('No files in this workspace')}
      </div>
    );
  }

  return (
    <div
      className="jp-TeraxGoToFile-backdrop"
      onMouseDown={onBackdropMouseDown}
    >
      <div
        className={CSS.dialog}
        role="dialog"
        aria-modal="true"
        aria-label={trans.__('Go to File')}
        data-status={status}
        data-results-query={model.resultsQuery}
      >
        <div className={CSS.inputRow}>
          <searchIcon.react className={CSS.inputIcon} tag="span" />
          <input
            ref={inputRef}
            className={CSS.input}
            type="text"
            role="combobox"
            aria-label={trans.__('File name')}
            aria-expanded={results.length > 0}
            aria-controls={LISTBOX_ID}
            aria-autocomplete="list"
            aria-activedescendant={activeId}
            autoComplete="off"
            autoCorrect="off"
            autoCapitalize="off"
            spellCheck={false}
            placeholder={trans.__('Search files by name')}
            value={model.query}
            onChange={event => model.setQuery(event.currentTarget.value)}
            onKeyDown={onKeyDown}
          />
        </div>
        <div
          className={CSS.progress}
          data-active={status === 'loading' ? 'true' : 'false'}
          aria-hidden="true"
        />
        {message}
        <ul
          ref={listRef}
          id={LISTBOX_ID}
          className={CSS.list}
          role="listbox"
          aria-label={trans.__('Matching files')}
          hidden={results.length === 0}
        >
          {results.map((item, index) => {
            const parts = splitPath(item.path, item.positions);
            const Icon = icons.iconFor(item.path);
            const active = index === activeIndex;
            return (
              <li
                key={item.path}
                id={`${OPTION_ID}${index}`}
                className={active ? `${CSS.option} ${CSS.active}` : CSS.option}
                role="option"
                aria-selected={active}
                title={item.path}
                data-path={item.path}
                onMouseDown={event => event.preventDefault()}
                onMouseMove={() => model.setActive(index)}
                onClick={() => onOpenFile(item.path)}
              >
                <Icon.react className={CSS.icon} tag="span" />
                <span className={CSS.name}>
                  <Highlighted
                    segments={segmentsFromPositions(
                      parts.name,
                      parts.namePositions
                    )}
                    markClassName={CSS.mark}
                  />
                </span>
                {parts.folder ? (
                  <span className={CSS.folder}>
                    <span className={CSS.folderText}>
                      <Highlighted
                        segments={segmentsFromPositions(
                          parts.folder,
                          parts.folderPositions
                        )}
                        markClassName={CSS.mark}
                      />
                    </span>
                  </span>
                ) : null}
              </li>
            );
          })}
        </ul>
        <Footer model={model} trans={trans} limit={props.limit} />
      </div>
    </div>
  );
}

function Footer(props: {
  model: GoToFileModel;
  trans: TranslationBundle;
  limit: number;
}): JSX.Element {
  const { model, trans } = props;
  const facts = model.facts;
  const count = model.results.length;
  const parts: string[] = [];
  if (model.status !== 'error' && facts) {
    if (count > 0) {
      parts.push(
        count >= props.limit
          ? trans.__('Top %1 matches', count.toLocaleString())
          : trans._n('%1 match', '%1 matches', count)
      );
    }
    const total = facts.total_files;
    parts.push(
      trans._n(
        '%2 file indexed',
        '%2 files indexed',
        total,
        total.toLocaleString()
      )
    );
  }
  return (
    <div className={CSS.footer}>
      <span className={CSS.footerFacts} aria-live="polite">
        {parts.join(' · ')}
        {facts?.truncated ? (
          <span
            className={CSS.warning}
            title={trans.__(
              'The workspace has more files than the index holds; some files cannot be found.'
            )}
          >
            {trans.__('Index truncated')}
          </span>
        ) : null}
        {facts?.refreshing ? (
          <span className={CSS.warning}>{trans.__('Updating index…')}</span>
        ) : null}
      </span>
      <span className={CSS.hints} aria-hidden="true">
        <kbd>↑</kbd>
        <kbd>↓</kbd> {trans.__('navigate')} <kbd>↵</kbd> {trans.__('open')}{' '}
        <kbd>esc</kbd> {trans.__('close')}
      </span>
    </div>
  );
}
