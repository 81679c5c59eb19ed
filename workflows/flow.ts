/**
 * The user-workflow interpreter: one Temporal workflow that walks a definition's graph (the
 * DSL-interpreter pattern). Node kinds whose work is I/O run as one activity per execution with
 * that node's timeout and retry policy (temporal/limits.ts); `delay`, `forEach` and `flow.call`
 * are sequenced here (a durable timer, chunked activities, a child workflow).
 *
 * Graph rules (docs/contract.md §7): a run starts at every node with no incoming edge; a node
 * runs once every forward incoming edge has been decided and at least one was taken (join);
 * a node whose incoming edges were all not taken is skipped and passes "not taken" on. An edge
 * that closes a loop re-runs its target when taken; each node runs at most 100 times per run.
 * Outputs stay in MongoDB; only sizes and branch labels reach this code, so history stays small,
 * and the run continues-as-new every 2,000 events or sooner when Temporal suggests it.
 *
 * Tenants share the workers, so a top-level run's whole tree is bounded here: child runs (of
 * flow.call and forEach) count toward one depth and one budget, and the run's width (node
 * executions in flight) is shared with its child runs. A bound that is hit fails the tree.
 */
import {
  ActivityFailure, ApplicationFailure, CancellationScope, ChildWorkflowCancellationType, ChildWorkflowFailure, continueAsNew,
  executeChild, isCancellation, proxyActivities, sleep, workflowInfo,
} from '@temporalio/workflow';
import type { FlowActivities } from '../activities/flows';
import { analyzeGraph } from '../src/flows/graph';
import type { EdgeDef, NodeDef, RunStatus } from '../src/flows/schemas';
import type { NodeStat } from '../src/flows/records';
import type { ItemRef } from '../src/flows/node-runner';
import {
  RUN_WIDTH, RunLogEntry, childBudgetError, childDepthError, executionCapError, forEachCount, runOutputError,
} from '../src/flows/limits';
import { LIMIT_FAILURE_TYPE, nodePolicy, shouldContinueAsNew } from '../temporal/limits';

export interface FlowRunArgs {
  runId: string;
  accountId: string;
  flowId: string;
  nodes: NodeDef[];
  edges: EdgeDef[];
  /** 0 for a run started by a user or a device; each flow.call adds one. */
  depth: number;
  /** Epoch ms when the run's 10 minutes are over. */
  deadline: number;
  /** Top-level runs keep a run record; child runs hand their output to the parent. */
  record: boolean;
  /** Carried across continue-as-new. */
  state?: InterpreterState;
  /** A forEach child run: its input is this item of the parent's items. */
  inputFrom?: ItemRef;
  /** The top-level run of this run's tree, whose record holds the tree's child-run budget; absent on the top-level run. */
  root?: string;
  /** Node executions in flight at once, this run's child runs included; absent = RUN_WIDTH (a top-level run). */
  width?: number;
}

export interface InterpreterState {
  signals: Record<number, 'taken' | 'not_taken'>;
  fresh: number[];
  stats: Record<string, NodeStat>;
  ready: string[];
  log: RunLogEntry[];
  outputBytes: number;
}

export interface FlowRunResult { status: RunStatus; outputBytes: number }

const ITEMS_PER_CHUNK = 100;
const CHUNKS_IN_FLIGHT = 10;
/**
 * forEach child runs: one batch workflow per 500 items (about 3,000 history events), one batch
 * at a time, running as many child runs at once as the forEach's share of the run's width.
 */
const RUNS_PER_BATCH = 500;
const PROGRESS_EVERY_MS = 2_000;
/**
 * A parent that stops (cancelled, or failed by a run limit) does not wait for its child runs to
 * acknowledge: it closes at once and Temporal terminates them (parent close policy), so a whole
 * tree stops in about one workflow task per level. A forEach waits for its batch workflow only,
 * which answers a cancel at once with the counts of the child runs it started.
 */
