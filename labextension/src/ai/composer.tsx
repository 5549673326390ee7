/**
 * The composer: a multi-line prompt (Enter sends, Shift+Enter a newline,
 * Up/Down through own prompts), `@path` with a fuzzy file picker, `#name`
 * snippets, `/plan` and `/init`, and the attached context as chips.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { LabIcon, stopIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import type { IFileMatch } from '../api/fs';
import { type Attachment, replaceRange, tokenAtCaret } from '../common/ai/chat';
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

interface IPickerItem {
  label: string;
  detail?: string;
  value: string;
}

interface IPicker {
  trigger: '@' | '#' | '/';
  start: number;
  end: number;
  items: IPickerItem[];
  active: number;
}

interface IComposerProps {
  model: AiPanelModel;
  trans: TranslationBundle;
  searchFiles: FileSearch;
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
    if (picker.trigger === '@') {
      insert = `@${item.value} `;
      model.attach({ kind: 'file', path: item.value });
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
    if (running || !text.trim()) {
      return;
    }
    const sent = text;
    history.current.reset();
    setPicker(null);
    setText('');
    const taken = await model.submit(sent);
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
      {picker && picker.items.length > 0 && (
        <ul className={CSS.picker} id={pickerId} role="listbox">
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
          placeholder={
            props.planMode
              ? trans.__('Plan mode: changes are queued for review…')
              : trans.__('Ask Terax… (@ file, # snippet, / command)')
          }
          aria-label={trans.__('Prompt')}
          aria-autocomplete="list"
          aria-controls={picker ? pickerId : undefined}
          onChange={event => {
            history.current.reset();
            setText(event.target.value);
            updatePicker(event.target.value, event.target.selectionStart);
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
            disabled={!text.trim() || props.busy}
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
