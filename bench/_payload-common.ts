/** Helpers shared by the payload benchmarks: building a ScanSubject and running the engines. */
import { createHash } from 'node:crypto';
import { FileAnalysis } from '../src/scan/file-analysis';
import type { Engine, EngineOutput, ScanSubject } from '../src/scan/types';

export function subjectOf(text: string | Buffer, name = ''): ScanSubject {
  const content = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const h = (alg: string): string => createHash(alg).update(content).digest('hex');
  return {
    content, name, size: content.length, fileType: 'text', contentType: 'text/plain',
    sha256: h('sha256'), md5: h('md5'), sha1: h('sha1'), depth: 0, scanType: 'payload', file: new FileAnalysis(content),
  };
}

export async function runEngine(engine: Engine, subject: ScanSubject, budgetMs = 30_000): Promise<EngineOutput> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), budgetMs);
  try {
    return await engine.scan(subject, { signal: ac.signal, budgetMs });
  } finally {
    clearTimeout(timer);
  }
}

export function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Confusion counts of a binary detector, shared by the evaluation benchmarks. */
export interface Counts { tp: number; fp: number; fn: number; tn: number }
export const counts = (): Counts => ({ tp: 0, fp: 0, fn: 0, tn: 0 });
export function tally(c: Counts, predicted: boolean, actual: boolean): void {
  if (predicted && actual) c.tp++;
  else if (predicted) c.fp++;
  else if (actual) c.fn++;
  else c.tn++;
}