const CHILD_CANCELLATION = ChildWorkflowCancellationType.TRY_CANCEL;

const bookkeeping = proxyActivities<FlowActivities>({
  startToCloseTimeout: '60 seconds',
  retry: { maximumAttempts: 10, initialInterval: '1 second', maximumInterval: '10 seconds' },
});

interface ChildRunCount { started: number; failed: number }

/** `limit`: a run limit (child-run depth or budget), which ends the whole tree whatever on_error says. */
class NodeError extends Error {
  constructor(message: string, readonly attempts: number, readonly log: RunLogEntry[] = [], readonly limit = false, readonly childRuns?: ChildRunCount) {
    super(message);
  }
}

function failureOf(err: unknown, fallbackAttempts: number): NodeError {
  if (err instanceof NodeError) return err;
  if (err instanceof ActivityFailure || err instanceof ChildWorkflowFailure) {
    const cause = err.cause;
    const details = cause instanceof ApplicationFailure
      ? (cause.details?.[0] as { attempt?: number; root?: string; log?: RunLogEntry[]; childRuns?: ChildRunCount } | undefined)
      : undefined;
    // A child run's failure carries the error that started it, not a chain of "Node failed".
    const message = details?.root ?? (cause?.message || err.message);
    const limit = cause instanceof ApplicationFailure && cause.type === LIMIT_FAILURE_TYPE;
    return new NodeError(cause?.name === 'TimeoutFailure' ? `timed out: ${message}` : message, details?.attempt ?? fallbackAttempts, details?.log, limit, details?.childRuns);
  }
  return new NodeError(err instanceof Error ? err.message : String(err), fallbackAttempts);
}

/** How a run (or a batch of child runs) ends in failure, for its parent to read. */
function runFailure(message: string, root: string, limit: boolean, childRuns?: ChildRunCount): ApplicationFailure {
  return ApplicationFailure.create({ message, type: limit ? LIMIT_FAILURE_TYPE : 'FlowRunFailed', nonRetryable: true, details: [{ root, childRuns }] });
}

