/**
 * Agent output as HTML that loads nothing remote without a click.
 *
 * Markdown becomes HTML, which is parsed into a DOMParser document: such a
 * document has no browsing context, so nothing in it is fetched. There every
 * element is checked (src/common/remoteguard.ts) before anything is copied
 * into the page: once an `<img>` exists in the page's document, even detached,
 * its fetch has started. The check runs twice: before Lab's sanitizer (remote
 * media become links it keeps) and on the sanitizer's output (the tree that is
 * copied in, links back to placeholders); and once more on the live tree after
 * MathJax has typeset it.
 *
 * Lab gives an inline panel no Content-Security-Policy of its own (a CSP is
 * per document, and the panel is part of Lab's); this check is the boundary.
 */
import { PageConfig, URLExt } from '@jupyterlab/coreutils';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { removeMath, replaceMath } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';

import {
  hostOf,
  type IPage,
  type IRemoteMedia,
  type MediaKind,
  planElement,
  type Resolve,
  resourceVerdict
} from '../common/ai/remoteguard';

/**
 * CSS classes of the remote-media placeholder.
 */
export const REMOTE_CSS = {
  /** What a remote medium is before sanitizing (a span the sanitizer keeps). */
  pending: 'jp-TeraxAi-remotePending',
  placeholder: 'jp-TeraxAi-remote',
  load: 'jp-TeraxAi-remoteLoad',
  label: 'jp-TeraxAi-remoteLabel'
};

const KINDS: readonly MediaKind[] = ['image', 'video', 'audio'];

/**
 * The page's origin and the paths on it that may load unasked: the user's
 * own files (`<base>files/`).
 */
export function currentPage(): IPage {
  const base = new URL(PageConfig.getBaseUrl(), window.location.href);
  return {
    origin: window.location.origin,
    loadablePaths: [URLExt.join(base.pathname, 'files/')]
  };
}

/**
 * The browser's own resolution of a URL against the page.
 */
export const resolveUrl: Resolve = raw => {
  try {
    const url = new URL(raw, document.baseURI);
    return {
      href: url.href,
      protocol: url.protocol,
      origin: url.origin,
      host: url.host,
      pathname: url.pathname
    };
  } catch {
    return null;
  }
};

/**
 * How {@link guard} treats remote media.
 */
export interface IGuardOptions {
  page: IPage;
  trans: TranslationBundle;
  /** URLs the user chose to load. */
  loaded?: ReadonlySet<string>;
  /**
   * `pending`: a span naming the URL (before the sanitizer, which keeps it);
   * `placeholder`: a button that loads it; `typeset`: as `placeholder`, on
   * the live tree MathJax made (its accessible MathML stays).
   */
  mode: 'pending' | 'placeholder' | 'typeset';
}

/**
 * Check every element under `root` (not `root` itself): drop what embeds or
 * runs, strip URLs that would be fetched unasked, turn remote media into
 * placeholders. Runs on an inert document's tree before it is copied in.
 */
export function guard(root: ParentNode, options: IGuardOptions): void {
  const doc = (root as Node).ownerDocument ?? document;
  const verdict = (url: string) =>
    resourceVerdict(url, resolveUrl, options.page);
  for (const element of Array.from(root.querySelectorAll('*'))) {
    if (!root.contains(element)) {
      continue; // inside an element already removed or replaced
    }
    if (
      options.mode !== 'pending' &&
      element.classList.contains(REMOTE_CSS.pending)
    ) {
      const url = element.getAttribute('title') ?? '';
      if (verdict(url) === 'remote') {
        const kind = KINDS.find(k =>
          element.classList.contains(`${REMOTE_CSS.pending}-${k}`)
        );
        const media = {
          kind: kind ?? 'image',
          url,
          label: element.textContent ?? ''
        };
        element.replaceWith(placeholder(doc, media, options.trans));
        continue;
      }
    }
    const attributes = Array.from(element.attributes).map(
      (a): [string, string] => [a.name, a.value]
    );
    const plan = planElement(
      element.localName,
      attributes,
      verdict,
      options.loaded
    );
    if (
      plan.drop &&
      !(options.mode === 'typeset' && element.localName === 'math')
    ) {
      element.remove();
      continue;
    }
    for (const name of plan.remove) {
      element.removeAttribute(name);
    }
    if (plan.media) {
      element.replaceWith(
        options.mode === 'pending'
          ? pendingMedia(doc, plan.media)
          : placeholder(doc, plan.media, options.trans)
      );
    }
  }
}

