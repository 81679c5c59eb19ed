/** Admission rules with in-memory stores: slots per plan, FIFO promotion, expiry, queue bounds, quotas. */
import { FlowService, RunService, RunEngine, RunStartRequest } from '../../../src/flows/service';
import type { RunDoc, WorkflowDoc } from '../../../src/flows/records';
import { LimitReachedError, QueueFullError } from '../../../src/errors';
import { FIXED_LIMITS } from '../../../src/accounts/plans';
import { memoryAdmission } from './memory-admission';

function setup(opts: { runsUsed?: number; computeUsed?: number } = {}) {
  let clock = Date.now();
  const now = () => new Date(clock);
  const flows = new Map<string, WorkflowDoc>();
  const runs = new Map<string, RunDoc>();
  const started: string[] = [];
  const engine: RunEngine = {
    start: async (req: RunStartRequest) => { started.push(req.runId); },
    outcome: async () => 'running',
    cancel: async () => undefined,
  };
  const flowService = new FlowService({
    workflows: {
      insert: async (d) => { flows.set(d._id, d); },
      get: async (a, id) => { const d = flows.get(id); return d && d.accountId === a ? d : null; },
      list: async () => [...flows.values()],
      replace: async () => null,
      remove: async () => false,
      count: async (a) => [...flows.values()].filter((d) => d.accountId === a).length,
      triggeredBy: async () => [],
    },
  });
  let runsUsed = opts.runsUsed ?? 0;
  const { admission, slots, line } = memoryAdmission(runs, engine, now);
  const runService = new RunService({
    flows: flowService, engine, admission, now,
    runs: {
      get: async (a, id) => { const d = runs.get(id); return d && d.accountId === a ? d : null; },
      list: async () => [...runs.values()],
      finish: async (id, fields, _log, from) => {
        const d = runs.get(id);
        if (from === 'queued') line.delete(id);
        if (!d || (from ? d.status !== from : ['completed', 'failed', 'cancelled', 'expired'].includes(d.status))) return false;
        Object.assign(d, fields);
        return true;
      },
      overdue: async () => [],
    },
    outputs: { save: async () => 0, read: async () => '', find: async () => [] },
    quota: {
      reserveRun: async (_a, max) => (runsUsed < max ? (runsUsed++, true) : false),
      releaseRun: async () => { runsUsed--; },
      workflowUsage: async () => ({ runs: runsUsed, computeUnits: opts.computeUsed ?? 0 }),
    },
  });
  return { flows: flowService, runService, admission, runs, slots, line, started, runsUsed: () => runsUsed, tick: (ms: number) => { clock += ms; } };
}

const free = { id: 'acc', plan: 'free' as const };
const def = { name: 'w', nodes: [{ id: 'a', type: 'delay', config: { ms: 10 } }], edges: [] };

it('Free: 2 runs start, the rest queue and start in FIFO order as slots free', async () => {
  const ctx = setup();
  const wf = await ctx.flows.create(free, def, 100);
  const ids: string[] = [];
  const statuses: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await ctx.runService.start(free, wf.id, i);
    ids.push(r.runId);
    statuses.push(r.status);
    ctx.tick(1);
  }
  expect(statuses).toEqual(['running', 'running', 'queued', 'queued', 'queued']);
  expect(ctx.started).toEqual(ids.slice(0, 2));
  // The second run ends first: the oldest queued run takes its slot.
  ctx.runs.get(ids[1])!.status = 'completed';
  await ctx.admission.ended(ids[1]);
  expect(ctx.started).toEqual([ids[0], ids[1], ids[2]]);
  ctx.runs.get(ids[0])!.status = 'completed';
  await ctx.admission.ended(ids[0]);
  ctx.runs.get(ids[2])!.status = 'failed';
  await ctx.admission.ended(ids[2]);
  expect(ctx.started).toEqual(ids);
  // Releasing twice frees nothing more.
  await ctx.admission.ended(ids[2]);
  expect(ctx.slots.size).toBe(2);
});

it('a run queued for an hour expires and never starts; the pass frees slots of finished runs', async () => {
  const ctx = setup();
  const wf = await ctx.flows.create(free, def, 100);
  const a = await ctx.runService.start(free, wf.id, 1);
  await ctx.runService.start(free, wf.id, 2);
  const late = await ctx.runService.start(free, wf.id, 3);
  expect(late.status).toBe('queued');
  ctx.tick(FIXED_LIMITS.workflowQueueWaitMs + 1);
  // The worker died after writing the end of run a, before releasing its slot.
  ctx.runs.get(a.runId)!.status = 'completed';
  expect(await ctx.admission.pass()).toEqual({ expired: 1, freed: 1, started: 0 });
  expect(ctx.runs.get(late.runId)).toMatchObject({ status: 'expired' });
  expect(ctx.started).not.toContain(late.runId);
});

it('cancelling a queued run ends it without the engine; it never starts', async () => {
  const ctx = setup();
  const wf = await ctx.flows.create(free, def, 100);
  const a = await ctx.runService.start(free, wf.id, 1);
  await ctx.runService.start(free, wf.id, 2);
  const q = await ctx.runService.start(free, wf.id, 3);
  await ctx.runService.cancel(free.id, q.runId);
  expect(ctx.runs.get(q.runId)?.status).toBe('cancelled');
  ctx.runs.get(a.runId)!.status = 'completed';
  await ctx.admission.ended(a.runId);
  expect(ctx.started).not.toContain(q.runId);
});

