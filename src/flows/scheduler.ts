/**
 * The run queue's cadence, started by the worker role: the admission pass (at start, then every
 * 5 s) expires runs queued for an hour, frees slots of runs whose process died and starts queued
 * runs; the sweep (every 30 s) settles runs whose execution ended without writing its end (the
 * 10-minute timeout). Timers in the process rather than a Temporal schedule as `files-expiry` is:
 * a schedule firing every 5 s would add some 17,000 workflow executions a day to the history for
 * a pass that only reads and updates the run queue.
 */
import type { Logger } from '../log';

export const ADMISSION_PASS_EVERY_MS = 5_000;
export const RUN_SWEEP_EVERY_MS = 30_000;

export interface RunQueueWork {
  pass(): Promise<unknown>;
  sweep(): Promise<unknown>;
}

export interface RunQueueScheduler {
  stop(): void;
}

export function startRunQueueScheduler(work: RunQueueWork, logger: Logger): RunQueueScheduler {
  const promote = () => { work.pass().catch((err: unknown) => logger.warn({ err }, 'workflow run admission pass failed')); };
  const sweep = () => { work.sweep().catch((err: unknown) => logger.warn({ err }, 'workflow run sweep failed')); };
  promote();
  const timers = [setInterval(promote, ADMISSION_PASS_EVERY_MS), setInterval(sweep, RUN_SWEEP_EVERY_MS)];
  // Neither timer keeps the process alive on its own: the role's stop ends them.
  for (const t of timers) t.unref();
  return { stop: () => { for (const t of timers) clearInterval(t); } };
}
