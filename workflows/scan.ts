/**
 * Deferred scans and scan webhooks. Workflow ids derive from the scanId (`scan-<id>`,
 * `webhook-<id>`), so a repeated start never runs a second execution.
 */
import { log, proxyActivities } from '@temporalio/workflow';
import type { ScanActivities } from '../activities/scan';
import { FIXED_LIMITS } from '../src/accounts/plans';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from './heartbeat';

/**
 * The analysis heartbeats; a worker killed mid-scan is noticed after the heartbeat timeout (the
 * input's, from ACTIVITY_HEARTBEAT_TIMEOUT_S; 60 s for a workflow started without one) and the
 * activity (idempotent) runs again on another worker, so the scan completes once.
 */
const analysis = (heartbeatTimeoutMs = DEFAULT_HEARTBEAT_TIMEOUT_MS) => proxyActivities<ScanActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: heartbeatTimeoutMs,
  retry: { maximumAttempts: 5, initialInterval: '2 seconds', backoffCoefficient: 2 },
});

/** Webhooks are fire-and-forget: one attempt (the receiver's timeout plus room to record it), failures only logged. */
const { sendScanWebhook } = proxyActivities<ScanActivities>({
  startToCloseTimeout: FIXED_LIMITS.webhookTimeoutMs + 5_000,
  retry: { maximumAttempts: 1 },
});

export interface ScanWorkflowInput { scanId: string; heartbeatTimeoutMs?: number }

export async function deferredScan({ scanId, heartbeatTimeoutMs }: ScanWorkflowInput): Promise<void> {
  const { webhook } = await analysis(heartbeatTimeoutMs).completeDeferredScan(scanId);
  if (webhook) await scanWebhook({ scanId });
}

export async function scanWebhook({ scanId }: ScanWorkflowInput): Promise<void> {
  try {
    await sendScanWebhook(scanId);
  } catch (err) {
    log.warn('scan webhook activity failed; not retried', { scanId, error: String(err) });
  }
}
