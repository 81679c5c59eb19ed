/**
 * Run trees and tenants on the real stack (issue 34, 2b): a forEach over its own workflow stops
 * at the nesting limit with its child runs in the record, a cancel stops a whole tree, and one
 * account that fills its plan's concurrency with slow nodes leaves another account's run to go
 * through. Slow nodes are `http` requests to a local server that holds every request until the
 * test lets it go, so nothing here depends on the machine's speed: the waits are bounded, the
 * checks are about what has (and has not) happened meanwhile.
 */
import http from 'node:http';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { api, newAccount, stack } from '../../support/env';
import { ROOT } from '../../support/service';
import { until } from '../mqtt/support';
import { createWorkflow, node, startRun, transform, waitForRun } from './helpers';

jest.setTimeout(600_000);

/** Executions in the test stack's Temporal whose workflow id starts with `prefix`. */
function temporalCount(query: string): Promise<number> {
  return new Promise<number>((resolve, reject) => execFile(path.join(ROOT, '.tools', 'bin', 'temporal'), [
    'workflow', 'count', '--address', `127.0.0.1:${stack().temporalPort}`, '--query', query, '--output', 'json',
  ], (err, stdout) => (err ? reject(err) : resolve(Number((JSON.parse(stdout) as { count?: string | number }).count ?? 0)))));
}

/** Answers nothing until `release()`: each request it holds is a node execution in flight. */
let held: http.ServerResponse[] = [];
let releasing = false;
let server: http.Server;
let slowUrl: string;
const release = () => {
  for (const res of held) res.end('{"ok":true}');
  held = [];
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (releasing) res.end('{"ok":true}');
    else held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  slowUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/slow`;
});

afterAll(async () => {
  releasing = true;
  release();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const slowHttp = (id: string) => ({ id, type: 'http', config: { method: 'GET', url: slowUrl }, timeout_ms: 240_000 });

it('a forEach over its own workflow (on_error: continue) fails at child depth 11 after a few dozen child runs, and its node shows them', async () => {
  const { apiKey, accountId } = await newAccount('pro', 'fanout-self');
  const wf = await createWorkflow(apiKey, { name: 'self', nodes: [transform('placeholder', '1')], edges: [] });
  const put = await api('PUT', `/api/workflows/${wf}`, {
    key: apiKey, body: { name: 'self', nodes: [{ id: 'each', type: 'forEach', config: { items: '[1, 2]', do: { workflow_id: wf } }, on_error: 'continue' }], edges: [] },
  });
  expect(put.status).toBe(200);
  const runId = await startRun(apiKey, wf);
  const run = await waitForRun(apiKey, runId);
  expect(run.status).toBe('failed');
  expect(run.error).toBe('Node "each" failed: forEach child run nesting depth 11 exceeds the maximum of 10 (flow.call and forEach child runs count together)');
  expect(run.childRuns).toBeGreaterThanOrEqual(20);
  expect(run.childRuns).toBeLessThanOrEqual(38);
  const each = node(run, 'each');
  expect(each.status).toBe('failed');
  expect(each.childRuns.started).toBeGreaterThanOrEqual(1);
  expect(each.childRuns.failed).toBeGreaterThanOrEqual(1);
  expect(run.log.some((l: { node?: string; message: string }) => l.node === 'each' && l.message.startsWith('forEach started '))).toBe(true);
  // Child runs and their batch workflows, not thousands.
  expect(await temporalCount(`WorkflowId STARTS_WITH "run-${runId}."`)).toBeLessThanOrEqual(80);
  // The account is the fairness key of the run and, inherited, of its child runs.
  const connection = await Connection.connect({ address: `127.0.0.1:${stack().temporalPort}` });
  try {
    const client = new Client({ connection });
    for (const id of [`run-${runId}`, `run-${runId}.each.1.batch-0`, `run-${runId}.each.1.0`]) {
      expect((await client.workflow.getHandle(id).describe()).priority?.fairnessKey).toBe(accountId);
    }
  } finally {
    await connection.close();
  }
});

it('cancelling a run stops its whole tree: the run is cancelled, its forEach shows the child runs, none is left running', async () => {
  const { apiKey } = await newAccount('pro', 'fanout-cancel');
  const child = await createWorkflow(apiKey, { name: 'slow child', nodes: [slowHttp('wait')], edges: [] });
  const wf = await createWorkflow(apiKey, { name: 'tree', nodes: [{ id: 'each', type: 'forEach', config: { items: '[1..50]', do: { workflow_id: child } } }], edges: [] });
  const runId = await startRun(apiKey, wf);
  // The run's width: ten child runs at once, each holding one request.
  await until(async () => (held.length >= 10 ? true : undefined), 60_000, 'ten child runs in flight');
  const cancel = await api('POST', `/api/workflows/runs/${runId}/cancel`, { key: apiKey });
  expect(cancel.status).toBe(200);
  const run = await waitForRun(apiKey, runId, 60_000);
  expect(run.status).toBe('cancelled');
  expect(node(run, 'each').status).toBe('cancelled');
  expect(node(run, 'each').childRuns.started).toBe(10);
  expect(run.childRuns).toBe(50);
  await until(async () => ((await temporalCount(`WorkflowId STARTS_WITH "run-${runId}." AND ExecutionStatus = "Running"`)) === 0 ? true : undefined), 60_000, 'no child run left running');
  release();
});

it('one account filling its plan\'s concurrency with slow nodes holds at most 10 per run, and another account\'s one-node run goes through meanwhile', async () => {
  const busy = await newAccount('pro', 'fanout-busy');
  const other = await newAccount('free', 'fanout-other');
  // Twelve parallel slow nodes per run; pro runs 50 at once.
  const wide = await createWorkflow(busy.apiKey, { name: 'wide', nodes: Array.from({ length: 12 }, (_, i) => slowHttp(`h${i}`)), edges: [] });
  const busyRuns: string[] = [];
  for (let i = 0; i < 50; i++) busyRuns.push(await startRun(busy.apiKey, wide));
  await until(async () => (held.length >= 500 ? true : undefined), 400_000, 'the busy account\'s 500 requests in flight').catch((err: Error) => {
    throw new Error(`${err.message} (${held.length} held)`);
  });

  const quick = await createWorkflow(other.apiKey, { name: 'quick', nodes: [transform('one', '1 + 1')], edges: [] });
  const quickRun = await waitForRun(other.apiKey, await startRun(other.apiKey, quick), 60_000);
  expect(quickRun.status).toBe('completed');
  expect(node(quickRun, 'one').output).toBe(2);
  // Meanwhile the busy account's runs were all still waiting, ten nodes each and never more.
  expect(held.length).toBe(500);
  const states = await Promise.all(busyRuns.map(async (id) => (await api('GET', `/api/workflows/runs/${id}`, { key: busy.apiKey })).body.status));
  expect(states.every((s) => s === 'running')).toBe(true);

  releasing = true;
  release();
  for (const id of busyRuns) expect((await waitForRun(busy.apiKey, id)).status).toBe('completed');
  releasing = false;
});
