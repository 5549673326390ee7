/**
 * An incremental splitter for newline-delimited JSON arriving as bytes.
 *
 * Chunks from a network stream split anywhere: inside a line, inside a
 * multi-byte UTF-8 character, or between `\r` and `\n`. The splitter works on
 * bytes and only decodes whole lines; since the newline byte (0x0A) never
 * occurs inside a multi-byte UTF-8 sequence, a line boundary is always a
 * character boundary.
 */

const NEWLINE = 0x0a;

/**
 * Decodes one whole line of UTF-8 bytes into a string (`TextDecoder` in a
 * browser or Node; injected so this module needs neither).
 */
export type Utf8Decode = (bytes: Uint8Array) => string;

/**
 * A line that is not valid JSON.
 */
export class NdjsonParseError extends Error {
  constructor(
    readonly line: string,
    cause: unknown
  ) {
    super(`Malformed line in the response stream: ${truncate(line, 80)}`);
    this.name = 'NdjsonParseError';
    this.cause = cause;
  }
}

/**
 * Collects bytes and yields each complete JSON line as a parsed value.
 */
export class NdjsonSplitter<T = unknown> {
  /**
   * @param decode Turns the bytes of one line into text.
   */
  constructor(decode: Utf8Decode) {
    this._decode = decode;
  }

  /**
   * Bytes held back because their line has not ended yet.
   */
  get pendingBytes(): number {
    return this._pendingLength;
  }

  /**
   * Add a chunk; returns the values of every line it completes, in order.
   *
   * @throws NdjsonParseError on a complete line that is not JSON.
   */
  push(chunk: Uint8Array): T[] {
    const values: T[] = [];
    let start = 0;
    let newline = chunk.indexOf(NEWLINE, start);
    while (newline !== -1) {
      this._hold(chunk.subarray(start, newline));
      this._emit(values);
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) {
      this._hold(chunk.subarray(start));
    }
    return values;
  }

  /**
   * End of stream: the value of a last line without a trailing newline.
   *
   * @throws NdjsonParseError when that last line is not JSON.
   */
  flush(): T[] {
    const values: T[] = [];
    this._emit(values);
    return values;
  }

  private _hold(bytes: Uint8Array): void {
    if (bytes.length === 0) {
      return;
    }
    // Copy: the caller may reuse the chunk's buffer for the next read.
    this._pending.push(bytes.slice());
    this._pendingLength += bytes.length;
  }

  private _emit(values: T[]): void {
    const bytes = this._take();
    if (bytes.length === 0) {
      return;
    }
    let line = this._decode(bytes);
    if (line.endsWith('\r')) {
      line = line.slice(0, -1);
    }
    if (line.trim() === '') {
      return;
    }
    try {
      values.push(JSON.parse(line) as T);
    } catch (error) {
      throw new NdjsonParseError(line, error);
    }
  }

  private _take(): Uint8Array {
    const parts = this._pending;
    const length = this._pendingLength;
    this._pending = [];
    this._pendingLength = 0;
    if (parts.length === 1) {
      return parts[0];
    }
    const joined = new Uint8Array(length);
    let offset = 0;
    for (const part of parts) {
      joined.set(part, offset);
      offset += part.length;
    }
    return joined;
  }

  private readonly _decode: Utf8Decode;
  private _pending: Uint8Array[] = [];
  private _pendingLength = 0;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\u2026` : text;
}
