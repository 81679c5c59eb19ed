/**
 * One engine-pool thread: builds its own copies of the pooled engines once, then per task either
 * runs one engine on one subject or computes a file's shared facts (FileAnalysis.prepare) for the
 * engines that read them. Content arrives as a SharedArrayBuffer and is read in place.
 */
import { workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../thread-priority';
import { buildEngines, REGISTRY } from './registry';
import type { PoolEngineDeps, PoolReply, PoolTask } from './pool';
import { FileAnalysis } from './file-analysis';
import type { Engine } from './types';

const deps = workerData as PoolEngineDeps;

/** Engines are bulk CPU work: the main thread goes first when both want a core. */
lowerThreadPriority(10);
const engines = new Map<string, Engine>(
  buildEngines(deps, REGISTRY.filter((r) => r.thread === 'pool')).map((s) => [s.engine.name, s.engine]),
);

export default async function runTask(task: PoolTask): Promise<PoolReply> {
  if (task.kind === 'ping') return { output: { findings: [] } };
  if (task.kind === 'prepare') return { facts: new FileAnalysis(Buffer.from(task.content)).prepare() };
  const engine = engines.get(task.engine);
  if (!engine) return { error: { name: 'Error', message: `engine "${task.engine}" does not run on the pool` } };
  try {
    const content = Buffer.from(task.subject.content);
    const file = new FileAnalysis(content, task.facts);
    const output = await engine.scan({ ...task.subject, content, file }, { signal: new AbortController().signal, budgetMs: task.budgetMs });
    return { output };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    return { error: { name: e.name, message: e.message } };
  }
}