export async function flowRun(args: FlowRunArgs): Promise<FlowRunResult> {
  const { nodes, edges } = args;
  const shape = analyzeGraph(nodes, edges);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const forwardIn = new Map(nodes.map((n) => [n.id, (shape.incoming.get(n.id) ?? []).filter((i) => !shape.backEdges.has(i))]));
  const state: InterpreterState = args.state ?? {
    signals: {}, fresh: [], log: [], outputBytes: 0, ready: [...shape.starts],
    stats: Object.fromEntries(nodes.map((n) => [n.id, { status: 'pending', executions: 0, attempts: 0, durationMs: 0, outputBytes: 0 } as NodeStat])),
  };
  const fresh = new Set(state.fresh);
  const inflight = new Map<string, Promise<void>>();
  let failure: string | undefined;
  /** The error at the origin of the failure, handed to a parent run as is. */
  let root: string | undefined;
  /** A run limit was hit: the run stops now, without waiting for what is in flight. */
  let limited = false;
  const width = args.width ?? RUN_WIDTH;
  /** Width units held by the node executions in flight. */
  let used = 0;
  const treeRoot = args.root ?? args.runId;

  const now = () => Date.now();
  const remaining = () => args.deadline - now();
  /** Outputs a node may read: the nodes its config names (an id is a plain word, so text search finds every use). */
  const contextKeys = (n: NodeDef | { config: unknown }): string[] => {
    const text = JSON.stringify(n.config);
    return nodes.filter((m) => text.includes(m.id) && state.stats[m.id].executions > 0).map((m) => m.id);
  };
  const ref = (n: NodeDef, execution: number, timeoutMs: number) => ({
    runId: args.runId, accountId: args.accountId, flowId: args.flowId, nodeId: n.id, execution,
    record: args.record, contextKeys: contextKeys(n), timeoutMs, inputFrom: args.inputFrom,
  });

  const signal = (edgeIndex: number, taken: boolean) => {
    state.signals[edgeIndex] = taken ? 'taken' : 'not_taken';
    fresh.add(edgeIndex);
    consider(edges[edgeIndex].to);
  };

  const consider = (id: string) => {
    if (inflight.has(id) || state.ready.includes(id)) return;
    if ((forwardIn.get(id) ?? []).some((i) => state.signals[i] === undefined)) return;
    const arrived = (shape.incoming.get(id) ?? []).filter((i) => fresh.has(i));
    if (arrived.length === 0) return;
    for (const i of arrived) fresh.delete(i);
    if (arrived.some((i) => state.signals[i] === 'taken')) {
      state.ready.push(id);
    } else if (state.stats[id].status === 'pending') {
      state.stats[id].status = 'skipped';
      for (const i of shape.outgoing.get(id) ?? []) signal(i, false);
    }
  };

  /** Edges taken after a success with `branch` (condition: "true"/"false"; switch: the value). */
  const decideEdges = (id: string, branch: string | undefined) => {
    const outs = (shape.outgoing.get(id) ?? []).filter((i) => edges[i].when !== 'error');
    const matched = branch !== undefined && outs.some((i) => edges[i].when === branch);
    for (const i of shape.outgoing.get(id) ?? []) {
      const when = edges[i].when;
      const taken = when === undefined || (when !== 'error' && (when === branch || (!matched && branch !== undefined && when === 'default' && byId.get(id)?.type === 'switch')));
      signal(i, taken);
    }
  };

  const onSuccess = (id: string, outcome: { bytes: number; branch?: string; durationMs: number; attempt: number; log?: RunLogEntry[] }) => {
    if (outcome.log) state.log.push(...outcome.log);
    const s = state.stats[id];
    Object.assign(s, { status: 'completed', attempts: outcome.attempt, durationMs: s.durationMs + outcome.durationMs, outputBytes: outcome.bytes });
    delete s.error;
    state.outputBytes += outcome.bytes;
    const over = runOutputError(state.outputBytes);
    if (over) {
      failure ??= over;
      return;
    }
    decideEdges(id, outcome.branch);
  };

  const onFailure = (id: string, err: NodeError) => {
    const n = byId.get(id) as NodeDef;
    const s = state.stats[id];
    state.log.push(...err.log);
    Object.assign(s, { status: 'failed', attempts: err.attempts, error: err.message });
    if (err.limit) {
      state.log.push({ level: 'error', node: id, message: err.message, at: new Date(now()).toISOString() });
      root ??= err.message;
      failure ??= `Node "${id}" failed: ${err.message}`;
      limited = true;
      return;
    }
    const errorEdges = (shape.outgoing.get(id) ?? []).filter((i) => edges[i].when === 'error');
    if (errorEdges.length) {
      state.log.push({ level: 'warn', node: id, message: `failed, following its error edges: ${err.message}`, at: new Date(now()).toISOString() });
      for (const i of shape.outgoing.get(id) ?? []) signal(i, edges[i].when === 'error');
    } else if (n.on_error === 'continue') {
      state.log.push({ level: 'warn', node: id, message: `failed, continuing (on_error: continue): ${err.message}`, at: new Date(now()).toISOString() });
      for (const i of shape.outgoing.get(id) ?? []) signal(i, edges[i].when === undefined);
    } else {
      state.log.push({ level: 'error', node: id, message: err.message, at: new Date(now()).toISOString() });
      root ??= err.message;
      failure ??= `Node "${id}" failed: ${err.message}`;
    }
  };

  /** Takes child runs from the tree's budget (on the top-level run's record) before any starts. */
  const reserveChildRuns = async (count: number) => {
    if (count > 0 && !(await bookkeeping.reserveChildRuns({ rootRunId: treeRoot, count }))) throw new NodeError(childBudgetError(count), 1, [], true);
  };
  const childRunsOf = (id: string): ChildRunCount => (state.stats[id].childRuns ??= { started: 0, failed: 0 });

  /** `share`: the width units the node holds; a flow.call or forEach spends them on its child runs. */
  const execute = async (n: NodeDef, execution: number, share: number): Promise<{ bytes: number; branch?: string; durationMs: number; attempt: number; log?: RunLogEntry[] }> => {
    const started = now();
    const policy = nodePolicy(n, n.id, remaining(), started);
    state.log.push(...policy.log);
    const r = ref(n, execution, policy.timeoutMs);
    switch (n.type) {
      case 'delay': {
        await sleep((n.config as { ms: number }).ms);
        return { bytes: 0, durationMs: now() - started, attempt: 1 };
      }
      case 'flow.call': {
        const tooDeep = childDepthError(args.depth + 1, 'flow.call');
        if (tooDeep) throw new NodeError(tooDeep, 1, [], true);
        const cfg = n.config as { workflow_id: string; input?: unknown };
        const childRunId = `${args.runId}.${n.id}.${execution}`;
        const child = await bookkeeping.prepareChildRun({ ...r, workflowId: cfg.workflow_id, input: cfg.input, childRunId });
        await reserveChildRuns(1);
        const count = childRunsOf(n.id);
        count.started++;
        try {
          await executeChild(flowRun, {
            workflowId: `run-${childRunId}`,
            args: [{
              runId: childRunId, accountId: args.accountId, flowId: cfg.workflow_id, nodes: child.nodes, edges: child.edges, depth: args.depth + 1,
              deadline: args.deadline, record: false, root: treeRoot, width: share,
            }],
            workflowExecutionTimeout: Math.max(1_000, remaining()),
            cancellationType: CHILD_CANCELLATION,
            memo: { workflowName: child.name },
          });
        } catch (err) {
          if (!isCancellation(err)) count.failed++;
          throw err;
        }
        return bookkeeping.adoptChildOutput({ ...r, childRunId, startedAt: started });
      }
      case 'forEach': {
        const cfg = n.config as { items: string; max_items?: number; do: { type: string; config: Record<string, unknown> } | { workflow_id: string } };
        const does = cfg.do;
        const tooDeep = 'workflow_id' in does ? childDepthError(args.depth + 1, 'forEach') : undefined;
        if (tooDeep) throw new NodeError(tooDeep, 1, [], true);
        const { length, itemsKey } = await bookkeeping.prepareForEach({ ...r, items: cfg.items });
        const counted = forEachCount(length, cfg.max_items, n.id, now());
        state.log.push(...counted.log);
        if ('workflow_id' in does) {
          const child = await bookkeeping.prepareChildRun({ ...r, workflowId: does.workflow_id });
          await reserveChildRuns(counted.count);
          const prefix = `${args.runId}.${n.id}.${execution}`;
          const count = childRunsOf(n.id);
          const before = { ...count };
          try {
            for (let b = 0; b * RUNS_PER_BATCH < counted.count; b++) {
              try {
                const done = await executeChild(forEachRuns, {
                  workflowId: `run-${prefix}.batch-${b}`,
                  workflowExecutionTimeout: Math.max(1_000, remaining()),
                  args: [{
                    base: {
                      accountId: args.accountId, flowId: does.workflow_id, nodes: child.nodes, edges: child.edges, depth: args.depth + 1,
                      deadline: args.deadline, record: false, root: treeRoot, width: 1,
                    },
                    prefix, items: { runId: args.runId, key: itemsKey }, from: b * RUNS_PER_BATCH, to: Math.min(counted.count, (b + 1) * RUNS_PER_BATCH),
                    continueOnError: n.on_error === 'continue', inFlight: share,
                  }],
                });
                count.started += done.started;
                count.failed += done.failed;
                if (done.cancelled) {
                  // Cancelled with this run (the counts are in): the cancellation goes on from here.
                  const scope = CancellationScope.current();
                  if (scope.consideredCancelled) await scope.cancelRequested;
                  throw new NodeError('its batch of child runs was cancelled', 1);
                }
              } catch (err) {
                const f = failureOf(err, 1);
                count.started += f.childRuns?.started ?? 0;
                count.failed += f.childRuns?.failed ?? 0;
                throw isCancellation(err) ? err : f;
              }
            }
          } finally {
            state.log.push({
              level: count.failed > before.failed ? 'warn' : 'info', node: n.id, at: new Date(now()).toISOString(),
              message: `forEach started ${count.started - before.started} child runs of workflow ${does.workflow_id}; ${count.failed - before.failed} failed`,
            });
          }
          return bookkeeping.assembleForEachRuns({ ...r, childRunPrefix: prefix, count: counted.count, startedAt: started });
        }
        const doNode = does;
        const doRef = { ...r, contextKeys: contextKeys({ config: doNode }) };
        const chunks = Math.ceil(counted.count / ITEMS_PER_CHUNK);
        const chunkActivity = proxyActivities<FlowActivities>({
          startToCloseTimeout: Math.max(1_000, remaining()),
          heartbeatTimeout: Math.min(policy.timeoutMs + 30_000, Math.max(1_000, remaining())),
          retry: policy.activity.retry,
        });
        let nextChunk = 0;
        const worker = async () => {
          while (nextChunk < chunks) {
            const c = nextChunk++;
            await chunkActivity.runForEachChunk({
              ...doRef, doNode, chunk: c, from: c * ITEMS_PER_CHUNK, to: Math.min(counted.count, (c + 1) * ITEMS_PER_CHUNK),
              continueOnError: n.on_error === 'continue',
            });
          }
        };
        await Promise.all(Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, chunks, share) }, worker));
        return bookkeeping.assembleForEach({ ...r, chunks, startedAt: started });
      }
      default: {
        const act = proxyActivities<FlowActivities>(policy.activity);
        return act.runFlowNode({ ...r, type: n.type, config: n.config as Record<string, unknown> });
      }
    }
  };

  /**
   * Top-level runs write their progress (changed nodes, new log entries) at most every 2 s, in
   * the background, so the API shows a running run's nodes without a write per node.
   */
  const dirty = new Set<string>();
  let logSaved = state.log.length;
  // The first progress write goes out at once, so a long first node (a delay) shows as running.
  let lastSave = -Infinity;
  let saving: Promise<void> | undefined;
  const saveProgress = (force = false) => {
    if (!args.record || saving || (!force && now() - lastSave < PROGRESS_EVERY_MS) || (dirty.size === 0 && logSaved === state.log.length)) return;
    const changed = Object.fromEntries([...dirty].map((id) => [id, { ...state.stats[id] }]));
    const log = state.log.slice(logSaved);
    dirty.clear();
    logSaved = state.log.length;
    lastSave = now();
    saving = bookkeeping.saveFlowProgress({ runId: args.runId, nodes: changed, log, outputBytes: state.outputBytes, temporalRunId: workflowInfo().firstExecutionRunId })
      .catch(() => undefined)
      .finally(() => { saving = undefined; });
  };

  const launch = (id: string) => {
    const s = state.stats[id];
    const execution = s.executions + 1;
    const capped = executionCapError(id, execution);
    if (capped) {
      state.log.push({ level: 'error', node: id, message: capped, at: new Date(now()).toISOString() });
      failure ??= capped;
      return;
    }
    s.executions = execution;
    s.status = 'running';
    dirty.add(id);
    const n = byId.get(id) as NodeDef;
    // Nodes that start child runs take every free unit for them; any other node takes one.
    const share = n.type === 'flow.call' || n.type === 'forEach' ? Math.max(1, width - used) : 1;
    used += share;
    const p = execute(n, execution, share)
      .then((outcome) => onSuccess(id, outcome), (err: unknown) => {
        if (isCancellation(err)) throw err;
        onFailure(id, failureOf(err, 1));
      })
      .finally(() => {
        used -= share;
        inflight.delete(id);
        dirty.add(id);
        saveProgress();
        // Signals that arrived while it ran (a loop coming round) are looked at now.
        consider(id);
      });
    inflight.set(id, p);
  };

  const finish = async (status: RunStatus, error: string | null) => {
    if (saving) await saving;
    for (const s of Object.values(state.stats)) {
      if (s.status === 'pending') s.status = 'skipped';
      // In flight when the run was cancelled or stopped by a run limit.
      if (s.status === 'running') s.status = 'cancelled';
    }
    const terminals = nodes.filter((n) => (shape.outgoing.get(n.id) ?? []).length === 0 && state.stats[n.id].status === 'completed').map((n) => n.id);
    await bookkeeping.finishFlowRun({ runId: args.runId, record: args.record, status, error, nodes: state.stats, log: state.log, outputBytes: state.outputBytes, terminals });
  };

  let draining = false;
  try {
    for (;;) {
      while (!failure && !draining && state.ready.length && used < width) launch(state.ready.shift() as string);
      // A run limit stops the tree now: what is in flight is abandoned (child runs are terminated with this run).
      if (inflight.size === 0 || limited) break;
      saveProgress();
      await Promise.race(inflight.values());
      if (shouldContinueAsNew(workflowInfo())) draining = true;
    }
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => finish('cancelled', null));
      throw err;
    }
    failure ??= err instanceof Error ? err.message : String(err);
  }
  if (!failure && draining && state.ready.length) {
    // Temporal asked for a fresh history: the walk goes on in a new execution of this run.
    state.fresh = [...fresh];
    await continueAsNew<typeof flowRun>({ ...args, state });
  }
  if (failure) {
    await finish('failed', failure);
    throw runFailure(failure, root ?? failure, limited);
  }
  await finish('completed', null);
  return { status: 'completed', outputBytes: state.outputBytes };
}

