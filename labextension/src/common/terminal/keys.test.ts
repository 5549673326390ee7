import { describe, expect, it } from 'vitest';

import { routeKey, type IKeyContext, type IKeyPress } from './keys';

const context: IKeyContext = {
  hasSelection: false,
  fullScreen: false,
  pasteWithCtrlV: true,
  inputShown: false,
  rawAtPrompt: false
};

function press(key: string, modifiers: Partial<IKeyPress> = {}): IKeyPress {
  return {
    key,
    type: 'keydown',
    ctrlKey: false,
    metaKey: false,
    altKey: false,
    shiftKey: false,
    ...modifiers
  };
}

describe('routeKey', () => {
  it('sends Ctrl+C to the program unless text is selected', () => {
    expect(routeKey(press('c', { ctrlKey: true }), context)).toBe('terminal');
    expect(
      routeKey(press('c', { ctrlKey: true }), {
        ...context,
        hasSelection: true
      })
    ).toBe('browser');
  });

  it('pastes with Ctrl+V outside full-screen programs, Ctrl+Shift+V always', () => {
    expect(routeKey(press('v', { ctrlKey: true }), context)).toBe('browser');
    const vim = { ...context, fullScreen: true };
    expect(routeKey(press('v', { ctrlKey: true }), vim)).toBe('terminal');
    expect(routeKey(press('V', { ctrlKey: true, shiftKey: true }), vim)).toBe(
      'browser'
    );
    expect(
      routeKey(press('v', { ctrlKey: true }), {
        ...context,
        pasteWithCtrlV: false
      })
    ).toBe('terminal');
  });

  it('leaves Lab its shortcuts and the terminal commands', () => {
    expect(
      routeKey(press('%', { ctrlKey: true, shiftKey: true }), context)
    ).toBe('browser');
    expect(routeKey(press('f', { ctrlKey: true }), context)).toBe('browser');
    expect(routeKey(press('ArrowUp', { ctrlKey: true }), context)).toBe(
      'browser'
    );
    expect(routeKey(press('ArrowRight', { altKey: true }), context)).toBe(
      'browser'
    );
  });

  it('gives a full-screen program its keys', () => {
    const less = { ...context, fullScreen: true };
    expect(routeKey(press('f', { ctrlKey: true }), less)).toBe('terminal');
    expect(routeKey(press('ArrowUp', { ctrlKey: true }), less)).toBe(
      'terminal'
    );
    expect(routeKey(press('ArrowLeft', { altKey: true }), less)).toBe(
      'terminal'
    );
  });

  it('types into the input line at the prompt', () => {
    const prompt = { ...context, inputShown: true };
    expect(routeKey(press('a'), prompt)).toBe('input');
    expect(routeKey(press('a', { type: 'keypress' }), prompt)).toBe('terminal');
    expect(routeKey(press('Enter'), prompt)).toBe('terminal');
    expect(routeKey(press('r', { ctrlKey: true }), prompt)).toBe('terminal');
    expect(routeKey(press('a'), { ...prompt, rawAtPrompt: true })).toBe(
      'terminal'
    );
  });
});
