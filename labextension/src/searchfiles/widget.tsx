/**
 * The Search in Files side panel: header, toolbar and the query form.
 */
import type { ITranslator, TranslationBundle } from '@jupyterlab/translation';
import {
  caseSensitiveIcon,
  clearIcon,
  collapseAllIcon,
  expandAllIcon,
  LabIcon,
  ReactWidget,
  refreshIcon,
  regexIcon,
  SidePanel,
  ToolbarButton,
  ToolbarButtonComponent,
  UseSignal,
  wordIcon
} from '@jupyterlab/ui-components';
import { Panel, Widget } from '@lumino/widgets';
import * as React from 'react';

import type { FileIconResolver } from '../ui/fileicon';
import { CSS } from './css';
import type { ISearchOptions, SearchModel } from './model';
import {
  type OpenMatchHandler,
  ResultsTree,
  Summary,
  useTextColumns
} from './results';

export { CSS } from './css';
export type { OpenMatchHandler } from './results';

/**
 * The side panel: a Lab side panel with a header, a toolbar and the view.
 */
export class SearchPanel extends SidePanel {
  constructor(options: SearchPanel.IOptions) {
    super({ content: new Panel(), translator: options.translator });
    const trans = options.trans;
    this.model = options.model;
    this.id = 'terax-search-in-files';
    this.addClass(CSS.panel);
    this.title.icon = options.icon;
    this.title.caption = trans.__('Search in Files');

    const heading = new Widget({ node: document.createElement('h2') });
    heading.node.textContent = trans.__('Search');
    heading.addClass(CSS.title);
    this.header.addWidget(heading);

    this.toolbar.addItem(
      'refresh',
      new ToolbarButton({
        icon: refreshIcon,
        tooltip: trans.__('Search Again'),
        onClick: () => void this.model.search()
      })
    );
    this.toolbar.addItem(
      'clear',
      new ToolbarButton({
        icon: clearIcon,
        tooltip: trans.__('Clear Search Results'),
        onClick: () => {
          this.model.clear();
          this.focusQuery();
        }
      })
    );
    this.toolbar.addItem(
      'collapse',
      ReactWidget.create(
        <UseSignal signal={this.model.changed} initialSender={this.model}>
          {() => <CollapseToggle model={this.model} trans={trans} />}
        </UseSignal>
      )
    );

    this._view = new SearchView(options);
    this.addWidget(this._view);
  }

  readonly model: SearchModel;

  /**
   * Focus the query input and select its text.
   */
  focusQuery(): void {
    this._view.focusQuery();
  }

  private readonly _view: SearchView;
}

/**
 * A namespace for SearchPanel statics.
 */
export namespace SearchPanel {
  export interface IOptions {
    model: SearchModel;
    trans: TranslationBundle;
    translator: ITranslator;
    icons: FileIconResolver;
    icon: LabIcon;
    onOpenMatch: OpenMatchHandler;
  }
}

function CollapseToggle(props: {
  model: SearchModel;
  trans: TranslationBundle;
}): JSX.Element {
  const { model, trans } = props;
  const results = model.results;
  const allCollapsed =
    results.length > 0 && results.every(r => model.isCollapsed(r.path));
  return (
    <ToolbarButtonComponent
      icon={allCollapsed ? expandAllIcon : collapseAllIcon}
      tooltip={allCollapsed ? trans.__('Expand All') : trans.__('Collapse All')}
      enabled={results.length > 0}
      onClick={() => (allCollapsed ? model.expandAll() : model.collapseAll())}
    />
  );
}

/**
 * The form and the results, rendered with React.
 */
class SearchView extends ReactWidget {
  constructor(options: SearchPanel.IOptions) {
    super();
    this._options = options;
    this.addClass(CSS.view);
  }

  focusQuery(): void {
    this._focusToken++;
    this.update();
  }

  protected override render(): JSX.Element {
    const { model, trans, icons, onOpenMatch } = this._options;
    return (
      <UseSignal signal={model.changed} initialSender={model}>
        {() => (
          <SearchComponent
            model={model}
            trans={trans}
            icons={icons}
            focusToken={this._focusToken}
            onOpenMatch={onOpenMatch}
          />
        )}
      </UseSignal>
    );
  }

  private readonly _options: SearchPanel.IOptions;
  private _focusToken = 0;
}

interface ISearchProps {
  model: SearchModel;
  trans: TranslationBundle;
  icons: FileIconResolver;
  focusToken: number;
  onOpenMatch: OpenMatchHandler;
}

type ToggleKey = 'regex' | 'matchCase' | 'wholeWord';

/**
 * Alt+<key> toggles, by physical key so that macOS Option characters do not
 * get in the way.
 */
