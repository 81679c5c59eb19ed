/**
 * Admission of workflow runs from outside, against the real stack: plan quotas, the run rate
 * limit, concurrency with a FIFO queue, the queue bounds and expiry, and device-event triggers
 * over HTTP and MQTT. Counters and queue records the API cannot fill quickly are set in the
 * service's own store (support/db.ts).
 */
import { api, clearOfWindowEdge, Json, newAccount, stack } from '../../support/env';
import { withStackRecords } from '../../support/db';
import type { RunDoc } from '../../../src/flows/records';
import { placeholders } from '../../../src/storage/sqlite';
import { connect, newDevice, topicsOf, until } from '../mqtt/support';
import { createWorkflow, waitForRun } from './helpers';

jest.setTimeout(300_000);

const month = () => new Date().toISOString().slice(0, 7);
const transformDef = (name: string, extra: Record<string, unknown> = {}) => ({ name, nodes: [{ id: 'a', type: 'transform', config: { expression: '1' } }], edges: [], ...extra });

async function run(key: string, workflowId: string, input?: unknown) {
  return api('POST', `/api/workflows/${workflowId}/run`, { key, body: input === undefined ? {} : { input } });
}

/** A run record of the account, as admission writes it. */
const runRecord = (id: string, accountId: string, fields: Pick<RunDoc, 'workflowId' | 'workflowName' | 'status' | 'queuedAt' | 'startedAt' | 'deadline'>): RunDoc => ({
  _id: id, accountId, trigger: { type: 'manual' }, input: 'null', error: null, log: [], nodes: {}, nodeOrder: [], terminalNodes: [],
  outputBytes: 0, finishedAt: null, temporal: { workflowId: `run-${id}`, runId: null }, ...fields,
});

/** Fills the account's concurrency slots with runs that look running (for queue tests). */
async function holdSlots(accountId: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `hold-${accountId}-${i}`);
  const now = new Date();
  await withStackRecords(async ({ stores }) => {
    for (const id of ids) {
      await stores.runs.insert(runRecord(id, accountId, {
        workflowId: 'wf_held', workflowName: 'held', status: 'running', queuedAt: now, startedAt: now, deadline: new Date(now.getTime() + 600_000),
      }));
      if (!(await stores.slots.claim(accountId, id, n, now))) throw new Error(`slot for ${id} not free`);
    }
  });
  return ids;
}

/** Ends the held runs as the interpreter would: final record, then the slot is free. */
async function releaseSlots(ids: string[]): Promise<void> {
  await withStackRecords(async ({ stores }) => {
    for (const id of ids) {
      await stores.runs.finish(id, { status: 'completed', error: null, finishedAt: new Date() });
      await stores.slots.release(id);
    }
  });
}

test('Free: the 6th workflow is 403 limit_reached with usage 5, limit 5, plan free', async () => {
  const { apiKey } = await newAccount('free', 'adm-wf-limit');
  for (let i = 0; i < 5; i++) await createWorkflow(apiKey, transformDef(`w${i}`));
  const r = await api('POST', '/api/workflows', { key: apiKey, body: transformDef('w6') });
  expect(r.status).toBe(403);
  expect(r.body).toMatchObject({ code: 'limit_reached', usage: 5, limit: 5, plan: 'free', error: 'Plan free, 5 of 5 workflows: workflow limit reached' });
});

test('Free: the 1,001st run of the month is 403 limit_reached', async () => {
  const { apiKey, accountId } = await newAccount('free', 'adm-run-quota');
  const wf = await createWorkflow(apiKey, transformDef('q'));
  await withStackRecords(({ stores }) => stores.counters.incrementUsage(
    { _id: `${accountId}:${month()}`, accountId, period: month(), kind: 'month' }, 'workflowRuns', 1_000,
  ));
  const r = await run(apiKey, wf);
  expect(r.status).toBe(403);
  expect(r.body).toMatchObject({ code: 'limit_reached', usage: 1_000, limit: 1_000, plan: 'free' });
  expect(r.body.error).toMatch(/limit reached$/);
});

