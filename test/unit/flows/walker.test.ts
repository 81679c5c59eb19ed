/**
 * The graph walk's rules, without Temporal: a test drives the walk as the interpreter does
 * (take, then succeeded or failed, then settled), choosing each node's outcome.
 */
import { FIXED_LIMITS } from '../../../src/accounts/plans';
import type { EdgeDef, NodeDef } from '../../../src/flows/schemas';
import { Walk, WalkState } from '../../../src/flows/walker';
import { executionCapError } from '../../../src/flows/limits';

const node = (id: string, more: Partial<NodeDef> = {}): NodeDef => ({ id, type: 'transform', config: { expression: '1' }, ...more });
const edge = (from: string, to: string, when?: string): EdgeDef => (when === undefined ? { from, to } : { from, to, when });
const NOW = Date.UTC(2026, 0, 1);

/** A node's outcome: a branch label to succeed with, or an error to fail with. */
type Outcome = { branch?: string; bytes?: number } | { error: string; limit?: boolean };

/** Runs one node the walk hands out to its end; the order nodes ran in is pushed to `ran`. */
function step(walk: Walk, outcome: (id: string, execution: number) => Outcome, ran: string[]): boolean {
  const next = walk.take();
  if (!next) return walk.hasReady;
  const id = next.node.id;
  ran.push(id);
  const o = outcome(id, next.execution);
  if ('error' in o) walk.failed(id, { message: o.error, attempts: 1, log: [], limit: o.limit ?? false });
  else walk.succeeded(id, { bytes: o.bytes ?? 1, branch: o.branch, durationMs: 1, attempt: 1 });
  walk.settled(id);
  return true;
}

/** One node at a time, as long as the run has not failed. */
function walkAll(walk: Walk, outcome: (id: string, execution: number) => Outcome = () => ({})): string[] {
  const ran: string[] = [];
  while (!walk.failure && step(walk, outcome, ran));
  return ran;
}

/** Node `bad` fails with "boom"; every other node succeeds. */
const failing = (bad: string) => (id: string): Outcome => (id === bad ? { error: 'boom' } : {});

const statuses = (walk: Walk) => Object.fromEntries(Object.entries(walk.state.stats).map(([id, s]) => [id, s.status]));

describe('starts and joins', () => {
  it('starts at every node without an incoming edge', () => {
    const walk = new Walk([node('a'), node('b'), node('c')], [edge('a', 'c')], undefined, () => NOW);
    expect(walk.state.ready).toEqual(['a', 'b']);
  });

  it('a join waits for every forward input, then runs once', () => {
    const walk = new Walk([node('a'), node('b'), node('c'), node('j')], [edge('a', 'b'), edge('a', 'c'), edge('b', 'j'), edge('c', 'j')], undefined, () => NOW);
    const a = walk.take();
    walk.succeeded('a', { bytes: 1, durationMs: 1, attempt: 1 });
    walk.settled(a?.node.id as string);
    const b = walk.take();
    const c = walk.take();
    expect([b?.node.id, c?.node.id]).toEqual(['b', 'c']);
    walk.succeeded('b', { bytes: 1, durationMs: 1, attempt: 1 });
    walk.settled('b');
    expect(walk.hasReady).toBe(false);
    walk.succeeded('c', { bytes: 1, durationMs: 1, attempt: 1 });
    walk.settled('c');
    expect(walk.state.ready).toEqual(['j']);
    expect(walkAll(walk)).toEqual(['j']);
    expect(walk.state.stats.j.executions).toBe(1);
    expect(walk.close()).toEqual(['j']);
  });

  it('a join runs when one input was taken and the other was not; it waits for the one not yet decided', () => {
    const nodes = [node('cond', { type: 'condition' }), node('x'), node('y'), node('j')];
    const edges = [edge('cond', 'x', 'true'), edge('cond', 'y', 'false'), edge('x', 'j'), edge('y', 'j')];
    const walk = new Walk(nodes, edges, undefined, () => NOW);
    step(walk, () => ({ branch: 'true' }), []);
    expect(walk.state.ready).toEqual(['x']);
    expect(walk.state.stats.y.status).toBe('skipped');
    expect(walkAll(walk)).toEqual(['x', 'j']);
    expect(statuses(walk)).toEqual({ cond: 'completed', x: 'completed', y: 'skipped', j: 'completed' });
  });
});

