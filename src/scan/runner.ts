/**
 * Runs one engine within its time budget and records what happened. A throw becomes status
 * 'error', a budget overrun 'timeout', an EngineUnavailableError 'unavailable': one broken engine
 * never sinks a scan.
 */
import type { Engine, EngineResult, Finding, ScanSubject } from './types';

/** Thrown by an engine whose backing service or tool is absent (e.g. clamd not reachable). */
export class EngineUnavailableError extends Error {
  override readonly name = 'EngineUnavailableError';
}

export class EngineTimeoutError extends Error {
  override readonly name = 'EngineTimeoutError';
}

function normaliseFinding(f: Finding, engine: string): Finding {
  return {
    ...f,
    engine: f.engine ?? engine,
    confidence: Math.min(1, Math.max(0, f.confidence)),
    ...(f.excerpt !== undefined ? { excerpt: f.excerpt.slice(0, 200) } : {}),
  };
}

export interface EngineRun {
  result: EngineResult;
  /** Members an archive engine handed back for recursive analysis. */
  members: Array<{ path: string; content: Buffer }>;
}

export async function runEngine(engine: Engine, subject: ScanSubject, budgetMs: number): Promise<EngineResult> {
  return (await runEngineWithMembers(engine, subject, budgetMs)).result;
}

export async function runEngineWithMembers(engine: Engine, subject: ScanSubject, budgetMs: number): Promise<EngineRun> {
  const started = performance.now();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Settle the race as a timeout before aborting: an engine that rejects on abort (a pooled
      // engine whose thread is terminated) must not turn the timeout into an error.
      reject(new EngineTimeoutError(`exceeded its ${budgetMs} ms budget`));
      controller.abort(new EngineTimeoutError(`exceeded its ${budgetMs} ms budget`));
    }, budgetMs);
  });
  const elapsed = (): number => Math.round(performance.now() - started);
  try {
    const out = await Promise.race([engine.scan(subject, { signal: controller.signal, budgetMs }), timeout]);
    const result: EngineResult = {
      engine: engine.name,
      status: 'ok',
      durationMs: elapsed(),
      findings: out.findings.map((f) => normaliseFinding(f, engine.name)),
      ...(out.report ? { report: out.report } : {}),
      ...(out.note ? { note: out.note } : {}),
    };
    return { result, members: out.members ?? [] };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const status = err instanceof EngineTimeoutError ? 'timeout' : err instanceof EngineUnavailableError ? 'unavailable' : 'error';
    return { result: { engine: engine.name, status, durationMs: elapsed(), findings: [], note: message }, members: [] };
  } finally {
    clearTimeout(timer);
  }
}