const TOGGLE_KEYS: Record<string, ToggleKey> = {
  KeyR: 'regex',
  KeyC: 'matchCase',
  KeyW: 'wholeWord'
};

function SearchComponent(props: ISearchProps): JSX.Element {
  const { model, trans } = props;
  const options = model.options;
  const queryRef = React.useRef<HTMLInputElement>(null);
  const treeRef = React.useRef<HTMLDivElement>(null);
  const wrapperRef = React.useRef<HTMLDivElement>(null);
  const columns = useTextColumns(wrapperRef);

  React.useEffect(() => {
    if (props.focusToken > 0 && queryRef.current) {
      queryRef.current.focus();
      queryRef.current.select();
    }
  }, [props.focusToken]);

  const set = (change: Partial<ISearchOptions>, immediate = false): void =>
    model.update(change, immediate);

  const toggle = (key: ToggleKey): void => set({ [key]: !options[key] }, true);

  const onPanelKeyDown = (event: React.KeyboardEvent): void => {
    const key = TOGGLE_KEYS[event.code];
    if (key && event.altKey && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      event.stopPropagation();
      toggle(key);
    }
  };

  const onQueryKeyDown = (event: React.KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      void model.search();
    } else if (event.key === 'Escape' && model.status === 'searching') {
      event.preventDefault();
      model.cancel();
    } else if (event.key === 'ArrowDown') {
      const first = treeRef.current?.querySelector<HTMLElement>(`.${CSS.row}`);
      if (first) {
        event.preventDefault();
        first.focus();
      }
    }
  };

  const onFieldKeyDown = (event: React.KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      void model.search();
    }
  };

  const invalidPattern =
    model.status === 'error' && model.errorReason === 'invalid_pattern';

  return (
    <div
      ref={wrapperRef}
      className={CSS.form + '-wrapper'}
      onKeyDown={onPanelKeyDown}
    >
      <div className={CSS.form}>
        <div
          className={CSS.queryBox}
          data-invalid={invalidPattern ? 'true' : 'false'}
        >
          <input
            ref={queryRef}
            className={CSS.query}
            type="text"
            aria-label={trans.__('Search text')}
            aria-invalid={invalidPattern}
            aria-describedby={invalidPattern ? 'terax-search-error' : undefined}
            placeholder={trans.__('Search')}
            autoComplete="off"
            autoCorrect="off"
            autoCapitalize="off"
            spellCheck={false}
            value={options.query}
            onChange={event => set({ query: event.currentTarget.value })}
            onKeyDown={onQueryKeyDown}
          />
          <Toggle
            icon={caseSensitiveIcon}
            label={trans.__('Match Case (Alt+C)')}
            pressed={options.matchCase}
            onClick={() => toggle('matchCase')}
          />
          <Toggle
            icon={wordIcon}
            label={trans.__('Match Whole Word (Alt+W)')}
            pressed={options.wholeWord}
            onClick={() => toggle('wholeWord')}
          />
          <Toggle
            icon={regexIcon}
            label={trans.__('Use Regular Expression (Alt+R)')}
            pressed={options.regex}
            onClick={() => toggle('regex')}
          />
        </div>
        {model.status === 'error' ? (
          <div id="terax-search-error" className={CSS.error} role="alert">
            {model.error}
          </div>
        ) : null}
        <label className={CSS.field}>
          <span className={CSS.fieldLabel}>{trans.__('Files to include')}</span>
          <input
            className={CSS.input}
            type="text"
            placeholder={trans.__('e.g. *.py, src/**')}
            spellCheck={false}
            value={options.include}
            onChange={event => set({ include: event.currentTarget.value })}
            onKeyDown={onFieldKeyDown}
          />
        </label>
        <label className={CSS.field}>
          <span className={CSS.fieldLabel}>{trans.__('Files to exclude')}</span>
          <input
            className={CSS.input}
            type="text"
            placeholder={trans.__('e.g. *.min.js, build/**')}
            spellCheck={false}
            value={options.exclude}
            onChange={event => set({ exclude: event.currentTarget.value })}
            onKeyDown={onFieldKeyDown}
          />
        </label>
      </div>
      <div
        className={CSS.progress}
        data-active={model.status === 'searching' ? 'true' : 'false'}
        aria-hidden="true"
      />
      <Summary model={model} trans={trans} />
      <ResultsTree {...props} treeRef={treeRef} columns={columns} />
    </div>
  );
}

function Toggle(props: {
  icon: LabIcon;
  label: string;
  pressed: boolean;
  onClick: () => void;
}): JSX.Element {
  return (
    <button
      type="button"
      className={CSS.toggle}
      aria-pressed={props.pressed}
      aria-label={props.label}
      title={props.label}
      onMouseDown={event => event.preventDefault()}
      onClick={props.onClick}
    >
      <props.icon.react tag="span" />
    </button>
  );
}
