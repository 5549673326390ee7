/**
 * The History panel: a virtual list of commits with the graph the server
 * laid out (one SVG per rendered row), search fields, and the selected
 * commit's detail with its files and their diffs.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget, refreshIcon, UseSignal } from '@jupyterlab/ui-components';
import * as React from 'react';

import type { GitLogRefs, IGitCommit, IGitRef } from '../api/git';
import {
  compactRowLanes,
  decodeRow,
  graphLanes,
  type IGraphMetrics,
  type Lanes,
  rowGeometry
} from '../common/gitgraph';
import { splitEntryPath, statusCode } from '../common/git/status';
import {
  needsMore,
  relativeDate,
  scrollIntoView,
  visibleRange
} from '../common/reldate';
import { HistoryCSS } from './css';
import { DiffView } from './diffview';
import type { HistoryModel } from './historymodel';

const ROW_HEIGHT = 28;
const METRICS: IGraphMetrics = {
  laneWidth: 14,
  rowHeight: ROW_HEIGHT,
  dotRadius: 4
};
const MAX_LANES = 20;
/** Rows beyond the rendered ones whose lanes the graph's width includes. */
const LANE_MARGIN = 32;
const PALETTE_SIZE = 8;

/**
 * The content of the History main-area widget.
 */
export class HistoryView extends ReactWidget {
  constructor(options: HistoryView.IOptions) {
    super();
    this.model = options.model;
    this._trans = options.trans;
    this._locale = options.locale;
    this.addClass(HistoryCSS.panel);
    this.node.tabIndex = -1;
  }

  readonly model: HistoryModel;

  /**
   * Focus the message search.
   */
  focusSearch(): void {
    this.node.querySelector<HTMLInputElement>(`.${HistoryCSS.input}`)?.focus();
  }

  /**
   * Focus the commit list (keyboard navigation).
   */
  focusList(): void {
    this.node.querySelector<HTMLElement>(`.${HistoryCSS.list}`)?.focus();
  }

  protected override render(): JSX.Element {
    return (
      <UseSignal signal={this.model.changed} initialSender={this.model}>
        {() => (
          <HistoryComponent
            model={this.model}
            trans={this._trans}
            locale={this._locale}
          />
        )}
      </UseSignal>
    );
  }

  private readonly _trans: TranslationBundle;
  private readonly _locale: string | undefined;
}

/**
 * A namespace for HistoryView statics.
 */
export namespace HistoryView {
  export interface IOptions {
    model: HistoryModel;
    trans: TranslationBundle;
    locale?: string;
  }
}

interface IHistoryProps {
  model: HistoryModel;
  trans: TranslationBundle;
  locale: string | undefined;
}

function HistoryComponent(props: IHistoryProps): JSX.Element {
  const { model } = props;
  const listRef = React.useRef<HTMLDivElement>(null);
  const searchRef = React.useRef<HTMLInputElement>(null);

  const onKeyDown = (event: React.KeyboardEvent): void => {
    if (
      (event.ctrlKey || event.metaKey) &&
      !event.altKey &&
      event.key.toLowerCase() === 'f'
    ) {
      event.preventDefault();
      event.stopPropagation();
      searchRef.current?.focus();
      searchRef.current?.select();
    }
  };

  return (
    <div className={`${HistoryCSS.panel}-content`} onKeyDown={onKeyDown}>
      <SearchBar {...props} searchRef={searchRef} listRef={listRef} />
      <div
        className={HistoryCSS.progress}
        data-active={model.loading ? 'true' : 'false'}
        aria-hidden="true"
      />
      <div className={HistoryCSS.body}>
        <CommitList {...props} listRef={listRef} />
        <Detail {...props} />
      </div>
    </div>
  );
}

