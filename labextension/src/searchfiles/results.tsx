/**
 * The results of the Search in Files panel: summary line and results tree.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { caretDownIcon, caretRightIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import type { IGrepLine } from '../api/fs';
import { previewSegments } from '../common/highlight';
import { formatDuration } from '../common/listnav';
import { basename, dirname } from '../common/paths';
import type { FileIconResolver } from '../ui/fileicon';
import { Highlighted } from '../ui/highlighted';
import { CSS } from './css';
import type { IFileResult, SearchModel } from './model';

/**
 * Opens a file at one of its matches.
 */
export type OpenMatchHandler = (
  path: string,
  match: IGrepLine
) => Promise<unknown>;

/**
 * Props of {@link ResultsTree}.
 */
export interface IResultsTreeProps {
  model: SearchModel;
  trans: TranslationBundle;
  icons: FileIconResolver;
  onOpenMatch: OpenMatchHandler;
}

export function Summary(props: {
  model: SearchModel;
  trans: TranslationBundle;
}): JSX.Element | null {
  const { model, trans } = props;
  const { status, summary } = model;
  if (status === 'error') {
    return null;
  }
  if (status === 'idle') {
    return (
      <div className={CSS.empty}>
        {trans.__(
          'Search the contents of the files in this workspace. Files ignored by .gitignore and protected files such as .env are skipped.'
        )}
      </div>
    );
  }
  const files = model.results.length;
  const matches = model.matchCount;
  let text: string;
  if (status === 'done' && files === 0) {
    text = trans.__('No results found');
  } else {
    text =
      trans._n('%2 match', '%2 matches', matches, matches.toLocaleString()) +
      ' ' +
      trans._n('in %2 file', 'in %2 files', files, files.toLocaleString());
  }
  const elapsed =
    status === 'done' && summary ? formatDuration(summary.elapsed_ms) : '';
  return (
    <div className={CSS.summary} role="status" aria-live="polite">
      <span>
        {status === 'searching' ? trans.__('Searching… %1', text) : text}
      </span>
      {elapsed ? (
        <span className={`${CSS.summary}-elapsed`}>{elapsed}</span>
      ) : null}
      {summary?.truncated ? (
        <div className={CSS.warning}>
          {trans.__(
            'The result limit was reached; refine the search or the file filters to see everything.'
          )}
        </div>
      ) : null}
    </div>
  );
}

interface IRow {
  key: string;
  level: 1 | 2;
  file: IFileResult;
  match?: IGrepLine;
  more?: boolean;
}

function visibleRows(model: SearchModel): IRow[] {
  const rows: IRow[] = [];
  for (const file of model.results) {
    rows.push({ key: file.path, level: 1, file });
    if (!model.isCollapsed(file.path)) {
      for (const match of file.matches) {
        rows.push({ key: `${file.path}:${match.line}`, level: 2, file, match });
      }
      if (file.truncated) {
        rows.push({ key: `${file.path}:more`, level: 2, file, more: true });
      }
    }
  }
  return rows;
}

