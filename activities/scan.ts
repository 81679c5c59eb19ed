/** Scan activities: run a deferred scan to completion, send a scan webhook. */
import { Context } from '@temporalio/activity';
import type { ScanService } from '../src/scan/service';

export function createScanActivities(scans: ScanService) {
  return {
    async completeDeferredScan(scanId: string): Promise<{ webhook: boolean }> {
      const beat = setInterval(() => Context.current().heartbeat(), 5_000);
      try {
        return await scans.completeDeferred(scanId);
      } finally {
        clearInterval(beat);
      }
    },
    async sendScanWebhook(scanId: string): Promise<{ sent: boolean; status?: number; error?: string }> {
      return scans.sendWebhook(scanId);
    },
  };
}

export type ScanActivities = ReturnType<typeof createScanActivities>;
