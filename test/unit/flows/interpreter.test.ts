/**
 * The interpreter workflow on Temporal's time-skipping test server (@temporalio/testing), with
 * the real activities and node kinds over in-memory stores: graph rules, limits, and the
 * 10-minute run timeout settled into the run record from outside the failed execution.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { timeSkippingEnv } from '../../support/time-skipping';
import { Worker, Runtime, DefaultLogger } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import { createFlowActivities } from '../../../activities/flows';
import { NodeRunner } from '../../../src/flows/node-runner';
import { ExpressionPool } from '../../../src/flows/expression-pool';
import type { NodeStat, OutputDoc, RunDoc, WorkflowDoc } from '../../../src/flows/records';
import { RunService, FlowService, RunEngine } from '../../../src/flows/service';
import type { FlowRunArgs } from '../../../workflows/flow';
import { RUN_TIMEOUT_ERROR } from '../../../src/flows/limits';
import { createLogger } from '../../../src/log';

jest.setTimeout(180_000);


class MemoryOutputs {
  docs = new Map<string, OutputDoc>();
  async save(runId: string, key: string, json: string) {
    this.docs.set(`${runId}/${key}`, { _id: `${runId}/${key}`, runId, key, bytes: Buffer.byteLength(json), json });
    return Buffer.byteLength(json);
  }
  async load(runId: string, key: string) { return this.docs.get(`${runId}/${key}`)?.json; }
  async read(doc: OutputDoc) { return doc.json as string; }
  async find(runId: string, keys: readonly string[]) { return keys.map((k) => this.docs.get(`${runId}/${k}`)).filter((d): d is OutputDoc => !!d); }
}

class MemoryRuns {
  docs = new Map<string, RunDoc>();
  async insert(doc: RunDoc) { this.docs.set(doc._id, doc); }
  async get(accountId: string, runId: string) { const d = this.docs.get(runId); return d && d.accountId === accountId ? d : null; }
  async list() { return [...this.docs.values()]; }
  async input(runId: string) { return this.docs.get(runId)?.input; }
  async recordProgress(runId: string, nodes: Record<string, NodeStat>) { const d = this.docs.get(runId); if (d) Object.assign(d.nodes, nodes); }
  async finish(runId: string, fields: Partial<RunDoc>, appendLog: RunDoc['log'] = []) {
    const d = this.docs.get(runId);
    if (!d || ['completed', 'failed', 'cancelled', 'expired'].includes(d.status)) return false;
    Object.assign(d, fields);
    d.log = [...d.log, ...appendLog];
    return true;
  }
  async reserveChildRuns(runId: string, count: number, limit: number) {
    const d = this.docs.get(runId);
    if (!d || (d.childRuns ?? 0) + count > limit) return false;
    d.childRuns = (d.childRuns ?? 0) + count;
    return true;
  }
  async overdue(before: Date) { return [...this.docs.values()].filter((d) => d.status === 'running' && d.deadline && d.deadline < before); }
}

const sent: Array<{ entity: string; data: unknown }> = [];
/** device.send calls in flight now and at most, and how long each is held (real time). */
const sending = { now: 0, max: 0, holdMs: 0 };
const flowDocs = new Map<string, WorkflowDoc>();
const saveFlow = (id: string, def: { nodes: unknown[]; edges: unknown[] }) => flowDocs.set(id, {
  _id: id, accountId: 'acc', name: id, enabled: true, exposed: false, trigger: null, definition: JSON.stringify({ name: id, ...def }), createdAt: new Date(), updatedAt: new Date(),
});
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const outputs = new MemoryOutputs();
const expressions = new ExpressionPool();
const runs = new MemoryRuns();
const taskQueue = 'flows-test';

