/** File transfers on Temporal: one `fileTransfer` execution per file, workflow id `file-<fileId>`. */
import type { Client } from '@temporalio/client';
import type { FileWorkflows } from '../../src/files/service';
import type { FileWorkflowInput } from '../../workflows/files';

export class TemporalFileEngine implements FileWorkflows {
  constructor(private readonly client: Client, private readonly taskQueue: string, private readonly heartbeatTimeoutMs?: number) {}

  async startFileWorkflow(fileId: string): Promise<void> {
    const input: FileWorkflowInput = { fileId, heartbeatTimeoutMs: this.heartbeatTimeoutMs };
    await this.client.workflow.start('fileTransfer', { taskQueue: this.taskQueue, workflowId: `file-${fileId}`, args: [input] });
  }
}