test('Free (2 concurrent): 5 runs of a delay workflow are 2 running and 3 queued, and all complete in FIFO order', async () => {
  const { apiKey } = await newAccount('free', 'adm-fifo');
  const wf = await createWorkflow(apiKey, { name: 'slow', nodes: [{ id: 'wait', type: 'delay', config: { ms: 3_000 } }], edges: [] });
  const started = [];
  for (let i = 0; i < 5; i++) {
    const r = await run(apiKey, wf, i);
    expect(r.status).toBe(202);
    started.push(r.body);
  }
  expect(started.map((s: Json) => s.status)).toEqual(['running', 'running', 'queued', 'queued', 'queued']);
  const usage = await api('GET', '/api/account/usage', { key: apiKey });
  expect(usage.body.workflows).toMatchObject({ running: 2, queued: 3, max_concurrent_runs: 2, runs_this_month: 5 });
  const done = [];
  for (const s of started) done.push(await waitForRun(apiKey, s.runId));
  expect(done.map((d) => d.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
  const starts = done.map((d) => Date.parse(d.startedAt));
  // FIFO: the queued runs started in the order they were queued, each after a slot freed.
  expect(starts[2]).toBeLessThanOrEqual(starts[3]);
  expect(starts[3]).toBeLessThanOrEqual(starts[4]);
  expect(starts[2]).toBeGreaterThanOrEqual(Math.min(Date.parse(done[0].finishedAt), Date.parse(done[1].finishedAt)));
  const after = await api('GET', '/api/account/usage', { key: apiKey });
  expect(after.body.workflows).toMatchObject({ running: 0, queued: 0 });
});

test('61 run requests in a minute: the 61st is 429 with Retry-After', async () => {
  const { apiKey } = await newAccount('pro', 'adm-rate');
  // Each request fails its input check (422) after being counted, so no runs pile up.
  const wf = await createWorkflow(apiKey, transformDef('rate', { input_schema: { type: 'number' } }));
  await clearOfWindowEdge(60_000, 30_000);
  const codes: number[] = [];
  for (let i = 0; i < 60; i++) codes.push((await run(apiKey, wf, 'not a number')).status);
  expect(codes.every((c) => c === 422)).toBe(true);
  const r = await run(apiKey, wf, 'not a number');
  expect(r.status).toBe(429);
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(r.body).toMatchObject({ code: 'rate_limited', requestId: expect.any(String) });
});

test('a full account queue answers 503 queue_full with Retry-After; a queued run aged past an hour expires and never starts', async () => {
  const { apiKey, accountId } = await newAccount('free', 'adm-queue');
  const wf = await createWorkflow(apiKey, transformDef('queued'));
  const held = await holdSlots(accountId, 2);
  const queued = await run(apiKey, wf);
  expect(queued.body.status).toBe('queued');
  // The rest of the account's 500 places, in the store.
  const fillers = Array.from({ length: 499 }, (_, i) => `fill-${accountId}-${i}`);
  const now = new Date();
  await withStackRecords(async ({ stores }) => {
    for (const id of fillers) {
      await stores.runs.enqueue(runRecord(id, accountId, { workflowId: wf, workflowName: 'queued', status: 'queued', queuedAt: now, startedAt: null, deadline: null }));
    }
  });
  const full = await run(apiKey, wf);
  expect(full.status).toBe(503);
  expect(full.body).toMatchObject({ error: 'Service Unavailable', code: 'queue_full' });
  expect(Number(full.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  await withStackRecords(async ({ table }) => {
    const ids = `id IN (${placeholders(fillers.length)})`;
    table('workflow_run_queue').deleteWhere(ids, fillers);
    table('workflow_runs').deleteWhere(ids, fillers);
    const aged = table<RunDoc>('workflow_runs').update(queued.body.runId, (r) => ({ ...r, queuedAt: new Date(Date.now() - 61 * 60_000) }));
    expect(aged?.status).toBe('queued');
  });
  // Slots free: the aged run must expire, not start.
  await releaseSlots(held);
  const ended = await waitForRun(apiKey, queued.body.runId, 60_000);
  expect(ended).toMatchObject({ status: 'expired', startedAt: null });
  expect(ended.nodes[0]).toMatchObject({ status: 'pending', executions: 0 });
});

test('a publish tagged alarm over HTTP and over MQTT starts the exposed workflow with the message as input; runs this month unchanged', async () => {
  const { apiKey, accountId } = await newAccount('pro', 'adm-trigger');
  const device = await newDevice(accountId, 'panel');
  const wf = await createWorkflow(apiKey, {
    name: 'on alarm', exposed: true, trigger: { tags: ['alarm'], match: 'any' },
    nodes: [{ id: 'echo', type: 'transform', config: { expression: 'input.message.data' } }], edges: [],
  });
  await createWorkflow(apiKey, { ...transformDef('not exposed'), trigger: { tags: ['alarm'], match: 'any' } });
  const runsOf = async (): Promise<Json[]> => (await api('GET', `/api/workflows/${wf}/runs`, { key: apiKey })).body.runs;

  const sent = await api('POST', '/api/entities/message', { key: device.apiKey, body: { msg_type: 'publish', data: { level: 3 }, context: { tags: ['alarm'] } } });
  expect(sent.status).toBe(200);
  const viaHttp = await until(async () => (await runsOf()).find((r) => r.trigger.messageId === sent.body.content), 60_000, 'a run for the HTTP publish');
  const httpRun = await waitForRun(apiKey, viaHttp.runId);
  expect(httpRun).toMatchObject({ status: 'completed', trigger: { type: 'device_event', messageId: sent.body.content }, output: { echo: { level: 3 } } });
  expect(httpRun.input.message).toMatchObject({ id: sent.body.content, source: device.resourcePath, data: { level: 3 }, tags: ['alarm'], timestamp: expect.any(String) });

  const client = await connect(stack().mqttUrl, device);
  try {
    const marker = `m-${Date.now()}`;
    await client.publishAsync((await topicsOf(device)).publish, JSON.stringify({ msg_type: 'publish', data: { marker }, context: { tags: ['alarm', 'other'] } }), { qos: 1 });
    const viaMqtt = await until(async () => {
      for (const r of await runsOf()) {
        if (r.runId === viaHttp.runId) continue;
        const full = await api('GET', `/api/workflows/runs/${r.runId}`, { key: apiKey });
        if (full.body.input?.message?.data?.marker === marker) return full.body;
      }
      return undefined;
    }, 60_000, 'a run for the MQTT publish');
    expect(viaMqtt.trigger.type).toBe('device_event');
    expect(await waitForRun(apiKey, viaMqtt.runId)).toMatchObject({ status: 'completed', output: { echo: { marker } } });
  } finally {
    await client.endAsync();
  }
  expect((await runsOf()).length).toBe(2);
  const usage = await api('GET', '/api/account/usage', { key: apiKey });
  // Not counted in the month's runs; each transform execution is at least one compute unit.
  expect(usage.body.workflows.runs_this_month).toBe(0);
  expect(usage.body.workflows.compute_units).toBeGreaterThanOrEqual(2);
});

test('60 exposed workflows on one tag: a publish starts the 50 oldest', async () => {
  const { apiKey, accountId } = await newAccount('pro', 'adm-fanout');
  const device = await newDevice(accountId, 'siren');
  // Past the 30-per-minute write limit, so the definitions go in through the store.
  const def = { name: 'fan', exposed: true, trigger: { tags: ['fire'], match: 'all' as const }, nodes: [{ id: 'a', type: 'transform', config: { expression: '1' } }], edges: [] };
  const base = Date.now() - 60_000;
  const ids = Array.from({ length: 60 }, (_, i) => `wf_fanout_${accountId}_${String(i).padStart(2, '0')}`);
  await withStackRecords(async ({ stores }) => {
    for (const [i, id] of ids.entries()) {
      await stores.workflows.insert({
        _id: id, accountId, name: `fan ${i}`, enabled: true, exposed: true, trigger: def.trigger,
        definition: JSON.stringify(def), createdAt: new Date(base + i), updatedAt: new Date(base + i),
      });
    }
  });
  const runsOfMessage = (messageId: string) => withStackRecords(async ({ table }) => table<RunDoc>('workflow_runs')
    .find("account_id = ? AND json_extract(doc, '$.trigger.messageId') = ?", [accountId, messageId]));
  const sent = await api('POST', '/api/entities/message', { key: device.apiKey, body: { msg_type: 'publish', data: { t: 90 }, context: { tags: ['fire', 'kitchen'] } } });
  expect(sent.status).toBe(200);
  const started = await until(async () => {
    const n = (await runsOfMessage(sent.body.content)).length;
    return n >= 50 ? n : undefined;
  }, 120_000, '50 runs for the message');
  expect(started).toBe(50);
  const flows = (await runsOfMessage(sent.body.content)).map((r) => r.workflowId);
  expect(flows.sort()).toEqual(ids.slice(0, 50));
});

describe('connector and vault quotas', () => {
  it('Free: the 3rd connector and the 6th vault entry are 403 limit_reached; replacing an entry is not a new one', async () => {
    const acct = await newAccount('free');
    const conn = (n: number) => api('POST', '/api/connectors', { key: acct.apiKey, body: { name: `c${n}`, type: 'aws', region: 'us-east-1', access_key_id: 'AKIAEXAMPLE', secret_access_key: 'secret-value' } });
    expect((await conn(1)).status).toBe(201);
    expect((await conn(2)).status).toBe(201);
    const third = await conn(3);
    expect(third.status).toBe(403);
    expect(third.body).toMatchObject({ code: 'limit_reached', usage: 2, limit: 2, plan: 'free' });
    expect(String(third.body.error)).toMatch(/limit reached$/);

    const put = (name: string) => api('POST', '/api/vault', { key: acct.apiKey, body: { name, value: 'v' } });
    for (let i = 1; i <= 5; i++) expect((await put(`K${i}`)).status).toBe(201);
    const sixth = await put('K6');
    expect(sixth.status).toBe(403);
    expect(sixth.body).toMatchObject({ code: 'limit_reached', usage: 5, limit: 5, plan: 'free' });
    expect((await put('K1')).status).toBe(200);
  });
});
