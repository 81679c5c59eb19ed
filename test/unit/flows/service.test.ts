/** RunService rules with in-memory stores: start order, a failed start, settling from the engine. */
import { FlowService, RunService, RunEngine } from '../../../src/flows/service';
import type { OutputDoc, RunDoc, WorkflowDoc } from '../../../src/flows/records';
import { FINAL_STATUSES } from '../../../src/flows/schemas';
import { memoryAdmission } from './memory-admission';
import { NotFoundError, ValidationError } from '../../../src/errors';

function setup(engine: Partial<RunEngine>, now = () => new Date()) {
  const flows = new Map<string, WorkflowDoc>();
  const runs = new Map<string, RunDoc>();
  const workflowRepo = {
    insert: async (d: WorkflowDoc) => { flows.set(d._id, d); },
    get: async (a: string, id: string) => { const d = flows.get(id); return d && d.accountId === a ? d : null; },
    list: async () => [...flows.values()],
    replace: async () => null,
    remove: async () => false,
    count: async (a: string) => [...flows.values()].filter((d) => d.accountId === a).length,
    triggeredBy: async () => [],
  };
  const runRepo = {
    insert: async (d: RunDoc) => { runs.set(d._id, d); },
    get: async (a: string, id: string) => { const d = runs.get(id); return d && d.accountId === a ? d : null; },
    list: async () => [...runs.values()],
    finish: async (id: string, fields: Partial<RunDoc>, appendLog: RunDoc['log'] = []) => {
      const d = runs.get(id);
      if (!d || FINAL_STATUSES.includes(d.status)) return false;
      Object.assign(d, fields, { log: [...(fields.log ?? d.log), ...appendLog] });
      return true;
    },
    overdue: async (before: Date) => [...runs.values()].filter((r) => r.status === 'running' && r.deadline && r.deadline < before),
  };
  const outputs = { save: async () => 0, read: async (d: OutputDoc) => d.json as string, find: async () => [] };
  const full: RunEngine = { start: async () => undefined, outcome: async () => 'running', cancel: async () => undefined, ...engine };
  const flowService = new FlowService({ workflows: workflowRepo });
  const { admission, slots } = memoryAdmission(runs, full, now);
  return { flows: flowService, runService: new RunService({ flows: flowService, runs: runRepo, outputs, engine: full, admission, now }), runs, admission, slots };
}

const acc = { id: 'acc', plan: 'free' as const };
const def = { name: 'w', nodes: [{ id: 'a', type: 'transform', config: { expression: '1' } }], edges: [] };

it('writes the run record before the engine starts the run', async () => {
  let seen: RunDoc | undefined;
  const ctx = setup({ start: async (req) => { seen = ctx.runs.get(req.runId); } });
  const wf = await ctx.flows.create(acc, def, 100);
  const started = await ctx.runService.start(acc, wf.id, { x: 1 });
  expect(started).toEqual({ runId: expect.any(String), workflowId: wf.id, status: 'running' });
  expect(seen).toMatchObject({ status: 'running', input: '{"x":1}', terminalNodes: ['a'] });
});

it('a run is queued before it starts, whatever the clock reads while its definition is read', async () => {
  let clock = Date.parse('2026-11-23T00:00:00Z');
  const ctx = setup({}, () => new Date((clock += 7)));
  const wf = await ctx.flows.create(acc, def, 100);
  const { runId } = await ctx.runService.start(acc, wf.id, null);
  const run = ctx.runs.get(runId) as RunDoc;
  expect(run.status).toBe('running');
  expect((run.startedAt as Date).getTime()).toBeGreaterThanOrEqual(run.queuedAt.getTime());
});

it('a run the engine refused to start is recorded failed and frees its slot', async () => {
  const ctx = setup({ start: async () => { throw new Error('search attribute AccountId is not registered'); } });
  const wf = await ctx.flows.create(acc, def, 100);
  // The 202 promises a recorded run; the engine's refusal shows on the record.
  expect((await ctx.runService.start(acc, wf.id, null)).status).toBe('running');
  await ctx.admission.drain();
  expect([...ctx.runs.values()][0]).toMatchObject({ status: 'failed', error: 'The run could not be started' });
  expect(ctx.slots.size).toBe(0);
});

