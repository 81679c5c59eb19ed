/**
 * Printable strings of binary content, like `strings -a` followed by `strings -el`: printable
 * ASCII runs, then UTF-16LE runs (Windows binaries keep many strings as UTF-16).
 *
 * Several engines read a file's strings with different limits (minimum length, longest string,
 * bytes read, most strings). One pass serves them all: `scanStrings` records every run any of the
 * readers would keep, with where it starts and how long it really is, and `stringsFor` derives
 * exactly the list each reader would have extracted on its own.
 */

export interface StringScanOptions {
  minLength?: number;
  /** Stop after this many strings. */
  maxStrings?: number;
  /** Longest single string kept (longer runs are cut). */
  maxLength?: number;
  /** Only look at the first maxBytes of content. */
  maxBytes?: number;
}

/** Every reader of a whole file's strings, so one pass per file serves them all (FileAnalysis). */
export const STRING_READERS = {
  /** behavior.ts: capability rules over the strings. */
  behavior: { minLength: 4, maxBytes: 48 * 1024 * 1024, maxLength: 1024 },
  /** ml.ts: string statistics in the static model's features (the limits it was trained with). */
  mlFeatures: { minLength: 5, maxBytes: 16 * 1024 * 1024, maxStrings: 100_000, maxLength: 512 },
} as const satisfies Record<string, StringScanOptions>;
export type StringReader = keyof typeof STRING_READERS;

/**
 * The runs found in one pass. ASCII entries come first (`utf16From` is where the UTF-16LE ones
 * begin); `start` is the run's first byte, `length` its full length (bytes for ASCII, characters
 * for UTF-16); `text` is the run cut to the longest `maxLength` any reader asked for.
 * Plain arrays, so the table survives a structured clone to a pool thread.
 */
export interface StringTable {
  size: number;
  readers: Array<Required<StringScanOptions>>;
  text: string[];
  start: number[];
  length: number[];
  utf16From: number;
}

interface Limits { minLength: number; maxStrings: number; maxLength: number; end: number }

function limitsOf(o: StringScanOptions, size: number): Limits {
  return {
    minLength: o.minLength ?? 5,
    maxStrings: o.maxStrings ?? 200_000,
    maxLength: o.maxLength ?? 4096,
    end: Math.min(size, o.maxBytes ?? 64 * 1024 * 1024),
  };
}

function isPrintable(b: number): boolean {
  return (b >= 0x20 && b < 0x7f) || b === 0x09;
}

/** Characters of an ASCII run (start, length) a reader sees, or -1 when it does not keep it. */
function asciiSeen(l: Limits, start: number, length: number): number {
  if (start >= l.end) return -1;
  const seen = Math.min(length, l.end - start);
  return seen >= l.minLength ? Math.min(seen, l.maxLength) : -1;
}

/**
 * Characters of a UTF-16 run (start, chars) a reader sees, or -1. A character at byte p needs
 * p + 1 inside the reader's window, and a run is kept only once a byte that ends it is read
 * inside the window (so a run reaching the window's very end is dropped, as it always was).
 */
function utf16Seen(l: Limits, start: number, chars: number): number {
  if (start > l.end - 2) return -1;
  const seen = Math.min(chars, Math.floor((l.end - 2 - start) / 2) + 1);
  if (start + 2 * seen > l.end - 1) return -1;
  const kept = Math.min(seen, l.maxLength);
  return kept >= l.minLength ? kept : -1;
}

/** One pass over `buf` recording every run that any of `readers` keeps. */
export function scanStrings(buf: Uint8Array, readers: readonly StringScanOptions[]): StringTable {
  const lims = readers.map((r) => limitsOf(r, buf.length));
  const counts = lims.map(() => 0);
  const minLength = Math.min(...lims.map((l) => l.minLength));
  const maxLength = Math.max(...lims.map((l) => l.maxLength));
  const end = Math.max(...lims.map((l) => l.end));
  const texts: string[] = [];
  const starts: number[] = [];
  const lengths: number[] = [];
  /** Readers whose count is full; the pass stops when every reader's is. */
  let full = lims.filter((l) => l.maxStrings <= 0).length;
  /** Counts the run for every reader that still wants strings and keeps it; true when one did. */
  const wanted = (utf16: boolean, start: number, length: number): boolean => {
    let any = false;
    for (let k = 0; k < lims.length; k++) {
      if (counts[k] >= lims[k].maxStrings) continue;
      if ((utf16 ? utf16Seen(lims[k], start, length) : asciiSeen(lims[k], start, length)) < 0) continue;
      if (++counts[k] === lims[k].maxStrings) full++;
      any = true;
    }
    return any;
  };
  /** Records a run; false once no reader wants more strings (the pass stops). */
  const record = (text: string, start: number, length: number): boolean => {
    texts.push(text);
    starts.push(start);
    lengths.push(length);
    return full < lims.length;
  };
  let open = full < lims.length;

  let start = -1;
  for (let i = 0; i <= end && open; i++) {
    if (i < end && isPrintable(buf[i])) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      const n = i - start;
      if (n >= minLength && wanted(false, start, n)) {
        open = record(Buffer.from(buf.buffer, buf.byteOffset + start, Math.min(n, maxLength)).toString('latin1'), start, n);
      }
      start = -1;
    }
  }
  const utf16From = texts.length;

  // UTF-16LE: printable byte followed by 0x00, repeated.
  start = -1;
  let chars: number[] = [];
  let count = 0;
  for (let i = 0; i + 1 <= end && open; i += 1) {
    if (i + 1 < end && isPrintable(buf[i]) && buf[i + 1] === 0) {
      if (start < 0) { start = i; chars = []; count = 0; }
      if (chars.length < maxLength) chars.push(buf[i]);
      count++;
      i += 1;
    } else if (start >= 0) {
      if (Math.min(count, maxLength) >= minLength && wanted(true, start, count)) open = record(String.fromCharCode(...chars), start, count);
      start = -1;
    }
  }
  // A run still open at the end of the pass ends inside a shorter reader's window.
  if (start >= 0 && open && Math.min(count, maxLength) >= minLength && wanted(true, start, count)) {
    record(String.fromCharCode(...chars), start, count);
  }
  return {
    size: buf.length,
    readers: lims.map((l, k) => ({ minLength: l.minLength, maxStrings: l.maxStrings, maxLength: l.maxLength, maxBytes: readers[k].maxBytes ?? 64 * 1024 * 1024 })),
    text: texts, start: starts, length: lengths, utf16From,
  };
}

/** The strings reader `index` of `table` would have extracted by itself. */
export function stringsFor(table: StringTable, index: number): string[] {
  // A lone reader's runs are recorded exactly as it keeps them.
  if (table.readers.length === 1) return table.text.slice();
  const l = limitsOf(table.readers[index], table.size);
  const out: string[] = [];
  for (let k = 0; k < table.text.length && out.length < l.maxStrings; k++) {
    const n = k < table.utf16From ? asciiSeen(l, table.start[k], table.length[k]) : utf16Seen(l, table.start[k], table.length[k]);
    if (n >= 0) out.push(n < table.text[k].length ? table.text[k].slice(0, n) : table.text[k]);
  }
  return out;
}

/** The strings of `buf` under one reader's limits. */
export function extractStrings(buf: Uint8Array, opts: StringScanOptions = {}): string[] {
  return stringsFor(scanStrings(buf, [opts]), 0);
}
