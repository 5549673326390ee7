/**
 * The web preview's addresses, DOM-free: what a typed address or a clicked
 * link means (a dev server on this machine's loopback, shown through the
 * server's proxy, or an external page), the proxy paths, and the preview's
 * own back/forward history.
 */

/**
 * Where a preview points.
 */
export type PreviewTarget =
  | {
      kind: 'local';
      /** The dev server's port. */
      port: number;
      /** Path, query and fragment on the dev server (starts with `/`). */
      path: string;
    }
  | {
      kind: 'external';
      /** An http(s) URL. */
      url: string;
    };

/**
 * The proxy route below the server's base URL.
 */
export const PROXY_ROUTE = 'terax/proxy';

const LOOPBACK_NAMES = new Set([
  'localhost',
  '0.0.0.0',
  '[::1]',
  '[::]',
  '::1',
  '::'
]);
const PORT = /^[0-9]{1,5}$/;
const AUTHORITY = /^(\[[0-9a-fA-F:.]*\]|[^:/?#[\]@\s]*)(?::([0-9]*))?$/;

/**
 * Whether a host name (as in a URL, IPv6 in brackets) is this machine's
 * loopback, or the any-address a dev server listening on all interfaces
 * prints.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  if (LOOPBACK_NAMES.has(name)) {
    return true;
  }
  const parts = name.split('.');
  return (
    parts.length === 4 &&
    parts[0] === '127' &&
    parts.every(p => /^[0-9]{1,3}$/.test(p) && Number(p) < 256)
  );
}

function isControl(character: string): boolean {
  const code = character.charCodeAt(0);
  return code < 0x20 || code === 0x7f;
}

/**
 * A port number from text (1-65535), or null.
 */
export function parsePort(text: string): number | null {
  if (!PORT.test(text)) {
    return null;
  }
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/**
 * What an address typed in the preview's address bar (or a link) means:
 * `5173`, `:5173`, `localhost:5173/app`, `http://127.0.0.1:8000/?q=1`,
 * `http://[::1]:8080` are local; `https://example.com` and `example.com`
 * external. Other schemes (`javascript:`, `file:`, `data:`) and hosts
 * without a port on the loopback give null.
 */
export function parseTarget(input: string): PreviewTarget | null {
  const text = input.trim();
  if (!text || /\s/.test(text) || [...text].some(isControl)) {
    return null;
  }
  const bare = text.startsWith(':') ? text.slice(1) : text;
  const port = parsePort(bare);
  if (port !== null) {
    return { kind: 'local', port, path: '/' };
  }
  if (/^[0-9]+$/.test(bare)) {
    return null; // a number, but no port
  }
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(text);
  let rest: string;
  let secure = false;
  if (scheme) {
    const name = scheme[1].toLowerCase();
    if (name !== 'http' && name !== 'https') {
      return null;
    }
    secure = name === 'https';
    rest = text.slice(scheme[0].length);
  } else if (/^[a-zA-Z][a-zA-Z0-9+.-]*:(?![0-9])/.test(text)) {
    return null; // javascript:..., mailto:..., data:...
  } else {
    rest = text.replace(/^\/\//, '');
  }
  const end = rest.search(/[/?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  let path = end === -1 ? '/' : rest.slice(end);
  if (!path.startsWith('/')) {
    path = `/${path}`;
  }
  const match = AUTHORITY.exec(authority);
  if (!match || !match[1]) {
    return null;
  }
  const host = match[1];
  const portText = match[2];
  if (isLoopbackHost(host)) {
    const local = portText ? parsePort(portText) : null;
    if (local === null) {
      return null;
    }
    return { kind: 'local', port: local, path };
  }
  if (
    portText !== undefined &&
    portText !== '' &&
    parsePort(portText) === null
  ) {
    return null;
  }
  const origin = `${secure || !scheme ? 'https' : 'http'}://${authority}`;
  return { kind: 'external', url: origin + path };
}

/**
 * The proxied path of a local target, below the server's base URL (which
 * ends with `/`): `/user/alice/terax/proxy/5173/app?x=1`.
 */
export function proxyPath(baseUrl: string, port: number, path = '/'): string {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const rest = path.startsWith('/') ? path : `/${path}`;
  return `${base}${PROXY_ROUTE}/${port}${rest}`;
}

/**
 * How a target reads in the address bar: a local one as the developer
 * knows it (`http://localhost:5173/app`), whatever the proxy path is.
 */
export function displayAddress(target: PreviewTarget): string {
  return target.kind === 'local'
    ? `http://localhost:${target.port}${target.path}`
    : target.url;
}

/**
 * Whether two targets are the same page.
 */
export function sameTarget(a: PreviewTarget, b: PreviewTarget): boolean {
  return displayAddress(a) === displayAddress(b);
}

/**
 * A preview's own back/forward list (the frame's history is joint with
 * Lab's, so the preview never calls `history.back()` on it).
 */
export class NavigationHistory<T> {
  constructor(
    first: T,
    private readonly _same: (a: T, b: T) => boolean,
    private readonly _limit = 100
  ) {
    this._entries = [first];
  }

  get current(): T {
    return this._entries[this._index];
  }

  get canGoBack(): boolean {
    return this._index > 0;
  }

  get canGoForward(): boolean {
    return this._index < this._entries.length - 1;
  }

  /**
   * A new page: it becomes current and the forward entries go (the same
   * page again changes nothing).
   */
  visit(entry: T): void {
    if (this._same(entry, this.current)) {
      this._entries[this._index] = entry;
      return;
    }
    this._entries.splice(this._index + 1);
    this._entries.push(entry);
    if (this._entries.length > this._limit) {
      this._entries.shift();
    }
    this._index = this._entries.length - 1;
  }

  back(): T | null {
    if (!this.canGoBack) {
      return null;
    }
    this._index--;
    return this.current;
  }

  forward(): T | null {
    if (!this.canGoForward) {
      return null;
    }
    this._index++;
    return this.current;
  }

  private readonly _entries: T[];
  private _index = 0;
}