function pendingMedia(doc: Document, media: IRemoteMedia): HTMLElement {
  // A span, which may sit inside a link (a badge), with the URL in its title:
  // Lab's sanitizer keeps both, and neither loads anything.
  const span = doc.createElement('span');
  span.className = `${REMOTE_CSS.pending} ${REMOTE_CSS.pending}-${media.kind}`;
  span.setAttribute('title', media.url);
  span.textContent = media.label;
  return span;
}

function placeholder(
  doc: Document,
  media: IRemoteMedia,
  trans: TranslationBundle
): HTMLElement {
  const host = hostOf(media.url, resolveUrl);
  const box = doc.createElement('span');
  box.className = REMOTE_CSS.placeholder;
  box.dataset.kind = media.kind;
  box.dataset.url = media.url;
  const button = doc.createElement('button');
  button.type = 'button';
  button.className = REMOTE_CSS.load;
  button.textContent =
    media.kind === 'video'
      ? trans.__('Load video from %1', host)
      : media.kind === 'audio'
        ? trans.__('Load audio from %1', host)
        : trans.__('Load image from %1', host);
  button.title = trans.__(
    'Not loaded: agent output loads nothing from another site until you ask. Click to load %1',
    media.url.length > 300 ? media.url.slice(0, 300) + '…' : media.url
  );
  if (media.label) {
    const label = doc.createElement('span');
    label.className = REMOTE_CSS.label;
    label.textContent = media.label;
    box.appendChild(label);
  }
  box.appendChild(button);
  return box;
}

/**
 * Replace a placeholder with what it stands for: the user clicked it.
 */
export function loadPlaceholder(box: HTMLElement): string | null {
  const url = box.dataset.url;
  const kind = (box.dataset.kind ?? 'image') as MediaKind;
  if (!url) {
    return null;
  }
  const label = box.querySelector(`.${REMOTE_CSS.label}`)?.textContent ?? '';
  let media: HTMLImageElement | HTMLVideoElement | HTMLAudioElement;
  if (kind === 'image') {
    const img = document.createElement('img');
    img.alt = label;
    img.referrerPolicy = 'no-referrer';
    media = img;
  } else {
    media = document.createElement(kind);
    media.controls = true;
  }
  media.src = url;
  box.replaceWith(media);
  return url;
}

function inertBody(html: string): HTMLElement {
  // DOMParser's document has no browsing context: nothing in it loads or runs.
  return new DOMParser().parseFromString(
    `<!DOCTYPE html><html><body>${html}</body></html>`,
    'text/html'
  ).body;
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    c =>
      ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[
        c
      ] ?? c
  );
}

/**
 * Render markdown of the agent into `host`, through Lab's parser and
 * sanitizer, loading nothing remote unasked.
 */
export async function renderAgentMarkdown(
  host: HTMLElement,
  text: string,
  rendermime: IRenderMimeRegistry,
  options: Omit<IGuardOptions, 'mode'>
): Promise<void> {
  let html: string;
  const parser = rendermime.markdownParser;
  if (parser) {
    const parts = removeMath(text);
    html = replaceMath(await parser.render(parts.text), parts.math);
  } else {
    html = `<pre>${escapeHtml(text)}</pre>`;
  }
  const before = inertBody(html);
  guard(before, { ...options, mode: 'pending' });
  const sanitized = rendermime.sanitizer.sanitize(before.innerHTML);
  const after = inertBody(sanitized);
  guard(after, { ...options, mode: 'placeholder' });
  const fragment = document.createDocumentFragment();
  for (const node of Array.from(after.childNodes)) {
    fragment.appendChild(document.importNode(node, true));
  }
  host.replaceChildren(fragment);
  if (rendermime.latexTypesetter && host.isConnected) {
    await rendermime.latexTypesetter.typeset(host);
    guard(host, { ...options, mode: 'typeset' });
  }
}