export interface ForEachRunsArgs {
  /** The child runs' arguments but their run id and item. */
  base: Omit<FlowRunArgs, 'runId' | 'inputFrom' | 'state'>;
  /** Child run ids are `<prefix>.<index>`. */
  prefix: string;
  items: { runId: string; key: string };
  from: number;
  to: number;
  continueOnError: boolean;
  /** Child runs at once: the forEach's share of its run's width. */
  inFlight: number;
}

/**
 * One batch of a forEach's child runs (items [from, to)), kept apart from the parent so neither
 * history holds thousands of child events. The first failed child fails the batch unless the
 * forEach continues on error; a child stopped by a run limit fails it at once, whatever
 * on_error says (the batch closes and its other children are terminated with it).
 */
export async function forEachRuns(a: ForEachRunsArgs): Promise<ChildRunCount & { cancelled?: boolean }> {
  let next = a.from;
  let failure: string | undefined;
  const count: ChildRunCount = { started: 0, failed: 0 };
  const worker = async () => {
    while (next < a.to && !failure) {
      const i = next++;
      count.started++;
      try {
        await executeChild(flowRun, {
          workflowId: `run-${a.prefix}.${i}`,
          workflowExecutionTimeout: Math.max(1_000, a.base.deadline - Date.now()),
          cancellationType: CHILD_CANCELLATION,
          args: [{ ...a.base, runId: `${a.prefix}.${i}`, inputFrom: { ...a.items, index: i } }],
        });
      } catch (err) {
        if (isCancellation(err)) throw err;
        count.failed++;
        const f = failureOf(err, 1);
        if (f.limit) throw runFailure(f.message, f.message, true, count);
        if (!a.continueOnError) failure ??= `item ${i}: ${f.message}`;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(Math.max(1, a.inFlight), a.to - a.from) }, worker));
  } catch (err) {
    // Cancelled with its run: the parent gets the counts; the children are terminated as this batch closes.
    if (isCancellation(err)) return { ...count, cancelled: true };
    throw err;
  }
  if (failure) throw runFailure(failure, failure, false, count);
  return count;
}
