/**
 * The composer: a multi-line prompt (Enter sends, Shift+Enter a newline,
 * Up/Down through own prompts), `@path` with a fuzzy file picker,
 * `@notebook.ipynb#cell` with a picker of the notebook's cells (each such
 * word attaches its cell when sent), `#name` snippets, `/plan` and `/init`,
 * and the attached context as chips.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { LabIcon, stopIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import type { IFileMatch } from '../api/fs';
import {
  type Attachment,
  cellMentionAtCaret,
  cellMentions,
  filterCells,
  firstLine,
  type INotebookCellInfo,
  replaceRange,
  resolveCellMentions,
  tokenAtCaret
} from '../common/ai/chat';
import { HistoryNavigator } from '../common/history';
import { moveActive } from '../common/listnav';
import { CSS } from './css';
import { sendIcon } from './icons';
import type { AiPanelModel } from './panelmodel';

/**
 * Finds files for `@`.
 */
export type FileSearch = (
  query: string,
  signal: AbortSignal
) => Promise<readonly IFileMatch[]>;

/**
 * Reads a notebook's cells for `@notebook.ipynb#cell` (null: no such
 * notebook).
 */
export type NotebookCells = (
  path: string
) => Promise<readonly INotebookCellInfo[] | null>;

/**
 * How long the cell picker reuses a notebook's cells while typing.
 */
const CELLS_TTL_MS = 3000;

interface IPickerItem {
  label: string;
  detail?: string;
  value: string;
}

interface IPicker {
  trigger: '@' | '#' | '/' | 'cell';
  start: number;
  end: number;
  items: IPickerItem[];
  active: number;
}

interface IComposerProps {
  model: AiPanelModel;
  trans: TranslationBundle;
  searchFiles: FileSearch;
  notebookCells?: NotebookCells;
  cellLabel?: (name: string, ename: string | null) => string;
  running: boolean;
  planMode: boolean;
  busy: boolean;
  onStop: () => void;
}

function chipLabel(attachment: Attachment): string {
  switch (attachment.kind) {
    case 'file':
      return attachment.path;
    default:
      return attachment.label;
  }
}

function Icon(props: { icon: LabIcon }): JSX.Element {
  return <props.icon.react tag="span" elementSize="normal" />;
}

/**
 * The composer.
 */
