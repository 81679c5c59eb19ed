/**
 * The `worker` role: a Temporal worker running the workflows under workflows/ (bundled for the
 * sandbox at start) and the activities under activities/.
 */
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { Config } from '../src/config';
import type { Logger } from '../src/log';
import { createActivities, ActivityDeps } from '../activities';
import { WORKER_ACTIVITY_SLOTS } from './limits';

/** Routes the SDK's own logs (worker state, workflow and activity logs) into pino. Once per process. */
let runtimeInstalled = false;
export function installTemporalRuntime(logger: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const log = logger.child({ component: 'temporal-sdk' });
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => {
      const meta = { ...entry.meta };
      const level = entry.level === 'TRACE' ? 'trace' : entry.level === 'DEBUG' ? 'debug' : entry.level === 'INFO' ? 'info' : entry.level === 'WARN' ? 'warn' : 'error';
      log[level](meta, entry.message);
    }),
  });
}

export interface RunningWorker { worker: Worker; done: Promise<void>; shutdown(): Promise<void> }

export async function startWorker(config: Config, connection: NativeConnection, deps: ActivityDeps, logger: Logger): Promise<RunningWorker> {
  const started = Date.now();
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: path.join(config.rootDir, 'workflows', 'index.ts'),
    logger: { trace() {}, debug() {}, info() {}, warn: (m) => logger.warn(m), error: (m) => logger.error(m), log() {} },
  });
  logger.info({ ms: Date.now() - started }, 'workflow bundle built');
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.temporalTaskQueue,
    workflowBundle,
    activities: createActivities(deps),
    // Node activities mostly wait on I/O; one account can hold at most half of these (temporal/limits.ts).
    maxConcurrentActivityTaskExecutions: WORKER_ACTIVITY_SLOTS,
    shutdownGraceTime: '10s',
  });
  const done = worker.run();
  return {
    worker,
    done,
    shutdown: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done.catch(() => undefined);
    },
  };
}