export function ResultsTree(
  props: IResultsTreeProps & {
    treeRef: React.RefObject<HTMLDivElement>;
    columns: number;
  }
): JSX.Element | null {
  const { model, trans, icons, onOpenMatch, treeRef, columns } = props;
  const [focusKey, setFocusKey] = React.useState<string | null>(null);
  const rows = visibleRows(model);
  if (model.results.length === 0) {
    return null;
  }
  const tabStop = rows.some(r => r.key === focusKey) ? focusKey : rows[0].key;

  const focusRow = (index: number): void => {
    const elements = treeRef.current?.querySelectorAll<HTMLElement>(
      `.${CSS.row}`
    );
    const target = elements?.[Math.max(0, Math.min(rows.length - 1, index))];
    target?.focus();
  };

  const activate = (row: IRow): void => {
    if (row.level === 1) {
      model.toggleCollapsed(row.file.path);
    } else if (row.match) {
      void onOpenMatch(row.file.path, row.match);
    }
  };

  const onKeyDown = (event: React.KeyboardEvent, index: number): void => {
    const row = rows[index];
    let handled = true;
    switch (event.key) {
      case 'ArrowDown':
        focusRow(index + 1);
        break;
      case 'ArrowUp':
        focusRow(index - 1);
        break;
      case 'Home':
        focusRow(0);
        break;
      case 'End':
        focusRow(rows.length - 1);
        break;
      case 'ArrowRight':
        if (row.level === 1 && model.isCollapsed(row.file.path)) {
          model.setCollapsed(row.file.path, false);
        } else if (row.level === 1) {
          focusRow(index + 1);
        }
        break;
      case 'ArrowLeft':
        if (row.level === 1) {
          model.setCollapsed(row.file.path, true);
        } else {
          focusRow(rows.findIndex(r => r.key === row.file.path));
        }
        break;
      case 'Enter':
      case ' ':
        activate(row);
        break;
      default:
        handled = false;
    }
    if (handled) {
      event.preventDefault();
      event.stopPropagation();
    }
  };

  let fileIndex = 0;
  return (
    <div
      ref={treeRef}
      className={CSS.tree}
      role="tree"
      aria-label={trans.__('Search results')}
    >
      {rows.map((row, index) => {
        const common = {
          tabIndex: row.key === tabStop ? 0 : -1,
          'aria-level': row.level,
          onFocus: () => setFocusKey(row.key),
          onKeyDown: (event: React.KeyboardEvent) => onKeyDown(event, index)
        };
        if (row.level === 1) {
          fileIndex++;
          const collapsed = model.isCollapsed(row.file.path);
          const Icon = icons.iconFor(row.file.path);
          const Caret = collapsed ? caretRightIcon : caretDownIcon;
          const folder = dirname(row.file.path);
          const count = row.file.matches.length;
          return (
            <div
              key={row.key}
              {...common}
              className={`${CSS.row} ${CSS.fileRow}`}
              role="treeitem"
              aria-expanded={!collapsed}
              aria-setsize={model.results.length}
              aria-posinset={fileIndex}
              title={row.file.path}
              data-path={row.file.path}
              onClick={() => activate(row)}
            >
              <Caret.react className={CSS.caret} tag="span" />
              <Icon.react className={CSS.icon} tag="span" />
              <span className={CSS.fileLabel}>
                <span className={CSS.fileName}>{basename(row.file.path)}</span>
                {folder ? <span className={CSS.folder}>{folder}</span> : null}
              </span>
              <span
                className={CSS.badge}
                aria-label={trans._n('%1 match', '%1 matches', count)}
              >
                {row.file.truncated ? `${count}+` : count}
              </span>
            </div>
          );
        }
        if (row.more || !row.match) {
          return (
            <div
              key={row.key}
              {...common}
              className={`${CSS.row} ${CSS.lineRow} ${CSS.moreRow}`}
              role="treeitem"
            >
              {trans.__('More matches in this file are not shown')}
            </div>
          );
        }
        const match = row.match;
        return (
          <div
            key={row.key}
            {...common}
            className={`${CSS.row} ${CSS.lineRow}`}
            role="treeitem"
            title={match.text.trim()}
            data-path={row.file.path}
            data-line={match.line}
            onClick={() => activate(row)}
          >
            <span className={CSS.lineNumber}>{match.line}</span>
            <span className={CSS.lineText}>
              <Highlighted
                segments={previewSegments(match.text, match.ranges, {
                  clipped: match.offset > 0,
                  columns
                })}
                markClassName={CSS.mark}
              />
            </span>
          </div>
        );
      })}
    </div>
  );
}

/**
 * Pixels of a results row that are not line text: indentation, line
 * number, gaps and padding (see `.jp-TeraxSearch-lineRow` in the styles).
 */
const ROW_CHROME_PX = 72;

/**
 * Monospace advance width relative to the font size (about 0.6 for the
 * usual code fonts).
 */
const MONOSPACE_ADVANCE = 0.6;

/**
 * How many code characters fit in a results line, following the panel's
 * width as the user resizes it.
 */
export function useTextColumns(ref: React.RefObject<HTMLElement>): number {
  const [columns, setColumns] = React.useState(32);
  React.useEffect(() => {
    const element = ref.current;
    if (!element) {
      return;
    }
    const measure = (): void => {
      const style = getComputedStyle(element);
      const codeSize =
        parseFloat(style.getPropertyValue('--jp-code-font-size')) || 13;
      const charWidth = (codeSize - 1) * MONOSPACE_ADVANCE;
      const width = element.clientWidth - ROW_CHROME_PX;
      setColumns(Math.max(8, Math.floor(width / charWidth)));
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref]);
  return columns;
}
