/**
 * Temporal Schedules the service relies on, created idempotently when a worker starts: every
 * worker replica tries, the first creates it, the others find it already there.
 */
import { Client, ScheduleAlreadyRunning } from '@temporalio/client';

/** Deletes expired files (records and bytes) every hour: src/files/service.ts `expire`. */
export const FILE_EXPIRY_SCHEDULE_ID = 'files-expiry';

export async function ensureFileExpirySchedule(client: Client, taskQueue: string): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: FILE_EXPIRY_SCHEDULE_ID,
      spec: { intervals: [{ every: '1 hour' }] },
      action: { type: 'startWorkflow', workflowType: 'expireFiles', taskQueue, args: [] },
      // A sweep that is still running makes the next one pointless.
      policies: { overlap: 'SKIP' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
