/**
 * Deferred scans and scan webhooks. Workflow ids derive from the scanId (`scan-<id>`,
 * `webhook-<id>`), so a repeated start never runs a second execution.
 */
import { log, proxyActivities } from '@temporalio/workflow';
import type { ScanActivities } from '../activities/scan';
import { FIXED_LIMITS } from '../src/accounts/plans';

/**
 * The analysis heartbeats; a worker killed mid-scan is noticed after the heartbeat timeout and
 * the activity (idempotent) runs again on another worker, so the scan completes once.
 */
const { completeDeferredScan } = proxyActivities<ScanActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '60 seconds',
  retry: { maximumAttempts: 5, initialInterval: '2 seconds', backoffCoefficient: 2 },
});

/** Webhooks are fire-and-forget: one attempt (the receiver's timeout plus room to record it), failures only logged. */
const { sendScanWebhook } = proxyActivities<ScanActivities>({
  startToCloseTimeout: FIXED_LIMITS.webhookTimeoutMs + 5_000,
  retry: { maximumAttempts: 1 },
});

export interface ScanWorkflowInput { scanId: string }

export async function deferredScan({ scanId }: ScanWorkflowInput): Promise<void> {
  const { webhook } = await completeDeferredScan(scanId);
  if (webhook) await scanWebhook({ scanId });
}

export async function scanWebhook({ scanId }: ScanWorkflowInput): Promise<void> {
  try {
    await sendScanWebhook(scanId);
  } catch (err) {
    log.warn('scan webhook activity failed; not retried', { scanId, error: String(err) });
  }
}
