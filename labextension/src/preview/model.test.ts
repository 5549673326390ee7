import { describe, expect, it } from 'vitest';

import { PreviewModel, type IFrameState } from './model';

/**
 * A model whose server answers are scripted: frame URLs per port (or a
 * refusal) and what the server says each frame loaded.
 */
function scripted(
  options: {
    refuse?: { message: string; reason: string; status: number };
    states?: (IFrameState | null)[];
  } = {}
) {
  const requested: string[] = [];
  const states = [...(options.states ?? [])];
  const model = new PreviewModel({
    target: { kind: 'local', port: 5173, path: '/' },
    frameURL: async (port, path) => {
      if (options.refuse) {
        throw Object.assign(new Error(options.refuse.message), {
          reason: options.refuse.reason,
          response: { status: options.refuse.status }
        });
      }
      return `http://lab/terax/proxy/${port}~cap${path}`;
    },
    frameState: async () => states.shift() ?? null
  });
  model.navigationRequested.connect((_, navigation) =>
    requested.push(navigation.src)
  );
  return { model, requested };
}

const settled = () => new Promise(resolve => setTimeout(resolve, 0));

describe('PreviewModel', () => {
  it('frames a local page from its preview address', async () => {
    const { model, requested } = scripted();
    model.start();
    await settled();
    expect(requested).toEqual(['http://lab/terax/proxy/5173~cap/']);
    expect(model.loading).toBe(true);
  });

  it('follows a link the page led to, as the server saw it', async () => {
    const { model } = scripted({
      states: [
        { path: '/', error: null },
        { path: '/second.html?from=home', error: null }
      ]
    });
    model.start();
    await settled();
    await model.frameLoaded(); // the page the tab asked for
    expect(model.canGoBack).toBe(false);
    await model.frameLoaded(); // then a link in it
    expect(model.address).toBe('http://localhost:5173/second.html?from=home');
    expect(model.canGoBack).toBe(true);
    expect(model.loading).toBe(false);
  });

  it('keeps the fragment of the page it asked for', async () => {
    const { model } = scripted({
      states: [{ path: '/a', error: null }]
    });
    model.navigate('localhost:5173/a#top');
    await settled();
    await model.frameLoaded();
    expect(model.address).toBe('http://localhost:5173/a#top');
  });

  it("shows the proxy's error for the frame", async () => {
    const error = { status: 502, reason: 'nothing_listening', message: 'x' };
    const { model } = scripted({ states: [{ path: '/', error }] });
    model.start();
    await settled();
    await model.frameLoaded();
    expect(model.error).toEqual(error);
  });

  it('says why a port cannot be previewed, without loading a frame', async () => {
    const refuse = { message: 'own port', reason: 'own_port', status: 403 };
    const { model, requested } = scripted({ refuse });
    model.start();
    await settled();
    expect(requested).toEqual([]);
    expect(model.loading).toBe(false);
    expect(model.error).toEqual(refuse);
  });

  it('is not misled by a page it asked for and then left', async () => {
    const error = { status: 502, reason: 'nothing_listening', message: 'x' };
    const { model } = scripted({ states: [{ path: '/', error }] });
    model.start();
    model.navigate('localhost:5173/b');
    await settled();
    await model.frameLoaded(); // /b loaded; the server saw the abandoned / last
    expect(model.address).toBe('http://localhost:5173/b');
    expect(model.error).toBeNull();
  });

  it('ignores what a page asked for earlier says', async () => {
    const { model } = scripted({
      states: [{ path: '/old', error: null }]
    });
    model.start();
    await settled();
    const late = model.frameLoaded(); // the answer comes after a new page was asked for
    model.navigate('localhost:5173/new');
    await late;
    expect(model.address).toBe('http://localhost:5173/new');
    expect(model.loading).toBe(true);
  });
});