export function Composer(props: IComposerProps): JSX.Element {
  const { model, trans, running } = props;
  const [text, setText] = React.useState('');
  const [picker, setPicker] = React.useState<IPicker | null>(null);
  const input = React.useRef<HTMLTextAreaElement>(null);
  const history = React.useRef(new HistoryNavigator());
  const search = React.useRef<AbortController | null>(null);
  // What the composer cannot send as typed (an unknown cell), shown inline.
  const [problem, setProblem] = React.useState<string | null>(null);
  const [resolving, setResolving] = React.useState(false);
  const cellCache = React.useRef(
    new Map<string, { time: number; cells: ReturnType<NotebookCells> }>()
  );
  // The notebook just picked with `@`: a `#` typed next asks for its cells.
  const picked = React.useRef<{ caret: number; path: string } | null>(null);

  React.useEffect(() => {
    const area = input.current;
    if (area) {
      area.style.height = 'auto';
      area.style.height = `${Math.min(area.scrollHeight, 240)}px`;
    }
  }, [text]);

  const updatePicker = (value: string, caret: number): void => {
    search.current?.abort();
    search.current = null;
    const slash = /^\/\w*$/.test(value) ? value : null;
    if (slash !== null) {
      const commands: IPickerItem[] = [
        {
          label: '/plan',
          value: '/plan',
          detail: trans.__('Toggle plan mode')
        },
        {
          label: '/init',
          value: '/init',
          detail: trans.__('Write TERAX.md for this project')
        },
        {
          label: '/new',
          value: '/new',
          detail: trans.__('Start a new session')
        },
        {
          label: '/replay',
          value: '/replay ',
          detail: trans.__(
            'Replay a saved browser workflow without the model: /replay name input=value'
          )
        }
      ].filter(item => item.label.startsWith(slash));
      setPicker(
        commands.length
          ? {
              trigger: '/',
              start: 0,
              end: value.length,
              items: commands,
              active: 0
            }
          : null
      );
      return;
    }
    const hash = tokenAtCaret(value, caret, '#');
    if (hash) {
      const names = Object.keys(model.config.snippets).filter(name =>
        name.toLowerCase().startsWith(hash.query.toLowerCase())
      );
      setPicker(
        names.length
          ? {
              trigger: '#',
              start: hash.start,
              end: hash.end,
              items: names.map(name => ({
                label: `#${name}`,
                value: name,
                detail: model.config.snippets[name].split('\n')[0].slice(0, 60)
              })),
              active: 0
            }
          : null
      );
      return;
    }
    const mention = cellMentionAtCaret(value, caret);
    if (mention) {
      const load = props.notebookCells;
      if (!load) {
        setPicker(null);
        return;
      }
      const controller = new AbortController();
      search.current = controller;
      const cache = cellCache.current;
      let entry = cache.get(mention.path);
      if (!entry || Date.now() - entry.time > CELLS_TTL_MS) {
        entry = { time: Date.now(), cells: load(mention.path) };
        cache.set(mention.path, entry);
      }
      void entry.cells
        .then(cells => {
          if (controller.signal.aborted) {
            return;
          }
          const found = filterCells(cells ?? [], mention.query);
          setPicker(
            found.length
              ? {
                  trigger: 'cell',
                  start: mention.start,
                  end: mention.end,
                  items: found.map(cell => ({
                    label: `#${cell.id}`,
                    value: `${mention.path}#${cell.id}`,
                    detail: `${cell.type} · ${firstLine(cell.source).slice(0, 60)}`
                  })),
                  active: 0
                }
              : null
          );
        })
        .catch(() => setPicker(null));
      return;
    }
    const at = tokenAtCaret(value, caret, '@');
    if (!at) {
      setPicker(null);
      return;
    }
    const controller = new AbortController();
    search.current = controller;
    void props
      .searchFiles(at.query, controller.signal)
      .then(matches => {
        if (controller.signal.aborted) {
          return;
        }
        setPicker(
          matches.length
            ? {
                trigger: '@',
                start: at.start,
                end: at.end,
                items: matches.slice(0, 8).map(match => ({
                  label: match.path,
                  value: match.path
                })),
                active: 0
              }
            : null
        );
      })
      .catch(() => undefined);
  };

  const choose = (item: IPickerItem): void => {
    if (!picker) {
      return;
    }
    let insert = '';
    picked.current = null;
    if (picker.trigger === '@') {
      insert = `@${item.value} `;
      model.attach({ kind: 'file', path: item.value });
      if (/\.ipynb$/i.test(item.value)) {
        picked.current = {
          caret: picker.start + insert.length,
          path: item.value
        };
      }
    } else if (picker.trigger === 'cell') {
      insert = `@${item.value} `;
    } else if (picker.trigger === '#') {
      insert = model.config.snippets[item.value] ?? '';
    } else {
      insert = item.value;
    }
    const next = replaceRange(text, picker.start, picker.end, insert);
    setText(next.text);
    setPicker(null);
    requestAnimationFrame(() => {
      const area = input.current;
      if (area) {
        area.focus();
        area.setSelectionRange(next.caret, next.caret);
      }
    });
  };

  const submit = async (): Promise<void> => {
    if (running || resolving || !text.trim()) {
      return;
    }
    const sent = text;
    setPicker(null);
    let cells: Attachment[] = [];
    const load = props.notebookCells;
    if (load && cellMentions(sent).length) {
      // Read the cells now, so the prompt carries their current source.
      setResolving(true);
      let resolved: Awaited<ReturnType<typeof resolveCellMentions>>;
      try {
        resolved = await resolveCellMentions(sent, load, props.cellLabel);
      } finally {
        setResolving(false);
      }
      if ('missing' in resolved) {
        const { path, cellId } = resolved.missing;
        setProblem(
          resolved.reason === 'notebook'
            ? trans.__(
                'Not sent: there is no notebook %1 (in @%1#%2).',
                path,
                cellId
              )
            : trans.__(
                'Not sent: %1 has no cell with the id %2 (in @%1#%2). Type # after the notebook to pick one.',
                path,
                cellId
              )
        );
        return;
      }
      cells = resolved.attachments;
    }
    setProblem(null);
    history.current.reset();
    setText('');
    const taken = await model.submit(sent, cells);
    if (!taken) {
      // Keep what was typed when it could not be sent.
      setText(current => current || sent);
    }
  };

  const onKeyDown = (event: React.KeyboardEvent<HTMLTextAreaElement>): void => {
    const area = event.currentTarget;
    if (picker && picker.items.length) {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        const delta = event.key === 'ArrowDown' ? 1 : -1;
        setPicker({
          ...picker,
          active: moveActive(picker.active, delta, picker.items.length)
        });
        return;
      }
      const item = picker.items[picker.active];
      const complete =
        event.key === 'Enter' && picker.trigger === '/' && item.value === text;
      if (complete) {
        // The command is typed out already: Enter runs it.
        setPicker(null);
      } else if (event.key === 'Enter' || event.key === 'Tab') {
        event.preventDefault();
        choose(item);
        return;
      }
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        setPicker(null);
        return;
      }
    }
    if (
      event.key === 'Enter' &&
      !event.shiftKey &&
      !event.nativeEvent.isComposing
    ) {
      event.preventDefault();
      void submit();
      return;
    }
    const caret = area.selectionStart;
    if (event.key === 'ArrowUp' && !text.slice(0, caret).includes('\n')) {
      const nav = history.current;
      if (!nav.active) {
        nav.begin(text, model.history());
      }
      const older = nav.older();
      if (older !== null) {
        event.preventDefault();
        setText(older);
      }
      return;
    }
    if (
      event.key === 'ArrowDown' &&
      history.current.active &&
      !text.slice(caret).includes('\n')
    ) {
      const newer = history.current.newer();
      if (newer !== null) {
        event.preventDefault();
        setText(newer);
      }
    }
  };

  const attachments = model.attachments;
  const pickerId = 'jp-TeraxAi-picker';
  return (
    <div className={CSS.composer}>
      {attachments.length > 0 && (
        <ul className={CSS.chips} aria-label={trans.__('Attached context')}>
          {attachments.map((attachment, index) => (
            <li key={index} className={CSS.chip} data-kind={attachment.kind}>
              <span title={chipLabel(attachment)}>{chipLabel(attachment)}</span>
              <button
                type="button"
                aria-label={trans.__('Remove %1', chipLabel(attachment))}
                onClick={() => model.detach(index)}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {problem && (
        <div className={CSS.composerProblem} role="alert">
          {problem}
        </div>
      )}
      {picker && picker.items.length > 0 && (
        <ul
          className={CSS.picker}
          id={pickerId}
          role="listbox"
          data-trigger={picker.trigger}
        >
          {picker.items.map((item, index) => (
            <li
              key={item.value}
              role="option"
              aria-selected={index === picker.active}
              className={`${CSS.pickerItem} ${
                index === picker.active ? CSS.active : ''
              }`}
              onMouseDown={event => {
                event.preventDefault();
                choose(item);
              }}
            >
              <span>{item.label}</span>
              {item.detail && <small>{item.detail}</small>}
            </li>
          ))}
        </ul>
      )}
      <div className={CSS.composerRow}>
        <textarea
          ref={input}
          className={CSS.input}
          rows={2}
          value={text}
          // While the mentioned cells are read for a send, what is typed would be lost.
          readOnly={resolving}
          placeholder={
            props.planMode
              ? trans.__('Plan mode: changes are queued for review…')
              : trans.__(
                  'Ask Terax… (@ file, @notebook.ipynb# cell, # snippet, / command)'
                )
          }
          aria-label={trans.__('Prompt')}
          aria-autocomplete="list"
          aria-controls={picker ? pickerId : undefined}
          onChange={event => {
            history.current.reset();
            setProblem(null);
            let value = event.target.value;
            let caret = event.target.selectionStart;
            const pick = picked.current;
            picked.current = null;
            if (
              pick &&
              caret === pick.caret + 1 &&
              value[pick.caret] === '#' &&
              value[pick.caret - 1] === ' ' &&
              value.slice(0, pick.caret) === text.slice(0, pick.caret)
            ) {
              // `#` right after a picked notebook: its cells, not a snippet.
              value = value.slice(0, pick.caret - 1) + value.slice(pick.caret);
              caret -= 1;
              const index = model.attachments.findIndex(
                a => a.kind === 'file' && a.path === pick.path
              );
              if (index >= 0) {
                model.detach(index);
              }
              requestAnimationFrame(() =>
                input.current?.setSelectionRange(caret, caret)
              );
            }
            setText(value);
            updatePicker(value, caret);
          }}
          onKeyDown={onKeyDown}
          onBlur={() => setPicker(null)}
        />
        {running ? (
          <button
            type="button"
            className={`${CSS.iconButton} ${CSS.stop}`}
            title={trans.__('Stop')}
            aria-label={trans.__('Stop')}
            onClick={props.onStop}
          >
            <Icon icon={stopIcon} />
          </button>
        ) : (
          <button
            type="button"
            className={`${CSS.iconButton} ${CSS.send}`}
            title={trans.__('Send (Enter)')}
            aria-label={trans.__('Send')}
            disabled={!text.trim() || props.busy || resolving}
            onClick={() => void submit()}
          >
            <Icon icon={sendIcon} />
          </button>
        )}
      </div>
      <div className={CSS.composerHint}>
        {props.planMode && (
          <span className={CSS.planBadge}>{trans.__('Plan mode')}</span>
        )}
        {trans.__('Enter to send · Shift+Enter for a new line')}
      </div>
    </div>
  );
}