/** A start the test lets through when it wants. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => { open = resolve; });
  return { open, opened };
}

it('answers once the record is written; the engine hears of the run in the background', async () => {
  const g = gate();
  const started: string[] = [];
  const ctx = setup({ start: async (req) => { await g.opened; started.push(req.runId); } });
  const wf = await ctx.flows.create(acc, def, 100);
  const { runId, status } = await ctx.runService.start(acc, wf.id, null);
  expect(status).toBe('running');
  expect(ctx.runs.get(runId)?.status).toBe('running');
  expect(started).toEqual([]);
  g.open();
  await ctx.admission.drain();
  expect(started).toEqual([runId]);
});

it('a cancel waits for the launch under way, then cancels the execution', async () => {
  const g = gate();
  const events: string[] = [];
  const ctx = setup({
    start: async () => { await g.opened; events.push('start'); },
    cancel: async () => { events.push('cancel'); },
  });
  const wf = await ctx.flows.create(acc, def, 100);
  const { runId } = await ctx.runService.start(acc, wf.id, null);
  const cancelling = ctx.runService.cancel(acc.id, runId);
  g.open();
  await cancelling;
  expect(events).toEqual(['start', 'cancel']);
});

it('a run with no execution yet is cancelled on its record, which frees its slot', async () => {
  // Its launch is another process's, still on the way: the engine knows no execution.
  const cancels: string[] = [];
  const ctx = setup({ outcome: async () => 'missing', cancel: async (runId) => { cancels.push(runId); } });
  const wf = await ctx.flows.create(acc, def, 100);
  const { runId } = await ctx.runService.start(acc, wf.id, null);
  await ctx.admission.drain();
  expect(await ctx.runService.cancel(acc.id, runId)).toMatchObject({ status: 'cancelled' });
  expect(ctx.slots.size).toBe(0);
  // Asked before and after the record changed, so a start landing in between is caught too.
  expect(cancels).toEqual([runId, runId]);
});

it('a launch that lands after its run was cancelled cancels its own execution', async () => {
  const g = gate();
  const cancels: string[] = [];
  const ctx = setup({ start: async () => { await g.opened; }, cancel: async (runId) => { cancels.push(runId); } });
  const wf = await ctx.flows.create(acc, def, 100);
  const { runId } = await ctx.runService.start(acc, wf.id, null);
  ctx.runs.get(runId)!.status = 'cancelled'; // another process's cancel, while the start is on the way
  g.open();
  await ctx.admission.drain();
  expect(cancels).toEqual([runId]);
});

it('the sweeper starts again a run whose launch was lost, and only that one', async () => {
  let clock = Date.parse('2026-11-23T00:00:00Z');
  const starts: string[] = [];
  const outcomes = new Map<string, 'missing' | 'running'>();
  const ctx = setup({
    start: async (req) => { starts.push(req.runId); },
    outcome: async (runId) => outcomes.get(runId) ?? 'running',
  }, () => new Date(clock));
  const wf = await ctx.flows.create({ id: 'acc', plan: 'pro' }, def, 100);
  const lost = (await ctx.runService.start({ id: 'acc', plan: 'pro' }, wf.id, null)).runId;
  const alive = (await ctx.runService.start({ id: 'acc', plan: 'pro' }, wf.id, null)).runId;
  await ctx.admission.drain();
  starts.length = 0;
  outcomes.set(lost, 'missing');
  clock += 30_000;
  await ctx.runService.sweep();
  expect(starts).toEqual([]); // too young: its launch may still be on the way
  clock += 31_000;
  const young = (await ctx.runService.start({ id: 'acc', plan: 'pro' }, wf.id, null)).runId;
  await ctx.admission.drain();
  starts.length = 0;
  outcomes.set(young, 'missing');
  await ctx.runService.sweep();
  expect(starts).toEqual([lost]);
  expect(ctx.runs.get(alive)?.status).toBe('running');
});

it('another account\'s workflow is not found; a bad definition is a Validation Error', async () => {
  const ctx = setup({});
  const wf = await ctx.flows.create(acc, def, 100);
  await expect(ctx.runService.start({ id: 'other', plan: 'free' }, wf.id, null)).rejects.toBeInstanceOf(NotFoundError);
  await expect(ctx.flows.create(acc, { name: 'x', nodes: [], edges: [] }, 10)).rejects.toBeInstanceOf(ValidationError);
});

it.each([
  ['timed_out', 'failed', 'Workflow execution timed out'],
  ['terminated', 'failed', 'The run was terminated by an operator'],
  ['cancelled', 'cancelled', null],
  ['missing', 'failed', 'Workflow execution timed out'],
] as const)('settles a run the engine reports %s as %s', async (outcome, status, error) => {
  let clock = Date.now();
  const ctx = setup({ outcome: async () => outcome }, () => new Date(clock));
  const wf = await ctx.flows.create(acc, def, 100);
  const { runId } = await ctx.runService.start(acc, wf.id, null);
  expect(await ctx.runService.sweep()).toBe(0);
  clock += 10 * 60_000 + 16_000;
  expect(await ctx.runService.sweep()).toBe(1);
  expect(ctx.runs.get(runId)).toMatchObject({ status, error });
});

it('a run still running in the engine is left alone', async () => {
  let clock = Date.now();
  const ctx = setup({ outcome: async () => 'running' }, () => new Date(clock));
  const wf = await ctx.flows.create(acc, def, 100);
  const { runId } = await ctx.runService.start(acc, wf.id, null);
  clock += 11 * 60_000;
  expect(await ctx.runService.sweep()).toBe(0);
  expect(ctx.runs.get(runId)?.status).toBe('running');
});

it('a started run stays running when the look for a cancel made meanwhile fails', async () => {
  const ctx = setup({});
  const wf = await ctx.flows.create(acc, def, 100);
  const queue = (ctx.admission as unknown as { deps: { queue: { statuses: () => Promise<never> } } }).deps.queue;
  queue.statuses = async () => { throw new Error('read pool down'); };
  const { runId } = await ctx.runService.start(acc, wf.id, null);
  await ctx.admission.drain();
  expect(ctx.runs.get(runId)).toMatchObject({ status: 'running', error: null });
  expect(ctx.slots.size).toBe(1);
});

it('stopping waits for launches under way, but not forever for an engine that does not answer', async () => {
  const g = gate();
  const ctx = setup({ start: async () => { await g.opened; } });
  const wf = await ctx.flows.create(acc, def, 100);
  await ctx.runService.start(acc, wf.id, null);
  expect(await ctx.admission.drain(50)).toBe(false);
  g.open();
  expect(await ctx.admission.drain(5_000)).toBe(true);
});
