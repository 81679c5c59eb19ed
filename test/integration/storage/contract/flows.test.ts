/** The user-workflow stores' contract (definitions, runs, the waiting line, slots, outputs), on both engines. */
import { forEachEngine, newTenant } from '../../../support/engines';
import type { RunDoc, WorkflowDoc } from '../../../../src/flows/records';

const workflow = (accountId: string, n: number, over: Partial<WorkflowDoc> = {}): WorkflowDoc => ({
  _id: `w${n}-${accountId}`, accountId, name: `w${n}`, enabled: true, exposed: true, trigger: { tags: ['t1'], match: 'any' },
  definition: '{"nodes":[{"$id":" a "}]}', createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)), updatedAt: new Date(), ...over,
});

const run = (accountId: string, n: number, over: Partial<RunDoc> = {}): RunDoc => ({
  _id: `r${n}-${accountId}`, accountId, workflowId: 'w', workflowName: 'w', trigger: { type: 'manual' }, status: 'queued', input: '{"a.b":1}',
  error: null, log: [], nodes: {}, nodeOrder: ['a'], terminalNodes: ['a'], outputBytes: 0, queuedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
  startedAt: null, finishedAt: null, deadline: null, temporal: { workflowId: `run-${n}`, runId: null }, ...over,
});

forEachEngine(({ stores }) => {
  test('definitions: oldest first, counted, triggered by tag when enabled and exposed, replaced, removed', async () => {
    const acct = newTenant();
    await stores().workflows.insert(workflow(acct, 2));
    await stores().workflows.insert(workflow(acct, 1, { trigger: { tags: ['t2'], match: 'any' } }));
    await stores().workflows.insert(workflow(acct, 3, { enabled: false }));
    expect((await stores().workflows.list(acct, 0, 10)).map((w) => w.name)).toEqual(['w1', 'w2', 'w3']);
    expect(await stores().workflows.count(acct)).toBe(3);
    expect((await stores().workflows.triggeredBy(acct, ['t1', 'zz'], 10)).map((w) => w.name)).toEqual(['w2']);
    expect((await stores().workflows.get(acct, workflow(acct, 2)._id))?.definition).toBe('{"nodes":[{"$id":" a "}]}');
    expect(await stores().workflows.get(newTenant(), workflow(acct, 2)._id)).toBeNull();
    const { _id: _i, accountId: _a, createdAt: _c, ...fields } = workflow(acct, 2, { name: 'renamed' });
    expect((await stores().workflows.replace(acct, workflow(acct, 2)._id, fields))?.name).toBe('renamed');
    expect(await stores().workflows.replace(newTenant(), workflow(acct, 2)._id, fields)).toBeNull();
    expect(await stores().workflows.remove(acct, workflow(acct, 2)._id)).toBe(true);
    expect(await stores().workflows.remove(acct, workflow(acct, 2)._id)).toBe(false);
  });

  test('the waiting line: FIFO per account, one claim wins, cancel and expiry leave it', async () => {
    const acct = newTenant();
    for (const n of [2, 1, 3, 4]) await stores().runs.enqueue(run(acct, n));
    expect(await stores().runs.hasQueued(acct)).toBe(true);
    expect(await stores().runs.countQueued(acct)).toBe(4);
    expect(await stores().runs.accountsWithQueued()).toContain(acct);
    expect((await stores().runs.oldestQueued(acct))?._id).toBe(run(acct, 1)._id);
    const claims = await Promise.all([1, 2, 3].map(() => stores().runs.claimQueued(run(acct, 1)._id, new Date(5), new Date(6))));
    expect(claims.filter((c) => c !== null)).toHaveLength(1);
    expect(await stores().runs.get(acct, run(acct, 1)._id)).toMatchObject({ status: 'running', startedAt: new Date(5), deadline: new Date(6) });
    expect(await stores().runs.finish(run(acct, 2)._id, { status: 'cancelled', error: null, finishedAt: new Date(7) }, [], 'queued')).toBe(true);
    expect((await stores().runs.oldestQueued(acct))?._id).toBe(run(acct, 3)._id);
    expect(await stores().runs.expireQueued(new Date(Date.UTC(2026, 0, 1, 0, 0, 3)), new Date(8), 'waited too long')).toBeGreaterThanOrEqual(1);
    expect(await stores().runs.get(acct, run(acct, 3)._id)).toMatchObject({ status: 'expired', error: 'waited too long' });
    expect(await stores().runs.countQueued(acct)).toBe(1);
    expect((await stores().runs.statuses([run(acct, 3)._id, run(acct, 4)._id, 'none'])).map((s) => s.status).sort()).toEqual(['expired', 'queued']);
  });

  test('progress and finish: nodes merge, the log appends, the first final write wins; lists newest first without logs', async () => {
    const acct = newTenant();
    await stores().runs.insert(run(acct, 1, { status: 'running', startedAt: new Date(1), deadline: new Date(Date.now() - 1000) }));
    const stat = { status: 'completed' as const, executions: 1, attempts: 1, durationMs: 5, outputBytes: 2 };
    await stores().runs.recordProgress(run(acct, 1)._id, { a: stat }, [{ level: 'info', message: 'one', at: 'x' }], 2, 'temporal-run');
    await stores().runs.recordProgress(run(acct, 1)._id, { b: stat }, [{ level: 'info', message: 'two', at: 'y' }], 4);
    const mid = await stores().runs.get(acct, run(acct, 1)._id);
    expect(mid).toMatchObject({ outputBytes: 4, temporal: { runId: 'temporal-run' }, nodes: { a: stat, b: stat } });
    expect(mid?.log.map((l: { message: string }) => l.message)).toEqual(['one', 'two']);
    expect((await stores().runs.overdue(new Date(), 10)).map((r) => r._id)).toContain(run(acct, 1)._id);
    expect(await stores().runs.finish(run(acct, 1)._id, { status: 'failed', error: 'boom', finishedAt: new Date(3) }, [{ level: 'error', message: 'three', at: 'z' }])).toBe(true);
    expect(await stores().runs.finish(run(acct, 1)._id, { status: 'completed', error: null, finishedAt: new Date(4) })).toBe(false);
    const done = await stores().runs.get(acct, run(acct, 1)._id);
    expect(done).toMatchObject({ status: 'failed', error: 'boom' });
    expect(done?.log.map((l) => l.message)).toEqual(['one', 'two', 'three']);
    expect(await stores().runs.input(run(acct, 1)._id)).toBe('{"a.b":1}');
    await stores().runs.insert(run(acct, 2, { status: 'completed' }));
    const listed = await stores().runs.list(acct, 'w', 0, 10);
    expect(listed.map((r) => r._id)).toEqual([run(acct, 2)._id, run(acct, 1)._id]);
    expect(listed[1].log).toBeUndefined();
  });

  test('child-run budget: concurrent reservations of one tree never pass the limit together', async () => {
    const acct = newTenant();
    await stores().runs.insert(run(acct, 1, { status: 'running', startedAt: new Date(1) }));
    const id = run(acct, 1)._id;
    const taken = await Promise.all(Array.from({ length: 12 }, () => stores().runs.reserveChildRuns(id, 3, 20)));
    expect(taken.filter(Boolean)).toHaveLength(6);
    expect((await stores().runs.get(acct, id))?.childRuns).toBe(18);
    expect(await stores().runs.reserveChildRuns(id, 2, 20)).toBe(true);
    expect(await stores().runs.reserveChildRuns(id, 1, 20)).toBe(false);
    expect(await stores().runs.reserveChildRuns(`missing-${acct}`, 1, 20)).toBe(false);
  });

  test('slots: numbers below the limit, one per run, never two runs on one number', async () => {
    const acct = newTenant();
    const won = await Promise.all(Array.from({ length: 6 }, (_, i) => stores().slots.claim(acct, `run${i}-${acct}`, 3, new Date())));
    expect(won.filter(Boolean)).toHaveLength(3);
    expect(await stores().slots.count(acct)).toBe(3);
    const held = (await stores().slots.all(1000)).filter((s) => s.accountId === acct);
    expect(held.map((s) => s.slot).sort()).toEqual([0, 1, 2]);
    expect(await stores().slots.claim(acct, held[0]._id, 5, new Date())).toBe(false);
    expect(await stores().slots.release(held[0]._id)).toBe(acct);
    expect(await stores().slots.release(held[0]._id)).toBeUndefined();
    expect(await stores().slots.claim(acct, `late-${acct}`, 3, new Date())).toBe(true);
  });

  test('outputs: inline and large kept exactly, replaced by a later execution, found by key', async () => {
    const runId = `run-${newTenant()}`;
    const small = JSON.stringify({ 'a.b': [' x '] });
    const large = JSON.stringify({ big: 'é'.repeat(200_000) }); // over 256 KB in UTF-8
    expect(await stores().outputs.save(runId, 'n1', small)).toBe(Buffer.byteLength(small));
    expect(await stores().outputs.save(runId, 'n2', large)).toBe(Buffer.byteLength(large));
    expect(await stores().outputs.load(runId, 'n1')).toBe(small);
    expect(await stores().outputs.load(runId, 'n2')).toBe(large);
    const docs = await stores().outputs.find(runId, ['n1', 'n2', 'none']);
    expect(docs.map((d) => d.key).sort()).toEqual(['n1', 'n2']);
    expect(await stores().outputs.read(docs.find((d) => d.key === 'n2') as never)).toBe(large);
    await stores().outputs.save(runId, 'n2', small);
    expect(await stores().outputs.load(runId, 'n2')).toBe(small);
    expect(await stores().outputs.load(runId, 'none')).toBeUndefined();
  });
});