describe('skips', () => {
  it('a branch not taken is skipped and passes "not taken" down the whole chain', () => {
    const nodes = [node('cond', { type: 'condition' }), node('a'), node('b'), node('c'), node('other')];
    const edges = [edge('cond', 'a', 'true'), edge('a', 'b'), edge('b', 'c'), edge('cond', 'other', 'false')];
    const walk = new Walk(nodes, edges, undefined, () => NOW);
    expect(walkAll(walk, () => ({ branch: 'false' }))).toEqual(['cond', 'other']);
    expect(statuses(walk)).toEqual({ cond: 'completed', a: 'skipped', b: 'skipped', c: 'skipped', other: 'completed' });
    expect(walk.failure).toBeUndefined();
    expect(walk.close()).toEqual(['other']);
  });

  it('a switch takes the matching case, else default; edges of other values are not taken', () => {
    const nodes = [node('sw', { type: 'switch' }), node('red'), node('blue'), node('other')];
    const edges = [edge('sw', 'red', 'red'), edge('sw', 'blue', 'blue'), edge('sw', 'other', 'default')];
    const matched = new Walk(nodes, edges, undefined, () => NOW);
    expect(walkAll(matched, () => ({ branch: 'blue' }))).toEqual(['sw', 'blue']);
    const fallback = new Walk(nodes, edges, undefined, () => NOW);
    expect(walkAll(fallback, () => ({ branch: 'green' }))).toEqual(['sw', 'other']);
  });

  it('"default" is a plain label on a condition: only a switch falls back to it', () => {
    const walk = new Walk([node('c', { type: 'condition' }), node('d')], [edge('c', 'd', 'default')], undefined, () => NOW);
    expect(walkAll(walk, () => ({ branch: 'true' }))).toEqual(['c']);
    expect(walk.state.stats.d.status).toBe('skipped');
  });
});

describe('failures and error edges', () => {
  const nodes = [node('a'), node('handler'), node('next')];
  const edges = [edge('a', 'handler', 'error'), edge('a', 'next')];

  it('an error edge is taken only on failure; the plain edges are then not taken and the run goes on', () => {
    const failed = new Walk(nodes, edges, undefined, () => NOW);
    expect(walkAll(failed, failing('a'))).toEqual(['a', 'handler']);
    expect(failed.failure).toBeUndefined();
    expect(statuses(failed)).toEqual({ a: 'failed', handler: 'completed', next: 'skipped' });
    expect(failed.state.stats.a.error).toBe('boom');
    expect(failed.state.log).toEqual([{ level: 'warn', node: 'a', message: 'failed, following its error edges: boom', at: new Date(NOW).toISOString() }]);

    const succeeded = new Walk(nodes, edges, undefined, () => NOW);
    expect(walkAll(succeeded)).toEqual(['a', 'next']);
    expect(succeeded.state.stats.handler.status).toBe('skipped');
  });

  it('a failure without an error edge fails the run naming the node; nothing else starts', () => {
    const walk = new Walk([node('a'), node('b'), node('c')], [edge('a', 'c'), edge('b', 'c')], undefined, () => NOW);
    expect(walkAll(walk, failing('a'))).toEqual(['a']);
    expect(walk.failure).toBe('Node "a" failed: boom');
    expect(walk.root).toBe('boom');
    expect(walk.limited).toBe(false);
    expect(walk.close()).toEqual([]);
    expect(statuses(walk)).toEqual({ a: 'failed', b: 'skipped', c: 'skipped' });
  });

  it('on_error: continue takes the plain edges of a failed node', () => {
    const walk = new Walk([node('a', { on_error: 'continue' }), node('b'), node('h')], [edge('a', 'b'), edge('a', 'h', 'ok')], undefined, () => NOW);
    expect(walkAll(walk, failing('a'))).toEqual(['a', 'b']);
    expect(walk.failure).toBeUndefined();
    expect(walk.state.log[0].message).toBe('failed, continuing (on_error: continue): boom');
  });

  it('a run limit fails the run at once, even past an error edge or on_error: continue', () => {
    const walk = new Walk([node('a', { on_error: 'continue' }), node('handler'), node('next')], edges, undefined, () => NOW);
    expect(walkAll(walk, () => ({ error: 'too deep', limit: true }))).toEqual(['a']);
    expect(walk.failure).toBe('Node "a" failed: too deep');
    expect(walk.limited).toBe(true);
  });

  it('outputs past the run\'s output limit fail the run', () => {
    const walk = new Walk([node('a'), node('b')], [edge('a', 'b')], undefined, () => NOW);
    expect(walkAll(walk, () => ({ bytes: FIXED_LIMITS.workflowRunOutputBytes + 1 }))).toEqual(['a']);
    expect(walk.failure).toMatch(/the limit per run is/);
  });
});

