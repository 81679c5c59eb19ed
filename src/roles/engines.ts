/**
 * The Temporal client of a process that starts durable work (api, worker): the engines every
 * capability starts its workflows through (temporal/engines/), a health probe and its close.
 */
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { WorkflowEngines } from '../services';
import { connectClient, pingTemporal } from '../../temporal/connection';
import { temporalEngines } from '../../temporal/engines';

export interface TemporalEngines {
  engines: WorkflowEngines;
  /** For the worker role's schedules only; services get `engines`. */
  client: Client;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function connectTemporalEngines(config: Config): Promise<TemporalEngines> {
  const client = await connectClient(config);
  return {
    engines: temporalEngines(client, config.temporalTaskQueue, { activityHeartbeatTimeoutMs: config.activityHeartbeatTimeoutMs }),
    client,
    ping: () => pingTemporal(client, config.temporalNamespace),
    close: () => client.connection.close(),
  };
}
