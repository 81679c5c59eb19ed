/**
 * The one way the product starts Temporal work: an engine per capability (scans, file transfers,
 * user runs), each owning its workflow names and ids. Services receive them through the
 * capability's own interface and never hold the client.
 */
import type { Client } from '@temporalio/client';
import { TemporalFileEngine } from './files';
import { TemporalRunEngine } from './runs';
import { TemporalScanEngine } from './scans';
import type { WorkflowEngines } from '../../src/services';

/** Settings the workflows take as input (workflow code reads no configuration of its own). */
export interface WorkflowSettings {
  /** ACTIVITY_HEARTBEAT_TIMEOUT_S: how soon a killed worker's scan or file activity is retried elsewhere. */
  activityHeartbeatTimeoutMs?: number;
}

export function temporalEngines(client: Client, taskQueue: string, settings: WorkflowSettings = {}): WorkflowEngines {
  return {
    scans: new TemporalScanEngine(client, taskQueue, settings.activityHeartbeatTimeoutMs),
    files: new TemporalFileEngine(client, taskQueue, settings.activityHeartbeatTimeoutMs),
    runs: new TemporalRunEngine(client, taskQueue),
  };
}
