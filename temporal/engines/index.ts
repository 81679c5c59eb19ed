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

export function temporalEngines(client: Client, taskQueue: string): WorkflowEngines {
  return {
    scans: new TemporalScanEngine(client, taskQueue),
    files: new TemporalFileEngine(client, taskQueue),
    runs: new TemporalRunEngine(client, taskQueue),
  };
}
