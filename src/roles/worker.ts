/**
 * Starts the `worker` role: the Temporal worker (every workflow and activity), the schedules it
 * relies on (`files-expiry`) and the run queue's cadence (src/flows/scheduler.ts).
 */
import type { Config } from '../config';
import type { Logger } from '../log';
import type { Services } from '../services';
import type { HealthPart } from '../health';
import { startRunQueueScheduler } from '../flows/scheduler';
import type { TemporalEngines } from './engines';
import { connectWorker } from '../../temporal/connection';
import { installTemporalRuntime, startWorker } from '../../temporal/worker';
import { ensureFileExpirySchedule } from '../../temporal/schedules';

export interface WorkerRole {
  health: HealthPart;
  /** Settles once the worker stops; rejects when it dies. */
  done: Promise<void>;
  stop(): Promise<void>;
}

export async function startWorkerRole(config: Config, services: Services, temporal: TemporalEngines, logger: Logger): Promise<WorkerRole> {
  await installTemporalRuntime(logger);
  const connection = await connectWorker(config);
  const worker = await startWorker(config, connection, services, logger.child({ component: 'worker' }));
  try {
    await ensureFileExpirySchedule(temporal.client, config.temporalTaskQueue);
  } catch (err) {
    await worker.shutdown();
    await connection.close();
    throw err;
  }
  const scheduler = startRunQueueScheduler({ pass: () => services.admission.pass(), sweep: () => services.runs.sweep() }, logger);
  return {
    health: {
      name: 'worker',
      probe: async () => { if (worker.worker.getState() !== 'RUNNING') throw new Error(`worker is ${worker.worker.getState()}`); },
    },
    done: worker.done,
    stop: async () => {
      scheduler.stop();
      await worker.shutdown();
      await connection.close();
    },
  };
}
