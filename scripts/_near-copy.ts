/**
 * The near-copy test that keeps held-out texts out of training (scripts/build-detection-data.ts)
 * and project-written seeds clear of held-out texts (scripts/pi-style-seeds.ts): same normalised
 * text, or half the word 6-grams of the shorter text. Its own module so that tests can use it
 * without loading the corpus builder's ESM-only dependencies.
 */
import { createHash } from 'node:crypto';

const norm = (t: string): string => t.toLowerCase().replace(/\s+/g, ' ').trim();
export const hash = (t: string): string => createHash('sha256').update(norm(t)).digest('hex').slice(0, 16);

/** Word 6-gram shingles of a text (hashed), at most 4,000. */
export function shingles(t: string): Set<string> {
  const w = norm(t).split(' ');
  const out = new Set<string>();
  for (let i = 0; i + 6 <= w.length && out.size < 4000; i++) out.add(w.slice(i, i + 6).join(' '));
  if (w.length < 6) out.add(w.join(' '));
  return out;
}

export interface ShingleIndex { byShingle: Map<string, number[]>; sizes: number[]; exact: Set<string> }

export function shingleIndex(texts: string[]): ShingleIndex {
  const byShingle = new Map<string, number[]>();
  const sizes: number[] = [];
  texts.forEach((t, i) => {
    const sh = shingles(t);
    sizes.push(sh.size);
    for (const s of sh) byShingle.set(s, [...(byShingle.get(s) ?? []), i]);
  });
  return { byShingle, sizes, exact: new Set(texts.map(hash)) };
}

/** True when the text equals a held-out text or shares half the shingles of the smaller one. */
export function nearCopy(t: string, idx: ShingleIndex): boolean {
  if (idx.exact.has(hash(t))) return true;
  const sh = shingles(t);
  const counts = new Map<number, number>();
  for (const s of sh) for (const i of idx.byShingle.get(s) ?? []) counts.set(i, (counts.get(i) ?? 0) + 1);
  for (const [i, c] of counts) if (c >= 0.5 * Math.min(sh.size, idx.sizes[i])) return true;
  return false;
}