beforeAll(async () => {
  // Failed runs are expected here; the SDK's warning for each would bury the test output.
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  env = await timeSkippingEnv();
  const runner = new NodeRunner({
    outputs, runs, workflows: { get: async (_accountId, id) => flowDocs.get(id) ?? null },
    vault: { withSecrets: (_accountId, _definition, use) => use({}, { text: (s) => s }) },
    nodes: {
      expressions, allowHosts: [], logger: createLogger('silent'),
      snippets: { runSnippet: async () => { throw new Error('unused'); } },
      storage: { runS3: async () => { throw new Error('unused'); } },
      messenger: {
        sendToEntity: async (req) => {
          sent.push({ entity: req.entity, data: req.data });
          sending.now++;
          sending.max = Math.max(sending.max, sending.now);
          await new Promise((resolve) => setTimeout(resolve, sending.holdMs));
          sending.now--;
          return { messageId: req.messageId, duplicate: false };
        },
      },
      scanner: { scanPayload: async () => ({}), scanStoredFile: async () => ({}) },
    },
  });
  worker = await Worker.create({
    connection: env.nativeConnection, taskQueue,
    workflowsPath: require.resolve('../../../workflows/index.ts'),
    activities: createFlowActivities(runner),
  });
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
  await expressions.close();
});

let seq = 0;
async function run(def: Pick<FlowRunArgs, 'nodes' | 'edges'>, input: unknown = null) {
  const runId = `r${++seq}`;
  await runs.insert({
    _id: runId, accountId: 'acc', workflowId: 'wf', workflowName: 'test', trigger: { type: 'manual' }, status: 'running', input: JSON.stringify(input),
    error: null, log: [], nodes: {}, nodeOrder: def.nodes.map((n) => n.id), terminalNodes: [], outputBytes: 0,
    queuedAt: new Date(), startedAt: new Date(), finishedAt: null, deadline: new Date(Date.now() + 600_000), temporal: { workflowId: `run-${runId}`, runId: null },
  });
  const args: FlowRunArgs = { runId, accountId: 'acc', flowId: 'wf', nodes: def.nodes, edges: def.edges, depth: 0, deadline: (await env.currentTimeMs()) + 600_000, record: true };
  const handle = await env.client.workflow.start('flowRun', { taskQueue, workflowId: `run-${runId}`, args: [args], workflowExecutionTimeout: 600_000 });
  const error = await handle.result().then(() => undefined, (e: unknown) => e);
  const out = (id: string) => outputs.docs.get(`${runId}/${id}`)?.json;
  return { runId, record: runs.docs.get(runId) as RunDoc, error, out: (id: string) => (out(id) === undefined ? undefined : JSON.parse(out(id) as string)), handle };
}

const t = (id: string, expression: string, extra: Record<string, unknown> = {}) => ({ id, type: 'transform', config: { expression }, ...extra });

it('joins wait for every taken branch; a branch not taken is skipped and passes that on', async () => {
  const r = await run({
    nodes: [
      t('a', 'input.x'), { id: 'c', type: 'condition', config: { expression: 'nodes.a > 5' } },
      t('big', '"big"'), t('small', '"small"'), t('side', 'nodes.a * 10'),
      t('join', '[nodes.big, nodes.small, nodes.side]'),
      t('after_small', '"never"'),
    ],
    edges: [
      { from: 'a', to: 'c' }, { from: 'c', to: 'big', when: 'true' }, { from: 'c', to: 'small', when: 'false' },
      { from: 'a', to: 'side' }, { from: 'big', to: 'join' }, { from: 'small', to: 'join' }, { from: 'side', to: 'join' },
      { from: 'small', to: 'after_small' },
    ],
  }, { x: 7 });
  expect(r.error).toBeUndefined();
  expect(r.record.status).toBe('completed');
  expect(r.out('join')).toEqual(['big', 70]);
  expect(r.record.nodes.small.status).toBe('skipped');
  expect(r.record.nodes.after_small.status).toBe('skipped');
  expect(r.record.nodes.join).toMatchObject({ status: 'completed', executions: 1 });
});

it('switch takes the matching case, else default', async () => {
  const def = {
    nodes: [{ id: 's', type: 'switch', config: { expression: 'input.kind' } }, t('a', '"a"'), t('other', '"other"')],
    edges: [{ from: 's', to: 'a', when: 'alpha' }, { from: 's', to: 'other', when: 'default' }],
  };
  const alpha = await run(def, { kind: 'alpha' });
  expect([alpha.record.nodes.a.status, alpha.record.nodes.other.status]).toEqual(['completed', 'skipped']);
  const beta = await run(def, { kind: 'beta' });
  expect([beta.record.nodes.a.status, beta.record.nodes.other.status]).toEqual(['skipped', 'completed']);
});

