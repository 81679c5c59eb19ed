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
  const f: Finding = { engine, id, name, severity, confidence, description, category };
  if (excerpt !== undefined && excerpt !== '') f.excerpt = excerpt.length > 200 ? excerpt.slice(0, 200) : excerpt;
  return f;
}


/** Cheap abort check for long loops. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error('engine budget exhausted');
}