function SearchBar(
  props: IHistoryProps & {
    searchRef: React.RefObject<HTMLInputElement>;
    listRef: React.RefObject<HTMLDivElement>;
  }
): JSX.Element {
  const { model, trans, searchRef, listRef } = props;
  const filters = model.filters;
  const onKeyDown = (event: React.KeyboardEvent<HTMLInputElement>): void => {
    if (event.key === 'Enter') {
      event.preventDefault();
      void model.reload();
    } else if (event.key === 'ArrowDown') {
      event.preventDefault();
      listRef.current?.focus();
      if (model.selectedIndex < 0) {
        model.select(0);
      }
    } else if (event.key === 'Escape' && event.currentTarget.value) {
      event.preventDefault();
      event.stopPropagation();
      const name = event.currentTarget.dataset.filter as
        'query' | 'author' | 'file';
      model.setFilters({ [name]: '' }, true);
    }
  };
  const count = model.commits.length;
  let summary: string;
  if (model.error) {
    summary = '';
  } else if (model.loading && count === 0) {
    summary = trans.__('Loading…');
  } else {
    summary = model.hasMore
      ? trans.__('%1+ commits', count.toLocaleString())
      : trans._n('%2 commit', '%2 commits', count, count.toLocaleString());
  }
  return (
    <div className={HistoryCSS.search} role="search">
      <input
        ref={searchRef}
        className={HistoryCSS.input}
        data-filter="query"
        type="search"
        placeholder={trans.__('Search messages (Ctrl+F)')}
        aria-label={trans.__('Search commit messages')}
        spellCheck={false}
        value={filters.query}
        onChange={event =>
          model.setFilters({ query: event.currentTarget.value })
        }
        onKeyDown={onKeyDown}
      />
      <input
        className={`${HistoryCSS.input} ${HistoryCSS.field}`}
        data-filter="author"
        type="search"
        placeholder={trans.__('Author')}
        aria-label={trans.__('Filter by author')}
        spellCheck={false}
        value={filters.author}
        onChange={event =>
          model.setFilters({ author: event.currentTarget.value })
        }
        onKeyDown={onKeyDown}
      />
      <input
        className={`${HistoryCSS.input} ${HistoryCSS.field}`}
        data-filter="file"
        type="search"
        placeholder={trans.__('Path')}
        aria-label={trans.__('Filter by path')}
        spellCheck={false}
        value={filters.file}
        onChange={event =>
          model.setFilters({ file: event.currentTarget.value })
        }
        onKeyDown={onKeyDown}
      />
      <select
        className={HistoryCSS.field}
        aria-label={trans.__('Branches shown')}
        title={trans.__('Which refs the graph starts from')}
        data-filter="refs"
        value={filters.ref ? 'HEAD' : filters.refs}
        onChange={event => {
          const value = event.currentTarget.value;
          model.setFilters(
            value === 'HEAD'
              ? { ref: 'HEAD' }
              : { ref: '', refs: value as GitLogRefs },
            true
          );
        }}
      >
        <option value="branches">{trans.__('Branches and tags')}</option>
        <option value="all">{trans.__('All refs (pull requests too)')}</option>
        <option value="local">{trans.__('Local branches')}</option>
        <option value="HEAD">{trans.__('Current branch')}</option>
      </select>
      <span className={HistoryCSS.summary} role="status" aria-live="polite">
        {summary}
        {model.filtered && !model.graphEnabled
          ? ` · ${trans.__('graph hidden while filtering')}`
          : ''}
      </span>
      <button
        type="button"
        className={`${HistoryCSS.search}-refresh`}
        title={trans.__('Reload')}
        aria-label={trans.__('Reload')}
        onClick={() => void model.reload()}
      >
        <refreshIcon.react tag="span" />
      </button>
    </div>
  );
}

/**
 * The current time, renewed every minute (for relative dates).
 */