it('error edges catch a failure; on_error continue goes on; otherwise the run fails naming the node', async () => {
  const caught = await run({
    nodes: [t('bad', '$error("boom")'), t('handler', '"handled"'), t('normal', '"normal"')],
    edges: [{ from: 'bad', to: 'handler', when: 'error' }, { from: 'bad', to: 'normal' }],
  });
  expect(caught.record.status).toBe('completed');
  expect(caught.record.nodes.bad.status).toBe('failed');
  expect(caught.record.nodes.handler.status).toBe('completed');
  expect(caught.record.nodes.normal.status).toBe('skipped');

  const cont = await run({ nodes: [t('bad', '$error("boom")', { on_error: 'continue' }), t('next', '"went on"')], edges: [{ from: 'bad', to: 'next' }] });
  expect(cont.record.status).toBe('completed');
  expect(cont.out('next')).toBe('went on');

  const failed = await run({ nodes: [t('bad', '$error("boom")'), t('next', '1')], edges: [{ from: 'bad', to: 'next' }] });
  expect(failed.error).toBeInstanceOf(WorkflowFailedError);
  expect(failed.record.status).toBe('failed');
  expect(failed.record.error).toContain('Node "bad" failed');
  expect(failed.record.error).toContain('boom');
});

it('a loop runs a node at most 100 times; the 101st execution fails the run', async () => {
  const r = await run({
    nodes: [t('start', '0'), t('inc', '$exists(nodes.inc) ? nodes.inc + 1 : 1')],
    edges: [{ from: 'start', to: 'inc' }, { from: 'inc', to: 'inc' }],
  });
  expect(r.record.status).toBe('failed');
  expect(r.record.error).toBe('Node "inc" reached the node execution cap of 100 executions per run');
  expect(r.record.nodes.inc.executions).toBe(100);
  expect(r.out('inc')).toBe(100);
});

it('a loop that exits through a condition finishes', async () => {
  const r = await run({
    nodes: [t('start', '0'), t('inc', '$exists(nodes.inc) ? nodes.inc + 1 : 1'), { id: 'more', type: 'condition', config: { expression: 'nodes.inc < 5' } }, t('done', 'nodes.inc')],
    edges: [{ from: 'start', to: 'inc' }, { from: 'inc', to: 'more' }, { from: 'more', to: 'inc', when: 'true' }, { from: 'more', to: 'done', when: 'false' }],
  });
  expect(r.record.status).toBe('completed');
  expect(r.out('done')).toBe(5);
  expect(r.record.nodes.inc.executions).toBe(5);
});

it('caps timeout_ms and retry.max_attempts and logs each capping', async () => {
  const r = await run({ nodes: [t('slow', '1', { timeout_ms: 600_000, retry: { max_attempts: 9 } })], edges: [] });
  expect(r.record.status).toBe('completed');
  const messages = r.record.log.filter((l) => l.node === 'slow').map((l) => l.message);
  expect(messages).toEqual(expect.arrayContaining([
    'timeout_ms 600000 capped to the ceiling of 300000 ms',
    'retry.max_attempts 9 capped to the ceiling of 5',
  ]));
  expect(messages.some((m) => m.startsWith('retry.max_attempts 5 lowered to 1'))).toBe(true);
});

it('forEach over 12,000 items processes 10,000 and logs the truncation', async () => {
  const r = await run({
    nodes: [{ id: 'each', type: 'forEach', config: { items: '[1..12000]', max_items: 10_000, do: { type: 'transform', config: { expression: 'item * 2 + index' } } } }],
    edges: [],
  });
  expect(r.record.status).toBe('completed');
  const out = r.out('each') as number[];
  expect(out).toHaveLength(10_000);
  expect(out[0]).toBe(2);
  expect(out[9_999]).toBe(10_000 * 2 + 9_999);
  expect(r.record.log.map((l) => l.message)).toContain('forEach items truncated from 12000 to 10000');
});

it('forEach runs a child run per item, with the item as its input, and flow.call nests runs', async () => {
  saveFlow('double', { nodes: [t('twice', 'input * 2')], edges: [] });
  const r = await run({
    nodes: [
      { id: 'each', type: 'forEach', config: { items: 'input.list', do: { workflow_id: 'double' } } },
      { id: 'call', type: 'flow.call', config: { workflow_id: 'double', input: '{{ input.list[2] }}' } },
    ],
    edges: [],
  }, { list: [1, 2, 3, 4, 5] });
  expect(r.record.status).toBe('completed');
  expect(r.out('each')).toEqual([1, 2, 3, 4, 5].map((n) => ({ twice: n * 2 })));
  expect(r.out('call')).toEqual({ twice: 6 });
});

