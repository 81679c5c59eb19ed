/**
 * A scaled-out deployment in miniature for tests that kill workers: an api process that owns the
 * local stack, and worker processes pointed at it, sharing the secrets so either side can read
 * what the other wrote. The records are the api process's embedded store (the workers open the
 * same DATA_DIR), or with `extraEnv: { DATABASE_ENGINE: 'mongodb' }` its own local FerretDB.
 */
import { randomBytes } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { startServiceProcess, StartedService, storageEnvOf } from './service';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/log';
import { loadSecrets } from '../../src/secrets';
import { openDatabase } from '../../src/storage/engine';
import { createServices, Services } from '../../src/services';

export interface SplitStack {
  api: StartedService;
  workers: StartedService[];
  startWorker(): Promise<StartedService>;
  /** Runs `fn` with the service objects connected to the stack's database. */
  withServices<T>(fn: (s: Services) => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

/** `extraEnv`: more environment for the api process (the workers follow its storage engine). */
export async function startSplitStack(opts: { extraEnv?: Record<string, string> } = {}): Promise<SplitStack> {
  const shared = { ENTITY_KEY_SECRET: randomBytes(32).toString('hex'), DATA_ENCRYPTION_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' };
  const api = await startServiceProcess({ extraEnv: { ...opts.extraEnv, ...shared, ROLES: 'api,mqtt' } });
  const e = api.env;
  const workerEnv = {
    ...shared,
    ROLES: 'worker',
    ...storageEnvOf(e),
    TEMPORAL_ADDRESS: `127.0.0.1:${e.temporalPort}`,
    CLAMD_HOST: '127.0.0.1',
    CLAMD_PORT: String(e.clamdPort),
  };
  const workers: StartedService[] = [];
  const startWorker = async () => {
    const w = await startServiceProcess({ extraEnv: workerEnv });
    workers.push(w);
    return w;
  };
  await startWorker();
  return {
    api,
    workers,
    startWorker,
    withServices: async (fn) => {
      const config = loadConfig({ ...process.env, ...e.env, ...shared });
      const storage = await openDatabase(config);
      try {
        return await fn(createServices({ config, logger: createLogger('silent'), storage, secrets: loadSecrets(config) }));
      } finally {
        await storage.close();
      }
    },
    stop: async () => {
      for (const w of workers) await w.stop();
      await api.stop();
    },
  };
}

/** Waits (bounded) until an activity of the workflow has started on a worker. */
export async function activityStarted(handle: WorkflowHandle, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const d = await handle.describe();
    if (d.raw.pendingActivities?.some((a) => String(a.state) === 'PENDING_ACTIVITY_STATE_STARTED' || a.state === 2)) return;
    if (Date.now() > until) throw new Error('activity never started');
    await new Promise((r) => setTimeout(r, 50));
  }
}
