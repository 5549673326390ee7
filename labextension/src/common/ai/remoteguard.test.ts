import { describe, expect, it } from 'vitest';

import {
  DROPPED_ELEMENTS,
  hostOf,
  type IPage,
  isNavigable,
  planElement,
  type Resolve,
  resourceVerdict,
  srcsetUrls,
  styleLoadsResources
} from './remoteguard';

const BASE = 'http://127.0.0.1:8888/user/alice/lab/tree';
const PAGE: IPage = {
  origin: 'http://127.0.0.1:8888',
  loadablePaths: ['/user/alice/files/']
};

/** The browser's resolution, from Node's WHATWG URL. */
const resolve: Resolve = raw => {
  try {
    const url = new URL(raw, BASE);
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

const verdict = (url: string) => resourceVerdict(url, resolve, PAGE);

describe('resourceVerdict', () => {
  it("loads data:, the page's blob: and the user's own files", () => {
    expect(verdict('data:image/png;base64,iVBORw0KGgo=')).toBe('load');
    expect(verdict('blob:http://127.0.0.1:8888/5c1e')).toBe('load');
    expect(verdict('/user/alice/files/plot.png')).toBe('load');
    expect(verdict('../files/out/plot.png')).toBe('load');
    expect(verdict('http://127.0.0.1:8888/user/alice/files/x.png')).toBe(
      'load'
    );
  });

  it('makes the rest of the origin a click: it is not all Lab', () => {
    for (const url of [
      // login redirects anywhere on the origin, the preview proxy among it
      '/user/alice/login?next=%2Fuser%2Falice%2Fterax%2Fproxy%2F5173~cap%2Fx',
      '/user/alice/logout',
      '/hub/login?next=/x',
      '/user/bob/files/x.png', // another user of the same hub
      '/user/bob/terax/proxy/5173~cap/x.png',
      'plot.png', // Lab's page, not a file
      'http://127.0.0.1:8888/static/x.png',
      '/user/alice/files/../login?next=/x',
      '/user/alice/files/%2e%2e/login?next=/x',
      '/user/alice/files%2f..%2flogin?next=/x',
      '/user/alice/files/..%2flogin?next=/x'
    ]) {
      expect(verdict(url), url).toBe('remote');
    }
  });

  it('makes every other origin a click', () => {
    for (const url of [
      'http://evil.example/x.png?data=secret',
      'https://127.0.0.1:8888/x.png', // another scheme is another origin
      'http://127.0.0.1:8889/x.png', // another port too
      'http://localhost:8888/x.png',
      '//evil.example/x.png',
      '/\\evil.example/x.png', // a backslash is a slash in http URLs
      '  HTTP://EVIL.EXAMPLE/x  ',
      'http://127.0.0.1:8888@evil.example/x'
    ]) {
      expect(verdict(url), url).toBe('remote');
    }
  });

  it('keeps the preview proxy behind a click, however its path is spelt', () => {
    for (const url of [
      '/user/alice/terax/proxy/8000/x.png?d=1',
      '/user/alice/terax/%70roxy/8000/x.png',
      '/user/alice//terax/proxy/8000/',
      '/user/alice/TERAX/proxy/8000/'
    ]) {
      expect(verdict(url), url).toBe('remote');
    }
  });

  it('drops other schemes and blobs of other origins', () => {
    for (const url of [
      'javascript:alert(1)',
      'file:///etc/passwd',
      'ftp://evil.example/x',
      'blob:http://evil.example/5c1e',
      'attachment:x.png',
      '',
      '   ',
      'http://[::1'
    ]) {
      expect(verdict(url), url).toBe('drop');
    }
  });
});

describe('srcsetUrls', () => {
  it('reads candidates, descriptors and commas as the standard does', () => {
    expect(srcsetUrls('a.png 1x, https://e.example/b.png 2x')).toEqual([
      'a.png',
      'https://e.example/b.png'
    ]);
    expect(srcsetUrls('https://e.example/a,b.png 100w')).toEqual([
      'https://e.example/a,b.png'
    ]);
    expect(srcsetUrls('a.png,https://e.example/b.png')).toEqual([
      'a.png,https://e.example/b.png'
    ]);
    expect(srcsetUrls('a.png, , b.png 2x (x, y), c.png')).toEqual([
      'a.png',
      'b.png',
      'c.png'
    ]);
    expect(srcsetUrls('')).toEqual([]);
  });
});

describe('styleLoadsResources', () => {
  it('finds every way inline CSS fetches', () => {
    for (const style of [
      'background:url(http://e.example/x)',
      'background-image: URL ( "http://e.example/x" )',
      'background-image:image-set("http://e.example/x" 1x)',
      'list-style: square url(x)',
      'cursor:url(x),auto',
      'background:\\75 rl(http://e.example/x)',
      'content: src("x")',
      'mask: cross-fade(url(a), url(b))'
    ]) {
      expect(styleLoadsResources(style), style).toBe(true);
    }
    expect(styleLoadsResources('color: red; font-weight: bold')).toBe(false);
    expect(styleLoadsResources('u/**/rl(x)')).toBe(false); // not a url() token
  });
});

describe('isNavigable', () => {
  it('keeps web, mail and workspace links only', () => {
    expect(isNavigable('https://e.example/docs')).toBe(true);
    expect(isNavigable('mailto:a@b.example')).toBe(true);
    expect(isNavigable('src/app.py')).toBe(true);
    expect(isNavigable('#section')).toBe(true);
    expect(isNavigable('javascript:alert(1)')).toBe(false);
    expect(isNavigable('java\tscript:alert(1)')).toBe(false);
    expect(isNavigable(' \u0001javascript:alert(1)')).toBe(false);
    expect(isNavigable('data:text/html,x')).toBe(false);
    expect(isNavigable('file:///etc/passwd')).toBe(false);
  });
});

describe('planElement', () => {
  const plan = (
    tag: string,
    attributes: Record<string, string>,
    loaded?: Set<string>
  ) => planElement(tag, Object.entries(attributes), verdict, loaded);

  it('turns a remote image into a placeholder naming what it loads', () => {
    const result = plan('img', {
      src: 'http://evil.example/x.png?data=secret',
      alt: 'chart',
      srcset: 'http://evil.example/y.png 2x'
    });
    expect(result.drop).toBe(false);
    expect(result.remove.sort()).toEqual(['src', 'srcset']);
    expect(result.media).toEqual({
      kind: 'image',
      url: 'http://evil.example/x.png?data=secret',
      label: 'chart'
    });
    expect(hostOf(result.media!.url, resolve)).toBe('evil.example');
  });

  it('finds the remote image of a srcset alone, and a video poster', () => {
    expect(
      plan('img', {
        srcset: 'data:image/png;base64,x 1x, http://e.example/a 2x'
      }).media?.url
    ).toBe('http://e.example/a');
    const video = plan('video', {
      poster: 'http://e.example/p.png',
      src: 'data:video/mp4;base64,AAAA'
    });
    expect(video.remove).toEqual(['poster']);
    expect(video.media).toMatchObject({
      kind: 'video',
      url: 'http://e.example/p.png'
    });
    expect(plan('audio', { src: 'https://e.example/a.mp3' }).media?.kind).toBe(
      'audio'
    );
  });

  it('keeps what loads without leaving the page', () => {
    const result = plan('img', {
      src: 'data:image/png;base64,iVBORw0KGgo=',
      alt: 'inline',
      style: 'width: 10px'
    });
    expect(result).toEqual({ drop: false, remove: [], media: null });
  });

  it('keeps an image the user chose to load', () => {
    const url = 'http://e.example/x.png';
    const result = plan(
      'img',
      { src: url, srcset: `${url} 2x` },
      new Set([url])
    );
    expect(result.media).toBeNull();
    expect(result.remove).toEqual(['srcset']);
  });

  it('strips every other attribute that fetches, pings or runs', () => {
    expect(
      plan('source', { srcset: 'http://e.example/a.webp', type: 'image/webp' })
        .remove
    ).toEqual(['srcset']);
    expect(plan('track', { src: 'http://e.example/t.vtt' }).remove).toEqual([
      'src'
    ]);
    expect(
      plan('input', { type: 'image', src: 'http://e.example/b.png' }).remove
    ).toEqual(['src']);
    expect(
      plan('div', { style: 'background:url(http://e.example/x)' }).remove
    ).toEqual(['style']);
    expect(plan('td', { background: 'http://e.example/x.png' }).remove).toEqual(
      ['background']
    );
    expect(
      plan('a', { href: 'https://e.example', ping: 'http://e.example/p' })
        .remove
    ).toEqual(['ping']);
    expect(
      plan('img', { src: 'data:,', attributionsrc: 'http://e.example' }).remove
    ).toEqual(['attributionsrc']);
    expect(plan('img', { src: 'data:,', onerror: 'fetch(1)' }).remove).toEqual([
      'onerror'
    ]);
    expect(plan('form', { action: 'http://e.example' }).remove).toEqual([
      'action'
    ]);
    expect(
      plan('button', {
        'data-commandlinker-command': 'console:inject',
        'data-commandlinker-args': '{"code": "import os"}'
      }).remove
    ).toEqual(['data-commandlinker-command', 'data-commandlinker-args']);
    expect(plan('button', { formaction: 'http://e.example' }).remove).toEqual([
      'formaction'
    ]);
    expect(plan('image', { href: 'http://e.example/x.svg' }).remove).toEqual([
      'href'
    ]);
    expect(
      plan('use', { 'xlink:href': 'http://e.example/s.svg#a' }).remove
    ).toEqual(['xlink:href']);
    expect(plan('rect', { fill: 'url(http://e.example/p#x)' }).remove).toEqual([
      'fill'
    ]);
    expect(plan('a', { href: 'javascript:alert(1)' }).remove).toEqual(['href']);
    expect(plan('a', { href: 'https://e.example/page' }).remove).toEqual([]);
  });

  it('drops what embeds, loads or runs', () => {
    for (const tag of [
      'iframe',
      'object',
      'embed',
      'link',
      'meta',
      'script',
      'style',
      'svg',
      'base',
      'portal'
    ]) {
      expect(plan(tag, {}).drop, tag).toBe(true);
      expect(DROPPED_ELEMENTS.has(tag)).toBe(true);
    }
    expect(plan('IFRAME', {}).drop).toBe(true);
  });
});