it('a long run continues-as-new and carries its state into the next execution', async () => {
  const n = 400;
  const nodes = Array.from({ length: n }, (_, i) => t(`n${i}`, i === 0 ? '1' : `nodes.n${i - 1} + 1`));
  const edges = Array.from({ length: n - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` }));
  const r = await run({ nodes, edges });
  expect(r.record.status).toBe('completed');
  expect(r.out(`n${n - 1}`)).toBe(n);
  expect(Object.values(r.record.nodes).filter((s) => s.status === 'completed')).toHaveLength(n);
  const first = await env.client.workflow.getHandle(`run-${r.runId}`, r.handle.firstExecutionRunId).describe();
  expect(first.status.name).toBe('CONTINUED_AS_NEW');
});

// Found by an outside probe: an http node whose three attempts all timed out showed `attempts: 1`.
it('a node whose every attempt times out reports all the attempts it ran', async () => {
  sending.holdMs = 5_000;
  try {
    const r = await run({ nodes: [{ id: 'slow', type: 'device.send', timeout_ms: 1_000, retry: { max_attempts: 3, backoff_ms: 100 }, config: { entity: 'dev', data: {} } }], edges: [] });
    expect(r.record.status).toBe('failed');
    expect(r.record.nodes.slow).toMatchObject({ status: 'failed', attempts: 3 });
    expect(r.record.nodes.slow.error).toBe('timed out after 1000 ms (its timeout_ms), still running or on a worker that stopped');
  } finally {
    sending.holdMs = 0;
    // The timed-out attempts' sends still run on the worker: let them end before the next test counts.
    for (let i = 0; i < 200 && sending.now > 0; i++) await new Promise((r) => setTimeout(r, 50));
    sending.max = 0;
  }
});

it('device.send hands the templated message to the message pipeline', async () => {
  sent.length = 0;
  const r = await run({ nodes: [{ id: 'send', type: 'device.send', config: { entity: 'dev-{{ input.n }}', data: { v: '{{ input.n * 2 }}' } } }], edges: [] }, { n: 4 });
  expect(r.record.status).toBe('completed');
  expect(sent).toEqual([{ entity: 'dev-4', data: { v: 8 } }]);
});

it('a delay past 10 minutes times the run out; the record says so, written from outside the execution', async () => {
  const r = await run({ nodes: [{ id: 'wait', type: 'delay', config: { ms: 11 * 60_000 } }, t('after', '1')], edges: [{ from: 'wait', to: 'after' }] });
  expect(r.error).toBeInstanceOf(WorkflowFailedError);
  expect((await r.handle.describe()).status.name).toBe('TIMED_OUT');
  // The execution could not write its end: the run is still `running` until settled, its
  // progress showing the delay that was under way.
  expect(r.record.status).toBe('running');
  expect(r.record.nodes.wait).toMatchObject({ status: 'running', executions: 1 });
  const engine: RunEngine = {
    start: async () => undefined,
    cancel: async () => undefined,
    outcome: async (runId) => ((await env.client.workflow.getHandle(`run-${runId}`).describe()).status.name === 'TIMED_OUT' ? 'timed_out' : 'running'),
  };
  const service = new RunService({
    flows: new FlowService({ workflows: { insert: async () => undefined, get: async () => null, list: async () => [], replace: async () => null, remove: async () => false } as never }),
    runs, outputs, engine, now: () => new Date(Date.now() + 11 * 60_000),
  });
  expect(await service.sweep()).toBe(1);
  expect(r.record.status).toBe('failed');
  expect(r.record.error).toBe(RUN_TIMEOUT_ERROR);
  // The delay was in flight when the run was stopped (an outside probe found it left `running`).
  expect(r.record.nodes.wait).toMatchObject({ status: 'cancelled', executions: 1 });
  expect(r.record.log.at(-1)?.message).toBe(RUN_TIMEOUT_ERROR);
});

describe('child runs are bounded per run tree', () => {
  it('a forEach over its own workflow (on_error: continue) fails the run at child depth 11, having started a few dozen runs, not thousands', async () => {
    const self = { nodes: [{ id: 'each', type: 'forEach', config: { items: '[1, 2]', do: { workflow_id: 'self-each' } }, on_error: 'continue' as const }], edges: [] };
    saveFlow('self-each', self);
    const r = await run(self);
    expect(r.record.status).toBe('failed');
    expect(r.record.error).toBe('Node "each" failed: forEach child run nesting depth 11 exceeds the maximum of 10 (flow.call and forEach child runs count together)');
    // Ten levels below the top-level run, two items reserved per forEach: at most 2 + 2 x 2 x 9.
    expect(r.record.childRuns).toBeGreaterThanOrEqual(20);
    expect(r.record.childRuns).toBeLessThanOrEqual(38);
    expect(r.record.nodes.each.status).toBe('failed');
    expect(r.record.nodes.each.childRuns?.started).toBeGreaterThanOrEqual(1);
    expect(r.record.nodes.each.childRuns?.failed).toBeGreaterThanOrEqual(1);
    expect(r.record.log.some((l) => l.node === 'each' && /^forEach started \d+ child runs of workflow self-each; \d+ failed$/.test(l.message))).toBe(true);
  });

  it('a flow.call to itself with on_error: continue still fails the run at depth 11', async () => {
    const self = { nodes: [{ id: 'call', type: 'flow.call', config: { workflow_id: 'self-call' }, on_error: 'continue' as const }], edges: [] };
    saveFlow('self-call', self);
    const r = await run(self);
    expect(r.record.status).toBe('failed');
    expect(r.record.error).toBe('Node "call" failed: flow.call nesting depth 11 exceeds the maximum of 10');
    expect(r.record.childRuns).toBe(10);
    expect(r.record.nodes.call.childRuns).toEqual({ started: 1, failed: 1 });
  });

  it('a forEach that would pass 10,000 child runs in the tree fails the run before starting one, whatever on_error says', async () => {
    saveFlow('double', { nodes: [t('twice', 'input * 2')], edges: [] });
    const r = await run({
      nodes: [
        { id: 'first', type: 'forEach', config: { items: '[1, 2]', do: { workflow_id: 'double' } } },
        { id: 'many', type: 'forEach', config: { items: '[1..10000]', max_items: 10_000, do: { workflow_id: 'double' } }, on_error: 'continue' },
        t('after', '1'),
      ],
      edges: [{ from: 'first', to: 'many' }, { from: 'many', to: 'after' }],
    });
    expect(r.record.status).toBe('failed');
    expect(r.record.error).toBe('Node "many" failed: starting 10000 more child runs would pass the limit of 10000 child runs per run (flow.call and forEach child runs at every depth)');
    expect(r.record.childRuns).toBe(2);
    expect(r.record.nodes.first).toMatchObject({ status: 'completed', childRuns: { started: 2, failed: 0 } });
    expect(r.record.nodes.many.childRuns).toBeUndefined();
    expect(r.record.nodes.after.status).toBe('skipped');
  });

  it('a run and its child runs have at most 10 node executions in flight together', async () => {
    sending.holdMs = 100;
    try {
      const send = (id: string) => ({ id, type: 'device.send', config: { entity: id, data: {} } });
      sending.max = 0;
      const wide = await run({ nodes: Array.from({ length: 30 }, (_, i) => send(`s${i}`)), edges: [] });
      expect(wide.record.status).toBe('completed');
      expect(sending.max).toBeLessThanOrEqual(10);
      expect(sending.max).toBeGreaterThan(1);

      saveFlow('fan5', { nodes: Array.from({ length: 5 }, (_, i) => send(`f${i}`)), edges: [] });
      sending.max = 0;
      const tree = await run({ nodes: [{ id: 'each', type: 'forEach', config: { items: '[1..12]', do: { workflow_id: 'fan5' } } }], edges: [] });
      expect(tree.record.status).toBe('completed');
      expect(tree.record.nodes.each.childRuns).toEqual({ started: 12, failed: 0 });
      expect(sending.max).toBeLessThanOrEqual(10);
    } finally {
      sending.holdMs = 0;
    }
  });
});
