/**
 * One pass of printable-string extraction serves every reader (src/scan/static/strings.ts): each
 * reader's list must equal what a separate extraction under its own limits returns. The oracle is
 * the single-reader extraction the engines used before the pass was shared.
 */
import { extractStrings, scanStrings, STRING_READERS, stringsFor, type StringScanOptions } from '../../../../src/scan/static/strings';

function isPrintable(b: number): boolean {
  return (b >= 0x20 && b < 0x7f) || b === 0x09;
}

/** The former extractStrings, verbatim: one reader, one pass. */
function oracle(buf: Uint8Array, opts: StringScanOptions = {}): string[] {
  const minLength = opts.minLength ?? 5;
  const maxStrings = opts.maxStrings ?? 200_000;
  const maxLength = opts.maxLength ?? 4096;
  const end = Math.min(buf.length, opts.maxBytes ?? 64 * 1024 * 1024);
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= end && out.length < maxStrings; i++) {
    const printable = i < end && isPrintable(buf[i]);
    if (printable) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      if (i - start >= minLength) out.push(Buffer.from(buf.buffer, buf.byteOffset + start, Math.min(i - start, maxLength)).toString('latin1'));
      start = -1;
    }
  }
  start = -1;
  let chars: number[] = [];
  for (let i = 0; i + 1 <= end && out.length < maxStrings; i += 1) {
    const ok = i + 1 < end && isPrintable(buf[i]) && buf[i + 1] === 0;
    if (ok) {
      if (start < 0) { start = i; chars = []; }
      if (chars.length < maxLength) chars.push(buf[i]);
      i += 1;
    } else if (start >= 0) {
      if (chars.length >= minLength) out.push(String.fromCharCode(...chars));
      start = -1;
    }
  }
  return out;
}

function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 8) / 0x1000000;
}

/** Bytes mixing ASCII runs, UTF-16LE runs and binary noise, the shapes the extractor cuts at. */
function sample(r: () => number, size: number): Buffer {
  const b = Buffer.alloc(size);
  let i = 0;
  while (i < size) {
    const kind = r();
    const n = 1 + Math.floor(r() * 24);
    for (let k = 0; k < n && i < size; k++) {
      if (kind < 0.4) b[i++] = 0x20 + Math.floor(r() * 95);
      else if (kind < 0.7) { b[i++] = 0x41 + Math.floor(r() * 26); if (i < size) b[i++] = 0; }
      else b[i++] = Math.floor(r() * 256);
    }
  }
  return b;
}

describe('shared string extraction', () => {
  it('gives each reader exactly the strings its own extraction gives, over random content and limits', () => {
    const r = rng(7);
    for (let round = 0; round < 3000; round++) {
      const buf = sample(r, 1 + Math.floor(r() * (round % 10 === 0 ? 5000 : 300)));
      const readers: StringScanOptions[] = Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({
        minLength: 1 + Math.floor(r() * 8),
        maxLength: 1 + Math.floor(r() * 12),
        maxBytes: Math.floor(r() * (buf.length + 20)),
        maxStrings: r() < 0.5 ? 1 + Math.floor(r() * 30) : undefined,
      }));
      const table = scanStrings(buf, readers);
      readers.forEach((opts, k) => {
        expect({ round, k, strings: stringsFor(table, k) }).toEqual({ round, k, strings: oracle(buf, opts) });
      });
    }
  });

  it('serves the behaviour and ML readers of a real binary from one pass', () => {
    const buf = require('node:fs').readFileSync('/bin/ls') as Buffer;
    const readers = Object.values(STRING_READERS);
    const table = scanStrings(buf, readers);
    readers.forEach((opts, k) => expect(stringsFor(table, k)).toEqual(oracle(buf, opts)));
    expect(extractStrings(buf, { minLength: 6 })).toEqual(oracle(buf, { minLength: 6 }));
  });

  it('keeps the old edge cases: a UTF-16 run that reaches the very end is dropped, a count cap cuts the ASCII runs', () => {
    const wide = Buffer.from('hello', 'utf16le');
    expect(extractStrings(wide, { minLength: 5 })).toEqual([]);
    expect(extractStrings(Buffer.concat([wide, Buffer.from([1])]), { minLength: 5 })).toEqual(['hello']);
    // Readers whose window ends at the run's last byte, or one byte after it, share one pass.
    const table = scanStrings(Buffer.concat([wide, Buffer.from('world')]), [{ minLength: 5 }, { minLength: 5, maxBytes: 10 }, { minLength: 5, maxBytes: 11 }]);
    expect([0, 1, 2].map((k) => stringsFor(table, k))).toEqual([['world', 'hello'], [], ['hello']]);
    expect(extractStrings(Buffer.from('alpha\0bravo\0charlie\0'), { minLength: 5, maxStrings: 2 })).toEqual(['alpha', 'bravo']);
  });
});
