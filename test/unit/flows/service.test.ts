/** RunService rules with in-memory stores: start order, a failed start, settling from the engine. */
import { FlowService, RunService, RunEngine } from '../../../src/flows/service';
import type { OutputDoc, RunDoc, WorkflowDoc } from '../../../src/flows/store';
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
  const { admission } = memoryAdmission(runs, full, now);
  return { flows: flowService, runService: new RunService({ flows: flowService, runs: runRepo, outputs, engine: full, admission, now }), runs };
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

it('a run the engine refused to start is recorded failed', async () => {
  const ctx = setup({ start: async () => { throw new Error('search attribute AccountId is not registered'); } });
  const wf = await ctx.flows.create(acc, def, 100);
  await expect(ctx.runService.start(acc, wf.id, null)).rejects.toThrow('could not be started');
  expect([...ctx.runs.values()][0]).toMatchObject({ status: 'failed', error: 'The run could not be started' });
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
