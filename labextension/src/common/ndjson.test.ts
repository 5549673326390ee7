import { describe, expect, it } from 'vitest';

import { NdjsonParseError, NdjsonSplitter } from './ndjson';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

function splitter<T = unknown>(): NdjsonSplitter<T> {
  return new NdjsonSplitter<T>(bytes => decoder.decode(bytes));
}

describe('NdjsonSplitter', () => {
  it('parses complete lines of one chunk', () => {
    const s = splitter();
    expect(s.push(encoder.encode('{"a":1}\n{"b":2}\n'))).toEqual([
      { a: 1 },
      { b: 2 }
    ]);
    expect(s.pendingBytes).toBe(0);
  });

  it('holds a partial line until its newline arrives', () => {
    const s = splitter();
    expect(s.push(encoder.encode('{"type":"fi'))).toEqual([]);
    expect(s.pendingBytes).toBe(11);
    expect(s.push(encoder.encode('le","n":1}\n{"x"'))).toEqual([
      { type: 'file', n: 1 }
    ]);
    expect(s.push(encoder.encode(':true}\n'))).toEqual([{ x: true }]);
  });

  it('reassembles a multi-byte character split across chunks', () => {
    const bytes = encoder.encode('{"text":"héllo \u{1F600} wörld"}\n');
    // Split inside the 4-byte emoji and inside the 2-byte é.
    const emoji = bytes.indexOf(0xf0);
    const s = splitter<{ text: string }>();
    const values = [
      ...s.push(bytes.subarray(0, 11)),
      ...s.push(bytes.subarray(11, emoji + 2)),
      ...s.push(bytes.subarray(emoji + 2))
    ];
    expect(values).toEqual([{ text: 'héllo \u{1F600} wörld' }]);
  });

  it('feeds byte by byte', () => {
    const s = splitter();
    const values: unknown[] = [];
    for (const byte of encoder.encode('{"k":"ä"}\n[1,2]\n')) {
      values.push(...s.push(Uint8Array.of(byte)));
    }
    expect(values).toEqual([{ k: 'ä' }, [1, 2]]);
  });

  it('accepts CRLF and skips blank lines', () => {
    const s = splitter();
    expect(s.push(encoder.encode('{"a":1}\r\n\r\n\n{"b":2}\r\n'))).toEqual([
      { a: 1 },
      { b: 2 }
    ]);
  });

  it('returns a last line without newline on flush', () => {
    const s = splitter();
    expect(s.push(encoder.encode('{"a":1}\n{"summary":true}'))).toEqual([
      { a: 1 }
    ]);
    expect(s.flush()).toEqual([{ summary: true }]);
    expect(s.flush()).toEqual([]);
  });

  it('is not confused when the caller reuses its buffer', () => {
    const s = splitter();
    const buffer = new Uint8Array(8);
    buffer.set(encoder.encode('{"a":'));
    s.push(buffer.subarray(0, 5));
    buffer.fill(0x20);
    buffer.set(encoder.encode('7}\n'));
    expect(s.push(buffer.subarray(0, 3))).toEqual([{ a: 7 }]);
  });

  it('reports a malformed line', () => {
    const s = splitter();
    expect(() => s.push(encoder.encode('not json\n'))).toThrow(
      NdjsonParseError
    );
  });
});
