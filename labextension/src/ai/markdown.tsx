/**
 * Markdown of the agent through Lab's markdown parser and sanitizer, with
 * Copy / Insert / Run on every code block; remote images wait for a click
 * (safehtml.ts).
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { CSS } from './css';
import {
  currentPage,
  loadPlaceholder,
  REMOTE_CSS,
  renderAgentMarkdown
} from './safehtml';

const SHELL_LANGUAGES = new Set([
  'bash',
  'sh',
  'shell',
  'console',
  'zsh',
  'fish',
  'shellsession'
]);

/**
 * What code blocks can do.
 */
export interface ICodeActions {
  copy(text: string): void;
  /** Insert into the current editor; absent when there is none. */
  insert?: (text: string) => void;
  /** Run in a Terax terminal; absent without terminals. */
  run?: (text: string) => void;
  /** Open a workspace file a relative link points to. */
  openPath?: (path: string) => void;
}

/**
 * Clicks in an answer: a placeholder loads its image (the user's choice, and
 * remembered for the answer's later renders); web links open in a new tab,
 * relative ones as workspace files; none navigates the page away from Lab.
 */
function onAnswerClick(
  event: React.MouseEvent<HTMLDivElement>,
  actions: ICodeActions,
  loaded: Set<string>
): void {
  const target = event.target as HTMLElement;
  const load = target.closest(`.${REMOTE_CSS.load}`);
  const box = load?.closest<HTMLElement>(`.${REMOTE_CSS.placeholder}`);
  if (box) {
    // Inside a link (a badge), the click is for the image, not the link.
    event.preventDefault();
    event.stopPropagation();
    const url = loadPlaceholder(box);
    if (url) {
      loaded.add(url);
    }
    return;
  }
  const anchor = target.closest('a');
  const href = anchor?.getAttribute('href');
  if (!anchor || !href) {
    return;
  }
  event.preventDefault();
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) {
    if (/^https?:/i.test(href)) {
      window.open(href, '_blank', 'noopener,noreferrer');
    }
    return;
  }
  if (href.startsWith('#')) {
    return;
  }
  const raw = href.split('#')[0].replace(/^\.?\//, '');
  let path = raw;
  try {
    path = decodeURIComponent(raw);
  } catch {
    // Not percent-encoded: use it as it is.
  }
  if (path) {
    actions.openPath?.(path);
  }
}

/**
 * The command lines of a shell block (prompts `$ ` removed).
 */
function commandsOf(code: string, language: string): string {
  if (language !== 'console' && language !== 'shellsession') {
    return code.replace(/\n+$/, '');
  }
  return code
    .split('\n')
    .filter(line => /^\s*[$#] /.test(line))
    .map(line => line.replace(/^\s*[$#] /, ''))
    .join('\n');
}

function decorate(
  node: HTMLElement,
  actions: ICodeActions,
  trans: TranslationBundle
): void {
  for (const pre of Array.from(node.querySelectorAll('pre'))) {
    if (pre.parentElement?.classList.contains(CSS.codeTools)) {
      continue;
    }
    const code = pre.querySelector('code');
    const text = (code ?? pre).textContent ?? '';
    const language =
      /language-([\w-]+)/.exec(code?.className ?? '')?.[1]?.toLowerCase() ?? '';
    const wrapper = document.createElement('div');
    wrapper.className = CSS.codeTools;
    pre.replaceWith(wrapper);
    wrapper.appendChild(pre);
    const bar = document.createElement('div');
    bar.className = CSS.actions;
    const add = (label: string, title: string, run: () => void): void => {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = CSS.codeButton;
      button.textContent = label;
      button.title = title;
      button.setAttribute('aria-label', title);
      button.addEventListener('click', event => {
        event.preventDefault();
        run();
      });
      bar.appendChild(button);
    };
    add(trans.__('Copy'), trans.__('Copy the code'), () => actions.copy(text));
    if (actions.insert) {
      const insert = actions.insert;
      add(trans.__('Insert'), trans.__('Insert into the current editor'), () =>
        insert(text.replace(/\n$/, ''))
      );
    }
    if (actions.run && SHELL_LANGUAGES.has(language)) {
      const run = actions.run;
      add(trans.__('Run'), trans.__('Run in a Terax terminal'), () =>
        run(commandsOf(text, language))
      );
    }
    wrapper.appendChild(bar);
  }
}

/**
 * Props of {@link Markdown}.
 */
export interface IMarkdownProps {
  text: string;
  rendermime: IRenderMimeRegistry | null;
  actions: ICodeActions;
  trans: TranslationBundle;
}

/**
 * Rendered markdown; re-renders at most one at a time while text streams.
 */
export function Markdown(props: IMarkdownProps): JSX.Element {
  const { text, rendermime, actions, trans } = props;
  const host = React.useRef<HTMLDivElement>(null);
  const pending = React.useRef<string | null>(null);
  const busy = React.useRef(false);
  const loaded = React.useRef(new Set<string>());
  const latest = React.useRef({ actions, trans });
  React.useEffect(() => {
    latest.current = { actions, trans };
  });

  React.useEffect(() => {
    const node = host.current;
    if (!rendermime || !node) {
      return;
    }
    pending.current = text;
    if (busy.current) {
      return;
    }
    const pump = async (): Promise<void> => {
      busy.current = true;
      try {
        while (pending.current !== null && node.isConnected) {
          const next = pending.current;
          pending.current = null;
          await renderAgentMarkdown(node, next, rendermime, {
            page: currentPage(),
            trans: latest.current.trans,
            loaded: loaded.current
          });
          decorate(node, latest.current.actions, latest.current.trans);
        }
      } catch (error) {
        console.warn('Could not render the answer as markdown.', error);
      } finally {
        busy.current = false;
      }
    };
    void pump();
  }, [text, rendermime]);

  if (!rendermime) {
    return <div className={`${CSS.markdown} ${CSS.pre}`}>{text}</div>;
  }
  return (
    <div
      className={CSS.markdown}
      onClick={event => onAnswerClick(event, actions, loaded.current)}
    >
      <div className="jp-RenderedHTMLCommon jp-RenderedMarkdown" ref={host} />
    </div>
  );
}
