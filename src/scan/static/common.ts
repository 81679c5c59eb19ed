/**
 * Helpers shared by the static engines (pe, elf, office, pdf, script, behavior, ml).
 * Everything here is bounded: callers pass limits, nothing grows with hostile input unchecked.
 */
import type { Finding, Severity } from '../types';

/** Shannon entropy in bits per byte (0..8) of buf[start, end). */
export function shannonEntropy(buf: Uint8Array, start = 0, end = buf.length): number {
  const s = Math.max(0, start);
  const e = Math.min(buf.length, end);
  const n = e - s;
  if (n <= 0) return 0;
  const counts = new Uint32Array(256);
  for (let i = s; i < e; i++) counts[buf[i]]++;
  let h = 0;
  for (let i = 0; i < 256; i++) {
    const c = counts[i];
    if (c === 0) continue;
    const p = c / n;
    h -= p * Math.log2(p);
  }
  return h;
}

export interface StringScanOptions {
  minLength?: number;
  /** Stop after this many strings. */
  maxStrings?: number;
  /** Longest single string kept (longer runs are cut). */
  maxLength?: number;
  /** Only look at the first maxBytes of content. */
  maxBytes?: number;
}

function isPrintable(b: number): boolean {
  return (b >= 0x20 && b < 0x7f) || b === 0x09;
}

/**
 * Printable ASCII runs plus UTF-16LE runs (Windows binaries keep many strings as UTF-16),
 * like `strings -a` followed by `strings -el`.
 */
export function extractStrings(buf: Uint8Array, opts: StringScanOptions = {}): string[] {
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
  // UTF-16LE: printable byte followed by 0x00, repeated.
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

export function makeFinding(
  engine: string,
  id: string,
  name: string,
  severity: Severity,
  confidence: number,
  description: string,
  category: string,
  excerpt?: string,
): Finding {
  const f: Finding = { engine, id, name, severity, confidence: round2(confidence), description, category };
  if (excerpt !== undefined && excerpt !== '') f.excerpt = excerpt.length > 200 ? excerpt.slice(0, 200) : excerpt;
  return f;
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}


/** Cheap abort check for long loops. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error('engine budget exhausted');
}
