import { describe, expect, it } from 'vitest';

import {
  PREFIX_CHARS,
  SUFFIX_CHARS,
  completionFailure,
  cursorContext,
  languageOf
} from './completion';

describe('cursorContext', () => {
  it('splits the text at the cursor', () => {
    expect(cursorContext('def add(a, b):\n', 7)).toEqual({
      prefix: 'def add',
      suffix: '(a, b):\n'
    });
    expect(cursorContext('abc', 0)).toEqual({ prefix: '', suffix: 'abc' });
    expect(cursorContext('abc', 3)).toEqual({ prefix: 'abc', suffix: '' });
  });

  it('clamps an offset outside the text', () => {
    expect(cursorContext('abc', 99)).toEqual({ prefix: 'abc', suffix: '' });
    expect(cursorContext('abc', -4)).toEqual({ prefix: '', suffix: 'abc' });
    expect(cursorContext('abc', NaN)).toEqual({ prefix: '', suffix: 'abc' });
  });

  it('keeps the end of the prefix and the start of the suffix', () => {
    const text = 'p'.repeat(10) + 'q'.repeat(PREFIX_CHARS);
    const tail = 's'.repeat(SUFFIX_CHARS) + 't'.repeat(10);
    const { prefix, suffix } = cursorContext(text + tail, text.length);
    expect(prefix).toBe('q'.repeat(PREFIX_CHARS));
    expect(suffix).toBe('s'.repeat(SUFFIX_CHARS));
  });
});

describe('languageOf', () => {
  it('names the language of a MIME type', () => {
    expect(languageOf('text/x-python')).toBe('python');
    expect(languageOf('text/x-ipython')).toBe('python');
    expect(languageOf('text/typescript')).toBe('typescript');
    expect(languageOf('text/x-sh; charset=utf-8')).toBe('sh');
  });

  it('leaves out plain text and nothing', () => {
    expect(languageOf('text/plain')).toBeUndefined();
    expect(languageOf(undefined)).toBeUndefined();
    expect(languageOf('')).toBeUndefined();
  });
});

describe('completionFailure', () => {
  it('says completion is off without a model', () => {
    const status = completionFailure(
      'no_model',
      'No model is connected for completions: choose one in the AI panel.',
      400
    );
    expect(status.state).toBe('off');
    expect(status.text).toBe('Completion off: no model connected');
    expect(status.detail).toContain('AI panel');
  });

  it("names the provider's refusal with its status", () => {
    expect(
      completionFailure(
        'bad_key',
        'Keyed refused the request (401): it wants a key.',
        502
      ).text
    ).toBe('Completion: provider refused (401)');
    expect(completionFailure('bad_key', 'refused', 502).text).toBe(
      'Completion: provider refused the key'
    );
    expect(
      completionFailure('rate_limited', 'limiting requests (429).', 502).text
    ).toBe('Completion: rate limited (429)');
  });

  it('keeps unknown failures recognisable', () => {
    expect(completionFailure('internal_error', 'boom', 500)).toEqual({
      state: 'error',
      text: 'Completion failed (500, internal_error)',
      detail: 'boom'
    });
    expect(completionFailure('', 'Failed to fetch', 0).text).toBe(
      'Completion failed: no answer from the server'
    );
  });
});
