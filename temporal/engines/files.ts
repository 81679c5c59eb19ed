/** File transfers on Temporal: one `fileTransfer` execution per file, workflow id `file-<fileId>`. */
import type { Client } from '@temporalio/client';
import type { FileWorkflows } from '../../src/files/service';

export class TemporalFileEngine implements FileWorkflows {
  constructor(private readonly client: Client, private readonly taskQueue: string) {}

  async startFileWorkflow(fileId: string): Promise<void> {
    await this.client.workflow.start('fileTransfer', { taskQueue: this.taskQueue, workflowId: `file-${fileId}`, args: [{ fileId }] });
  }
}