function useNow(): number {
  const [now, setNow] = React.useState(() => Date.now());
  React.useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/**
 * Re-render on scroll and resize, once per frame.
 */
function useViewport(ref: React.RefObject<HTMLDivElement>): {
  scrollTop: number;
  height: number;
} {
  const [viewport, setViewport] = React.useState({ scrollTop: 0, height: 0 });
  React.useEffect(() => {
    const node = ref.current;
    if (!node) {
      return;
    }
    let frame = 0;
    const measure = (): void => {
      frame = 0;
      setViewport(previous =>
        previous.scrollTop === node.scrollTop &&
        previous.height === node.clientHeight
          ? previous
          : { scrollTop: node.scrollTop, height: node.clientHeight }
      );
    };
    const schedule = (): void => {
      if (!frame) {
        frame = requestAnimationFrame(measure);
      }
    };
    node.addEventListener('scroll', schedule, { passive: true });
    const observer = new ResizeObserver(schedule);
    observer.observe(node);
    measure();
    return () => {
      node.removeEventListener('scroll', schedule);
      observer.disconnect();
      if (frame) {
        cancelAnimationFrame(frame);
      }
    };
  }, [ref]);
  return viewport;
}

function CommitList(
  props: IHistoryProps & { listRef: React.RefObject<HTMLDivElement> }
): JSX.Element {
  const { model, trans, listRef, locale } = props;
  const commits = model.commits;
  const viewport = useViewport(listRef);
  const { start, end } = visibleRange(
    viewport.scrollTop,
    viewport.height,
    ROW_HEIGHT,
    commits.length
  );
  // The graph is as wide as the rows around the viewport need, with a margin
  // so that it widens before a wider row scrolls in and does not change at
  // every row: reserving the widest lane count of every loaded page would
  // squeeze the subjects of a long history down to an ellipsis where only a
  // few lanes run.
  const laneFrom = Math.max(0, start - LANE_MARGIN);
  const laneTo = Math.min(commits.length, end + LANE_MARGIN);
  const tops = model.laneTops;
  const lanes = React.useMemo(() => {
    if (!model.graphEnabled || tops.length < laneTo) {
      return 0;
    }
    const widths: number[] = [];
    for (let index = laneFrom; index < laneTo; index++) {
      widths.push(compactRowLanes(tops[index], commits[index].graph ?? []));
    }
    return graphLanes(widths, MAX_LANES);
  }, [commits, tops, laneFrom, laneTo, model.graphEnabled]);
  const now = useNow();

  // A new search starts at its newest matches, not where the last list was scrolled.
  const filters = model.filters;
  React.useEffect(() => {
    if (listRef.current) {
      listRef.current.scrollTop = 0;
    }
  }, [filters, listRef]);

  React.useEffect(() => {
    if (viewport.height > 0 && needsMore(end, commits.length, model.hasMore)) {
      void model.loadMore();
    }
  }, [end, commits.length, model, viewport.height]);

  const selected = model.selectedIndex;
  const moveTo = (index: number): void => {
    if (index < 0 || index >= commits.length) {
      return;
    }
    model.select(index);
    const node = listRef.current;
    if (node) {
      const top = scrollIntoView(
        index,
        node.scrollTop,
        node.clientHeight,
        ROW_HEIGHT
      );
      if (top !== null) {
        node.scrollTop = top;
      }
    }
  };

  const onKeyDown = (event: React.KeyboardEvent): void => {
    const page = Math.max(1, Math.floor(viewport.height / ROW_HEIGHT) - 1);
    const steps: Record<string, number> = {
      ArrowDown: 1,
      ArrowUp: -1,
      PageDown: page,
      PageUp: -page
    };
    if (event.key in steps) {
      event.preventDefault();
      const delta = steps[event.key];
      // Steps stop at the ends: wrapping around a history whose end is not
      // loaded yet would jump somewhere arbitrary.
      const next =
        selected < 0
          ? 0
          : Math.max(0, Math.min(commits.length - 1, selected + delta));
      moveTo(next);
    } else if (event.key === 'Home') {
      event.preventDefault();
      moveTo(0);
    } else if (event.key === 'End') {
      event.preventDefault();
      moveTo(commits.length - 1);
    }
  };

  const rows: JSX.Element[] = [];
  for (let index = start; index < end; index++) {
    const commit = commits[index];
    rows.push(
      <CommitRow
        key={commit.oid}
        commit={commit}
        top={tops[index]}
        index={index}
        lanes={lanes}
        selected={index === selected}
        now={now}
        locale={locale}
        trans={trans}
        onSelect={() => moveTo(index)}
      />
    );
  }

  return (
    <div
      ref={listRef}
      className={HistoryCSS.list}
      role="listbox"
      aria-label={trans.__('Commits')}
      aria-activedescendant={
        selected >= 0 ? `terax-commit-${commits[selected].short}` : undefined
      }
      tabIndex={0}
      onKeyDown={onKeyDown}
      style={{
        ['--jp-terax-graph-width' as string]: `${lanes * METRICS.laneWidth}px`
      }}
    >
      {model.error ? (
        <div className={HistoryCSS.empty} role="alert" data-kind="error">
          {model.error}
        </div>
      ) : !model.loading && commits.length === 0 ? (
        <div className={HistoryCSS.empty}>
          {model.filtered
            ? trans.__('No commit matches the search.')
            : trans.__('No commits yet.')}
        </div>
      ) : null}
      <div
        className={HistoryCSS.spacer}
        style={{ height: commits.length * ROW_HEIGHT }}
      >
        {rows}
      </div>
    </div>
  );
}

const CommitRow = React.memo(
  (props: {
    commit: IGitCommit;
    top: Lanes | undefined;
    index: number;
    lanes: number;
    selected: boolean;
    now: number;
    locale: string | undefined;
    trans: TranslationBundle;
    onSelect: () => void;
  }): JSX.Element => {
    const { commit, lanes, trans } = props;
    return (
      <div
        id={`terax-commit-${commit.short}`}
        className={HistoryCSS.row}
        role="option"
        aria-selected={props.selected}
        data-oid={commit.oid}
        data-index={props.index}
        data-parents={commit.parents.length}
        style={{ transform: `translateY(${props.index * ROW_HEIGHT}px)` }}
        onMouseDown={event => event.preventDefault()}
        onClick={() => {
          props.onSelect();
          (
            (document.activeElement as HTMLElement | null)?.closest(
              `.${HistoryCSS.list}`
            ) as HTMLElement | null
          )?.focus();
        }}
      >
        {lanes > 0 && props.top && commit.graph ? (
          <GraphCell
            commit={commit}
            row={commit.graph}
            top={props.top}
            lanes={lanes}
          />
        ) : null}
        <span className={HistoryCSS.subject}>
          {commit.refs.map(ref => (
            <RefBadge key={`${ref.kind}:${ref.name}`} gitRef={ref} />
          ))}
          <span className={`${HistoryCSS.subject}-text`} title={commit.subject}>
            {commit.subject || trans.__('(no message)')}
          </span>
        </span>
        <span className={HistoryCSS.author} title={commit.email}>
          {commit.author}
        </span>
        <span
          className={HistoryCSS.date}
          title={new Date(commit.date).toLocaleString(props.locale)}
        >
          {relativeDate(
            commit.date,
            props.now,
            props.locale,
            trans.__('just now')
          )}
        </span>
        <span className={HistoryCSS.oid}>{commit.short}</span>
      </div>
    );
  }
);

function GraphCell(props: {
  commit: IGitCommit;
  row: readonly number[];
  top: Lanes;
  lanes: number;
}): JSX.Element {
  const { commit, lanes } = props;
  const geometry = rowGeometry(decodeRow(props.top, props.row), METRICS);
  const width = lanes * METRICS.laneWidth;
  const merge = commit.parents.length > 1;
  const head = commit.refs.some(r => r.kind === 'head');
  const colour = (index: number): string =>
    `${HistoryCSS.graph}-c${((index % PALETTE_SIZE) + PALETTE_SIZE) % PALETTE_SIZE}`;
  return (
    <svg
      className={HistoryCSS.graph}
      width={width}
      height={ROW_HEIGHT}
      viewBox={`0 0 ${width} ${ROW_HEIGHT}`}
      aria-hidden="true"
      data-merge={merge ? 'true' : undefined}
    >
      {geometry.segments.map((segment, i) => (
        <path
          key={i}
          d={segment.d}
          className={colour(segment.color)}
          data-kind={segment.kind}
        />
      ))}
      <circle
        cx={geometry.dot.cx}
        cy={geometry.dot.cy}
        r={head ? geometry.dot.r + 1 : geometry.dot.r}
        className={`${colour(geometry.dot.color)} ${HistoryCSS.graph}-dot`}
        data-kind={merge ? 'merge' : head ? 'head' : 'commit'}
      />
    </svg>
  );
}

function RefBadge(props: { gitRef: IGitRef }): JSX.Element {
  const { gitRef } = props;
  return (
    <span
      className={HistoryCSS.ref}
      data-kind={gitRef.kind}
      title={gitRef.name}
    >
      {gitRef.kind === 'tag' ? '⌂ ' : ''}
      {gitRef.name}
    </span>
  );
}

function Detail(props: IHistoryProps): JSX.Element {
  const { model, trans, locale } = props;
  const now = useNow();
  const detail = model.detail;
  if (model.selectedOid === null) {
    return (
      <div className={HistoryCSS.detail}>
        <div className={HistoryCSS.empty}>
          {trans.__('Select a commit to see its changes.')}
        </div>
      </div>
    );
  }
  if (!detail || detail.oid !== model.selectedOid) {
    return (
      <div className={HistoryCSS.detail} aria-busy="true">
        <div
          className={HistoryCSS.empty}
          role={model.detailError ? 'alert' : undefined}
        >
          {model.detailError ?? trans.__('Loading…')}
        </div>
      </div>
    );
  }
  const lines = detail.message.replace(/\s+$/, '').split('\n');
  const subject = lines[0] ?? '';
  const body = lines.slice(1).join('\n').replace(/^\n+/, '');
  const date = new Date(detail.date);
  const committedApart =
    detail.committer !== detail.author || detail.committer_date !== detail.date;
  const loadedIndex = (oid: string): number =>
    model.commits.findIndex(c => c.oid === oid);
  return (
    <div className={HistoryCSS.detail} data-oid={detail.oid}>
      <div className={HistoryCSS.detailHeader}>
        <h3>{subject}</h3>
        {detail.refs.length ? (
          <div>
            {detail.refs.map(ref => (
              <RefBadge key={`${ref.kind}:${ref.name}`} gitRef={ref} />
            ))}
          </div>
        ) : null}
      </div>
      <dl className={HistoryCSS.meta}>
        <dt>{trans.__('Author')}</dt>
        <dd>
          {detail.author}{' '}
          <span className="jp-TeraxHistory-dim">&lt;{detail.email}&gt;</span>
        </dd>
        <dt>{trans.__('Date')}</dt>
        <dd title={detail.date}>
          {date.toLocaleString(locale)}{' '}
          <span className="jp-TeraxHistory-dim">
            ({relativeDate(detail.date, now, locale, trans.__('just now'))})
          </span>
        </dd>
        {committedApart ? (
          <>
            <dt>{trans.__('Committer')}</dt>
            <dd>
              {detail.committer}{' '}
              <span className="jp-TeraxHistory-dim">
                {new Date(detail.committer_date).toLocaleString(locale)}
              </span>
            </dd>
          </>
        ) : null}
        <dt>{trans.__('Commit')}</dt>
        <dd>
          <code>{detail.oid}</code>
          {detail.web_url ? (
            <>
              {' '}
              <a
                href={detail.web_url}
                target="_blank"
                rel="noopener noreferrer"
                className="jp-TeraxHistory-link"
              >
                {trans.__('Open on remote ↗')}
              </a>
            </>
          ) : null}
        </dd>
        {detail.parents.length ? (
          <>
            <dt>{trans._n('Parent', 'Parents', detail.parents.length)}</dt>
            <dd>
              {detail.parents.map(parent => {
                const index = loadedIndex(parent);
                return (
                  <button
                    key={parent}
                    type="button"
                    className="jp-TeraxHistory-parent"
                    disabled={index < 0}
                    title={parent}
                    onClick={() => model.select(index)}
                  >
                    {parent.slice(0, 7)}
                  </button>
                );
              })}
            </dd>
          </>
        ) : null}
      </dl>
      {body ? <pre className={HistoryCSS.body_}>{body}</pre> : null}
      <div className={HistoryCSS.stats}>
        {trans._n(
          '%1 file changed',
          '%1 files changed',
          detail.stats.files,
          detail.stats.files
        )}
        <span className={HistoryCSS.add}>+{detail.stats.additions}</span>
        <span className={HistoryCSS.del}>−{detail.stats.deletions}</span>
      </div>
      <div className={HistoryCSS.files} role="list">
        {detail.files.map(file => {
          const { name, dir } = splitEntryPath(file.path);
          const open = model.openFile === file.path;
          return (
            <React.Fragment key={file.path}>
              <div
                className={HistoryCSS.fileRow}
                role="listitem"
                tabIndex={0}
                aria-expanded={open}
                data-path={file.path}
                title={
                  file.old_path ? `${file.old_path} → ${file.path}` : file.path
                }
                onClick={() => void model.openFileDiff(file.path)}
                onKeyDown={event => {
                  if (event.key === 'Enter' || event.key === ' ') {
                    event.preventDefault();
                    void model.openFileDiff(file.path);
                  }
                }}
              >
                <span className="jp-TeraxGit-code" data-status={file.status}>
                  {statusCode(file.status)}
                </span>
                <span className="jp-TeraxGit-fileName">{name}</span>
                <span className="jp-TeraxGit-fileDir">
                  {file.old_path ? `${file.old_path} → ` : ''}
                  {dir}
                </span>
                {file.binary ? (
                  <span className="jp-TeraxHistory-dim">
                    {trans.__('binary')}
                  </span>
                ) : (
                  <span className={HistoryCSS.stats}>
                    <span className={HistoryCSS.add}>+{file.additions}</span>
                    <span className={HistoryCSS.del}>−{file.deletions}</span>
                  </span>
                )}
              </div>
              {open ? (
                <DiffView
                  diff={model.fileDiff}
                  loading={!model.fileDiff && !model.fileDiffError}
                  error={model.fileDiffError}
                  mode="readonly"
                  trans={trans}
                />
              ) : null}
            </React.Fragment>
          );
        })}
      </div>
    </div>
  );
}
