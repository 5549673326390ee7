/**
 * What an inline completion request sends: the text around the cursor, cut
 * to what the server uses, and the language from the editor's MIME type.
 */

/**
 * Characters of text before the cursor that the server reads (it keeps the
 * last 6000; a little more is harmless and saves nothing to cut closer).
 */
export const PREFIX_CHARS = 6000;

/**
 * Characters of text after the cursor that the server reads.
 */
export const SUFFIX_CHARS = 2000;

/**
 * The text before and after the cursor.
 */
export interface ICursorContext {
  prefix: string;
  suffix: string;
}

/**
 * Split `text` at `offset` (clamped to the text) and keep the end of the
 * prefix and the start of the suffix.
 */
export function cursorContext(text: string, offset: number): ICursorContext {
  const at = Math.max(0, Math.min(text.length, Math.floor(offset) || 0));
  return {
    prefix: text.slice(Math.max(0, at - PREFIX_CHARS), at),
    suffix: text.slice(at, at + SUFFIX_CHARS)
  };
}

/**
 * A language name for the model from a CodeMirror MIME type
 * (`text/x-python` -> `python`, `text/typescript` -> `typescript`), or
 * undefined when there is none worth sending.
 */
export function languageOf(mimeType: string | undefined): string | undefined {
  if (!mimeType) {
    return undefined;
  }
  const subtype = mimeType.split(';')[0].trim().split('/').pop() ?? '';
  const name = subtype.replace(/^x-/, '').replace(/^ipython$/, 'python');
  if (!name || name === 'plain') {
    return undefined;
  }
  return name.slice(0, 100);
}