describe('loops and the execution cap', () => {
  // s -> a -> check; check "true" loops back to a, "false" leaves to end.
  const nodes = [node('s'), node('a'), node('check', { type: 'condition' }), node('end')];
  const edges = [edge('s', 'a'), edge('a', 'check'), edge('check', 'a', 'true'), edge('check', 'end', 'false')];

  it('a loop edge re-runs its target while taken, then the exit runs once', () => {
    const walk = new Walk(nodes, edges, undefined, () => NOW);
    const ran = walkAll(walk, (id, execution) => (id === 'check' ? { branch: execution < 3 ? 'true' : 'false' } : {}));
    expect(ran).toEqual(['s', 'a', 'check', 'a', 'check', 'a', 'check', 'end']);
    expect(walk.state.stats.a.executions).toBe(3);
    expect(walk.failure).toBeUndefined();
    expect(walk.close()).toEqual(['end']);
  });

  it('a node runs at most 100 times: the 101st execution fails the run and is logged', () => {
    const walk = new Walk(nodes, edges, undefined, () => NOW);
    walkAll(walk, (id) => (id === 'check' ? { branch: 'true' } : {}));
    const cap = FIXED_LIMITS.workflowNodeExecutionCap;
    expect(walk.state.stats.a.executions).toBe(cap);
    expect(walk.failure).toBe(executionCapError('a', cap + 1));
    expect(walk.state.log.at(-1)).toEqual({ level: 'error', node: 'a', message: walk.failure, at: new Date(NOW).toISOString() });
    // Each "true" from check decided end's edge as not taken: the exit never ran.
    expect(walk.state.stats.end.status).toBe('skipped');
    expect(walk.close()).toEqual([]);
  });

  it('a self-loop signal that arrives while the node runs is looked at when it settles', () => {
    const walk = new Walk([node('s'), node('a', { type: 'condition' })], [edge('s', 'a'), edge('a', 'a', 'true')], undefined, () => NOW);
    step(walk, () => ({}), []);
    walk.take();
    walk.succeeded('a', { bytes: 1, durationMs: 1, attempt: 1, branch: 'true' });
    expect(walk.hasReady).toBe(false);
    walk.settled('a');
    expect(walk.state.ready).toEqual(['a']);
  });
});

describe('continue-as-new', () => {
  // a and b start; j joins a's plain edge and b's edge labelled "x", which a plain success does not take.
  const nodes = [node('a'), node('b'), node('j')];
  const edges = [edge('a', 'j'), edge('b', 'j', 'x')];

  it('the state survives JSON and a new walk from it ends as one uninterrupted walk does', () => {
    const whole = new Walk(nodes, edges, undefined, () => NOW);
    expect(walkAll(whole)).toEqual(['a', 'b', 'j']);

    const first = new Walk(nodes, edges, undefined, () => NOW);
    step(first, () => ({}), []);
    // The interpreter continues-as-new with nothing in flight and b still ready.
    const carried = JSON.parse(JSON.stringify(first.snapshot())) as WalkState;
    expect(carried.ready).toEqual(['b']);
    const second = new Walk(nodes, edges, carried, () => NOW);
    // a's decided edge into j was carried: without it j would see only b's edge, not taken, and be skipped.
    expect(walkAll(second)).toEqual(['b', 'j']);
    expect(second.snapshot()).toEqual(whole.snapshot());
    expect(second.close()).toEqual(whole.close());
  });

  it('progress hands out each changed node and new log entry once', () => {
    const walk = new Walk([node('a', { on_error: 'continue' }), node('b')], [edge('a', 'b')], undefined, () => NOW);
    step(walk, () => ({ error: 'boom' }), []);
    const first = walk.progress();
    expect(Object.keys(first?.nodes ?? {})).toEqual(['a']);
    expect(first?.nodes.a.status).toBe('failed');
    expect(first?.log.map((l) => l.message)).toEqual(['failed, continuing (on_error: continue): boom']);
    expect(walk.progress()).toBeUndefined();
    walk.take();
    expect(walk.progress()).toEqual({ nodes: { b: expect.objectContaining({ status: 'running', executions: 1 }) }, log: [] });
    walk.close();
    expect(walk.state.stats.b.status).toBe('cancelled');
  });
});
