/**
 * Scans on Temporal: a deferred scan (`deferredScan`, workflow id `scan-<scanId>`) and the
 * delivery of a scan's webhook (`scanWebhook`, `webhook-<scanId>`), on the service's task queue.
 */
import type { Client } from '@temporalio/client';
import type { ScanWorkflows } from '../../src/scan/service';
import type { ScanWorkflowInput } from '../../workflows/scan';

export class TemporalScanEngine implements ScanWorkflows {
  constructor(private readonly client: Client, private readonly taskQueue: string, private readonly heartbeatTimeoutMs?: number) {}

  async startDeferredScan(scanId: string): Promise<void> {
    const input: ScanWorkflowInput = { scanId, heartbeatTimeoutMs: this.heartbeatTimeoutMs };
    await this.client.workflow.start('deferredScan', { taskQueue: this.taskQueue, workflowId: `scan-${scanId}`, args: [input] });
  }

  async startWebhook(scanId: string): Promise<void> {
    await this.client.workflow.start('scanWebhook', { taskQueue: this.taskQueue, workflowId: `webhook-${scanId}`, args: [{ scanId }] });
  }
}
