/**
 * The fileTransfer workflow (workflows/files.ts) on Temporal's time-skipping test server with
 * fake activities: a clip goes on to clip making, a plain file does not, and a file whose
 * activity keeps failing ends `failed` once its retries are used up.
 */
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { timeSkippingEnv } from '../../support/time-skipping';
import { Worker } from '@temporalio/worker';
import type { FileActivities } from '../../../activities/files';

const ROOT = path.resolve(__dirname, '../../..');

describe('fileTransfer workflow', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await timeSkippingEnv();
  }, 120_000);
  afterAll(async () => { await env?.teardown(); });

  async function run(activities: Partial<FileActivities>, fileId: string): Promise<unknown> {
    const worker = await Worker.create({
      connection: env.nativeConnection, taskQueue: `files-${fileId}`, workflowsPath: path.join(ROOT, 'workflows', 'files.ts'), activities,
    });
    return worker.runUntil(env.client.workflow.execute('fileTransfer', { taskQueue: `files-${fileId}`, workflowId: `file-${fileId}`, args: [{ fileId }] }));
  }

  it('makes a clip after a clean scan, and nothing more for a plain file', async () => {
    const calls: string[] = [];
    const activities: Partial<FileActivities> = {
      scanTransferFile: async (id) => { calls.push(`scan ${id}`); return { next: id === 'clip1' ? 'clip' : 'done' }; },
      makeClip: async (id) => { calls.push(`clip ${id}`); },
      failTransferFile: async (id) => { calls.push(`fail ${id}`); },
    };
    await run(activities, 'clip1');
    await run(activities, 'file1');
    expect(calls).toEqual(['scan clip1', 'clip clip1', 'scan file1']);
  }, 120_000);

  it('retries a failing scan, then marks the file failed so it never stays scanning', async () => {
    let attempts = 0;
    const failed: string[] = [];
    const activities: Partial<FileActivities> = {
      scanTransferFile: async () => { attempts += 1; throw new Error('MongoDB unreachable'); },
      failTransferFile: async (id, reason) => { failed.push(`${id}: ${reason}`); },
    };
    await expect(run(activities, 'broken1')).rejects.toThrow();
    expect(attempts).toBe(5);
    expect(failed).toEqual(['broken1: The file could not be scanned or processed']);
  }, 120_000);
});
