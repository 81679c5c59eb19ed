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
  const table: StringTable = {
    size: buf.length,
    readers: lims.map((l, i) => ({ minLength: l.minLength, maxStrings: l.maxStrings, maxLength: l.maxLength, maxBytes: readers[i].maxBytes ?? 64 * 1024 * 1024 })),
    text: [], start: [], length: [], utf16From: 0,
  };
  /** Readers that still want strings; the pass stops when none does. */
  let wanting = lims.filter((l) => l.maxStrings > 0).length;
  const open = (): boolean => wanting > 0;
  /** Records a run if a reader that still wants strings keeps it. */
  const offer = (seen: (l: Limits) => number, start: number, length: number, text: () => string): void => {
    let wanted = false;
    for (let k = 0; k < lims.length; k++) {
      if (counts[k] < lims[k].maxStrings && seen(lims[k]) >= 0) {
        counts[k]++;
        if (counts[k] === lims[k].maxStrings) wanting--;
        wanted = true;
      }
    }
    if (!wanted) return;
    table.text.push(text());
    table.start.push(start);
    table.length.push(length);
  };

  let start = -1;
  for (let i = 0; i <= end && open(); i++) {
    const printable = i < end && isPrintable(buf[i]);
    if (printable) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      const s = start;
      const n = i - s;
      if (n >= minLength) offer((l) => asciiSeen(l, s, n), s, n, () => Buffer.from(buf.buffer, buf.byteOffset + s, Math.min(n, maxLength)).toString('latin1'));
      start = -1;
    }
  }
  table.utf16From = table.text.length;

  // UTF-16LE: printable byte followed by 0x00, repeated.
  start = -1;
  let chars: number[] = [];
  let count = 0;
  const close = (): void => {
    const s = start;
    const n = count;
    const kept = chars;
    if (Math.min(n, maxLength) >= minLength) offer((l) => utf16Seen(l, s, n), s, n, () => String.fromCharCode(...kept));
    start = -1;
  };
  let i = 0;
  for (; i + 1 <= end && open(); i += 1) {
    const ok = i + 1 < end && isPrintable(buf[i]) && buf[i + 1] === 0;
    if (ok) {
      if (start < 0) { start = i; chars = []; count = 0; }
      if (chars.length < maxLength) chars.push(buf[i]);
      count++;
      i += 1;
    } else if (start >= 0) {
      close();
    }
  }
  // A run still open at the end of the pass ends inside a shorter reader's window.
  if (start >= 0 && open()) close();
  return table;
}

/** The strings reader `index` of `table` would have extracted by itself. */
export function stringsFor(table: StringTable, index: number): string[] {
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
