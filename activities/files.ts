/** File-transfer activities: scan and deliver or block, make a clip, fail a file, sweep expired files. */
import { Context } from '@temporalio/activity';
import type { FileService } from '../src/files/service';

/** Heartbeats while `work` runs, so a dead worker is noticed after the heartbeat timeout. */
async function beating<T>(work: () => Promise<T>): Promise<T> {
  const beat = setInterval(() => Context.current().heartbeat(), 5_000);
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}

export function createFileActivities(files: FileService) {
  return {
    scanTransferFile: (fileId: string) => beating(() => files.scanFile(fileId)),
    makeClip: (fileId: string) => beating(() => files.processClip(fileId)),
    failTransferFile: (fileId: string, reason: string) => files.fail(fileId, reason),
    expireFiles: () => files.expire(),
  };
}

export type FileActivities = ReturnType<typeof createFileActivities>;
