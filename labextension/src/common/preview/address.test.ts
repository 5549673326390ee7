import { describe, expect, it } from 'vitest';

import {
  NavigationHistory,
  displayAddress,
  isLoopbackHost,
  parseTarget,
  proxyPath,
  sameTarget,
  type PreviewTarget
} from './address';

describe('parseTarget', () => {
  it.each([
    ['5173', 5173, '/'],
    [':3000', 3000, '/'],
    [' 8000 ', 8000, '/'],
    ['localhost:5173', 5173, '/'],
    ['localhost:5173/app?x=1#top', 5173, '/app?x=1#top'],
    ['http://localhost:5173/', 5173, '/'],
    ['HTTP://LOCALHOST:5173/A', 5173, '/A'],
    ['http://127.0.0.1:8000/admin/', 8000, '/admin/'],
    ['http://127.1.2.3:8000', 8000, '/'],
    ['http://0.0.0.0:3000', 3000, '/'],
    ['http://[::1]:8080/x', 8080, '/x'],
    ['http://[::]:8081?q', 8081, '/?q'],
    ['https://localhost:8443/', 8443, '/']
  ])('%s is local', (input, port, path) => {
    expect(parseTarget(input)).toEqual({ kind: 'local', port, path });
  });

  it.each([
    ['https://example.com', 'https://example.com/'],
    ['http://example.com/a?b#c', 'http://example.com/a?b#c'],
    ['example.com/docs', 'https://example.com/docs'],
    ['//example.com', 'https://example.com/'],
    ['https://example.com:8443/x', 'https://example.com:8443/x'],
    [
      'http://localhost.example.com:5173/',
      'http://localhost.example.com:5173/'
    ],
    ['http://10.0.0.5:3000/', 'http://10.0.0.5:3000/']
  ])('%s is external', (input, url) => {
    expect(parseTarget(input)).toEqual({ kind: 'external', url });
  });

  it.each([
    '',
    '   ',
    '0',
    '65536',
    'javascript:alert(1)',
    'data:text/html,hi',
    'file:///etc/passwd',
    'ftp://localhost:21/',
    'http://localhost/',
    'http://localhost:99999/',
    'http://127.0.0.1:abc/',
    'http://exa mple.com',
    'http://a\nb.com',
    'http://user@example.com/',
    'http://[::1/'
  ])('%j is refused', input => {
    expect(parseTarget(input)).toBeNull();
  });
});

describe('loopback hosts', () => {
  it('knows the loopback and any-address spellings', () => {
    for (const host of [
      'localhost',
      'LOCALHOST',
      '127.0.0.1',
      '127.255.0.9',
      '0.0.0.0',
      '[::1]',
      '[::]'
    ]) {
      expect(isLoopbackHost(host)).toBe(true);
    }
    for (const host of [
      'localhost.',
      'example.com',
      '127.0.0.256',
      '127.1',
      '10.0.0.1',
      '[::2]'
    ]) {
      expect(isLoopbackHost(host)).toBe(false);
    }
  });
});

describe('proxy paths', () => {
  it('go below the base URL', () => {
    expect(proxyPath('/', 5173)).toBe('/terax/proxy/5173/');
    expect(proxyPath('/user/alice/', 5173, '/a?b=1#c')).toBe(
      '/user/alice/terax/proxy/5173/a?b=1#c'
    );
    expect(proxyPath('/user/alice', 8000, 'x')).toBe(
      '/user/alice/terax/proxy/8000/x'
    );
  });

  it('read as the developer knows them', () => {
    expect(displayAddress({ kind: 'local', port: 5173, path: '/app' })).toBe(
      'http://localhost:5173/app'
    );
    expect(displayAddress({ kind: 'external', url: 'https://x.dev/' })).toBe(
      'https://x.dev/'
    );
    expect(
      sameTarget(
        { kind: 'local', port: 1, path: '/' },
        parseTarget('http://127.0.0.1:1/')!
      )
    ).toBe(true);
  });
});

describe('NavigationHistory', () => {
  const local = (path: string): PreviewTarget => ({
    kind: 'local',
    port: 5173,
    path
  });

  it('goes back and forward, and a visit drops the forward entries', () => {
    const history = new NavigationHistory(local('/'), sameTarget);
    expect(history.canGoBack).toBe(false);
    history.visit(local('/a'));
    history.visit(local('/b'));
    expect(history.back()).toEqual(local('/a'));
    expect(history.back()).toEqual(local('/'));
    expect(history.back()).toBeNull();
    expect(history.forward()).toEqual(local('/a'));
    expect(history.canGoForward).toBe(true);
    history.visit(local('/c'));
    expect(history.canGoForward).toBe(false);
    expect(history.back()).toEqual(local('/a'));
  });

  it('ignores a visit of the current page and keeps a bounded list', () => {
    const history = new NavigationHistory(local('/'), sameTarget, 3);
    history.visit(local('/'));
    expect(history.canGoBack).toBe(false);
    for (const path of ['/1', '/2', '/3', '/4']) {
      history.visit(local(path));
    }
    expect(history.back()).toEqual(local('/3'));
    expect(history.back()).toEqual(local('/2'));
    expect(history.back()).toBeNull();
  });
});
