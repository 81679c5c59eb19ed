/**
 * A run whose launch was lost with its process (its record says `running`, Temporal never heard
 * of it) is started by the worker's sweeper under its own workflow id, and completes once (the
 * rule that a young record is left to its launch is unit-tested: here it would hang on timing).
 */
import { randomUUID } from 'node:crypto';
import { newAccount } from '../../support/env';
import { withStackRecords } from '../../support/db';
import { createWorkflow, node, startRun, transform, waitForRun } from './helpers';

jest.setTimeout(300_000);

it('the sweeper starts a run whose launch was lost, and it completes once', async () => {
  const { apiKey, accountId } = await newAccount('pro', 'lost-launch');
  const flowId = await createWorkflow(apiKey, { name: 'lost', nodes: [transform('t', 'input.n * 2')], edges: [] });
  const template = await startRun(apiKey, flowId, { n: 1 });
  expect((await waitForRun(apiKey, template)).status).toBe('completed');
  // What a process killed between writing the record and Temporal's answer leaves behind.
  const lost = randomUUID();
  await withStackRecords(async ({ stores }) => {
    const doc = await stores.runs.get(accountId, template);
    if (!doc) throw new Error(`run ${template} is not in the store`);
    const at = (ageMs: number) => new Date(Date.now() - ageMs);
    await stores.runs.insert({
      ...doc, _id: lost, status: 'running', input: '{"n":21}', error: null, log: [], outputBytes: 0,
      nodes: { t: { status: 'pending', executions: 0, attempts: 0, durationMs: 0, outputBytes: 0 } },
      queuedAt: at(120_000), startedAt: at(120_000), finishedAt: null, deadline: new Date(at(120_000).getTime() + 600_000),
      temporal: { workflowId: `run-${lost}`, runId: null },
    });
  });
  const run = await waitForRun(apiKey, lost, 120_000);
  expect(run.status).toBe('completed');
  expect(node(run, 't')).toMatchObject({ status: 'completed', executions: 1 });
  expect(run.output).toEqual({ t: 42 });
  expect((run.temporal as { runId: string | null }).runId).toEqual(expect.any(String));
});
