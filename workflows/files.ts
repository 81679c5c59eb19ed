/**
 * File transfer: one workflow per file, id `file-<fileId>`, so a repeated start never runs a
 * second execution; and the expiry sweep the `files-expiry` schedule starts (temporal/schedules.ts).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { FileActivities } from '../activities/files';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from './heartbeat';

/**
 * Scanning and clip making heartbeat; a worker killed mid-way is noticed after the heartbeat
 * timeout (the input's, from ACTIVITY_HEARTBEAT_TIMEOUT_S; 60 s for a workflow started without
 * one) and the activity (idempotent) runs again on another worker, so the file completes once.
 */
const beating = (heartbeatTimeoutMs = DEFAULT_HEARTBEAT_TIMEOUT_MS) => proxyActivities<FileActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: heartbeatTimeoutMs,
  retry: { maximumAttempts: 5, initialInterval: '2 seconds', backoffCoefficient: 2 },
});

const { failTransferFile, expireFiles: sweepExpiredFiles } = proxyActivities<FileActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 10, initialInterval: '2 seconds', backoffCoefficient: 2 },
});

export interface FileWorkflowInput { fileId: string; heartbeatTimeoutMs?: number }

export async function fileTransfer({ fileId, heartbeatTimeoutMs }: FileWorkflowInput): Promise<void> {
  const { scanTransferFile, makeClip } = beating(heartbeatTimeoutMs);
  try {
    const { next } = await scanTransferFile(fileId);
    if (next === 'clip') await makeClip(fileId);
  } catch (err) {
    // Retries are used up: the record must not stay `scanning` for ever.
    await failTransferFile(fileId, 'The file could not be scanned or processed');
    throw err;
  }
}

export async function expireFiles(): Promise<{ deleted: number }> {
  return sweepExpiredFiles();
}
