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

/**
 * Why inline completion works or does not, for the settings view and a
 * notification: `text` is the short form, `detail` the server's own words.
 */
export interface ICompletionStatus {
  /** `ok`: the last request was answered; `off`: completion cannot work until
   * something is set; `error`: the last request failed. */
  state: 'ok' | 'off' | 'error' | 'disabled' | 'unknown';
  text: string;
  detail: string;
}

/**
 * What a failed completion request means: `reason` and `message` of the
 * server's error, `status` its HTTP status (0 for no answer).
 */
export function completionFailure(
  reason: string,
  message: string,
  status: number
): ICompletionStatus {
  // The provider's own status (401, 403, 429) is in the server's message.
  const code = /\((\d{3})\)/.exec(message)?.[1] ?? '';
  const shown = code ? ` (${code})` : '';
  const off = (text: string): ICompletionStatus => ({
    state: 'off',
    text,
    detail: message
  });
  const error = (text: string): ICompletionStatus => ({
    state: 'error',
    text,
    detail: message
  });
  switch (reason) {
    case 'no_model':
      return off('Completion off: no model connected');
    case 'missing_key':
      return off('Completion off: the provider has no key');
    case 'key_not_for_url':
      return off('Completion off: the key is not for this address');
    case 'bad_key':
      return error(`Completion: provider refused${shown || ' the key'}`);
    case 'provider_not_found':
      return off('Completion off: unknown provider');
    case 'model_not_found':
      return error('Completion: the provider has no such model');
    case 'provider_unreachable':
      return error('Completion: the model server does not answer');
    case 'provider_timeout':
      return error('Completion: the provider took too long');
    case 'rate_limited':
      return error(`Completion: rate limited${shown || ' (429)'}`);
    case 'access_denied':
      return off('Completion off: the server refused the address');
    default:
      return error(
        status
          ? `Completion failed (${status}${reason ? `, ${reason}` : ''})`
          : 'Completion failed: no answer from the server'
      );
  }
}