it('a full account queue answers queue_full and records nothing', async () => {
  const ctx = setup();
  const wf = await ctx.flows.create(free, def, 100);
  for (let i = 0; i < FIXED_LIMITS.workflowQueuedPerAccount + 2; i++) await ctx.runService.start(free, wf.id, i);
  const before = ctx.runs.size;
  const used = ctx.runsUsed();
  await expect(ctx.runService.start(free, wf.id, 'x')).rejects.toBeInstanceOf(QueueFullError);
  expect(ctx.runs.size).toBe(before);
  // The refused run does not count toward the month's runs.
  expect(ctx.runsUsed()).toBe(used);
});

it('a free slot does not let a new run pass one already waiting: the waiting one starts first', async () => {
  const ctx = setup();
  const wf = await ctx.flows.create(free, def, 100);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await ctx.runService.start(free, wf.id, i)).runId);
    ctx.tick(1);
  }
  // Run 0 ended and its slot was freed by a process that died before promoting the line.
  ctx.runs.get(ids[0])!.status = 'completed';
  ctx.slots.delete(ids[0]);
  const late = await ctx.runService.start(free, wf.id, 'late');
  expect(late.status).toBe('queued');
  expect(ctx.started).toEqual([ids[0], ids[1], ids[2]]);
  expect([...ctx.line.keys()]).toEqual([late.runId]);
});

it('the pass puts a queued run that lost its line entry back in line and starts it', async () => {
  const ctx = setup();
  const wf = await ctx.flows.create(free, def, 100);
  const a = await ctx.runService.start(free, wf.id, 1);
  await ctx.runService.start(free, wf.id, 2);
  const q = await ctx.runService.start(free, wf.id, 3);
  // The process died between writing q's record and its line entry.
  ctx.line.delete(q.runId);
  ctx.runs.get(a.runId)!.status = 'completed';
  expect(await ctx.admission.pass()).toEqual({ expired: 0, freed: 1, started: 1 });
  expect(ctx.started).toContain(q.runId);
  expect(ctx.line.size).toBe(0);
});

it('the pass keeps a fresh slot whose run is not recorded yet, and frees it once it is old', async () => {
  const ctx = setup();
  await ctx.admission.pass();
  ctx.slots.set('in-flight', { _id: 'in-flight', accountId: 'acc', slot: 0, claimedAt: new Date(Date.now()) });
  expect((await ctx.admission.pass()).freed).toBe(0);
  expect(ctx.slots.has('in-flight')).toBe(true);
  ctx.tick(61_000);
  expect((await ctx.admission.pass()).freed).toBe(1);
  expect(ctx.slots.has('in-flight')).toBe(false);
});

it('plan quotas: the 6th workflow, the 1,001st manual run and used-up compute are limit_reached', async () => {
  const ctx = setup({ runsUsed: 1_000 });
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push((await ctx.flows.create(free, def, 100)).id);
  const sixth = await ctx.flows.create(free, def, 100).catch((e: unknown) => e);
  expect(sixth).toBeInstanceOf(LimitReachedError);
  expect(sixth).toMatchObject({ status: 403, code: 'limit_reached', message: 'Plan free, 5 of 5 workflows: workflow limit reached', extra: { usage: 5, limit: 5, plan: 'free' } });
  await expect(ctx.runService.start(free, ids[0], null)).rejects.toMatchObject({ code: 'limit_reached', extra: { usage: 1_000, limit: 1_000 } });
  // The slot claimed alongside the refused reservation is free again; nothing was recorded.
  expect(ctx.slots.size).toBe(0);
  expect(ctx.runs.size).toBe(0);
  // Device-event runs are not counted in the month's runs.
  await expect(ctx.runService.start(free, ids[0], null, { type: 'device_event', messageId: 'm' })).resolves.toMatchObject({ status: 'running' });
  const spent = setup({ computeUsed: 3_600 });
  const wf = await spent.flows.create(free, def, 100);
  await expect(spent.runService.start(free, wf.id, null)).rejects.toMatchObject({ code: 'limit_reached', message: expect.stringMatching(/compute limit reached$/) });
});

it('a refused start gives back the slot and the month\'s run it took alongside, and the waiting run gets the slot', async () => {
  const ctx = setup({ runsUsed: 10 });
  const wf = await ctx.flows.create(free, def, 100);
  // Another account's workflow id: 404, and nothing stays taken.
  await expect(ctx.runService.start({ id: 'other', plan: 'free' }, wf.id, null)).rejects.toMatchObject({ status: 404 });
  await expect(ctx.runService.start(free, 'wf_missing', null)).rejects.toMatchObject({ status: 404 });
  expect(ctx.slots.size).toBe(0);
  expect(ctx.runsUsed()).toBe(10);
  expect(ctx.runs.size).toBe(0);
  // Both slots held, one run waiting: a refused start that claimed nothing new leaves the line alone.
  const a = await ctx.runService.start(free, wf.id, null);
  const b = await ctx.runService.start(free, wf.id, null);
  const c = await ctx.runService.start(free, wf.id, null);
  expect([a.status, b.status, c.status]).toEqual(['running', 'running', 'queued']);
  // A slot frees while nobody is promoted (a crashed worker's run, say); a start refused for its
  // input claims that slot alongside, and giving it back starts the waiting run.
  ctx.slots.delete(a.runId);
  const strict = await ctx.flows.create(free, { ...def, name: 'strict', input_schema: { type: 'object', required: ['x'] } }, 100);
  await expect(ctx.runService.start(free, strict.id, {})).rejects.toMatchObject({ status: 422 });
  expect(ctx.runs.get(c.runId)?.status).toBe('running');
  expect(ctx.started).toContain(c.runId);
  expect(ctx.runsUsed()).toBe(13);
});
