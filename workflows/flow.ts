/**
 * The user-workflow interpreter: one Temporal workflow that runs what the graph walk
 * (src/flows/walker.ts, pure and unit-tested: joins, skips, error and loop edges, the execution
 * cap) hands it (the DSL-interpreter pattern). Node kinds whose work is I/O run as one activity
 * per execution with that node's timeout and retry policy (temporal/limits.ts); `delay`,
 * `forEach` and `flow.call` are sequenced here (a durable timer, chunked activities, child
 * workflows), each in one function below.
 *
 * Outputs stay in MongoDB; only sizes and branch labels reach this code, so history stays small,
 * and the run continues-as-new every 2,000 events or sooner when Temporal suggests it, carrying
 * the walk's state.
 *
 * Tenants share the workers, so a top-level run's whole tree is bounded here: child runs (of
 * flow.call and forEach) count toward one depth and one budget, and the run's width (node
 * executions in flight) is shared with its child runs. A bound that is hit fails the tree.
 */
import {
  ActivityFailure, ApplicationFailure, CancellationScope, ChildWorkflowCancellationType, ChildWorkflowFailure, continueAsNew,
  executeChild, isCancellation, proxyActivities, sleep, TimeoutFailure, workflowInfo,
} from '@temporalio/workflow';
import type { FlowActivities } from '../activities/flows';
import { Walk, WalkState } from '../src/flows/walker';
import type { EdgeDef, NodeDef, RunStatus } from '../src/flows/schemas';
import type { ItemRef, NodeOutcome, NodeRef } from '../src/flows/node-runner';
import type { FlowCallConfig } from '../src/flows/nodes/flow-call';
import type { ForEachConfig, ForEachDoNode } from '../src/flows/nodes/for-each';
import {
  RUN_WIDTH, RunLogEntry, childBudgetError, childDepthError, forEachCount,
} from '../src/flows/limits';
import { LIMIT_FAILURE_TYPE, NODE_HEARTBEAT_TIMEOUT_MS, NodePolicy, nodePolicy, shouldContinueAsNew } from '../temporal/limits';

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
  /** The walk, carried across continue-as-new. */
  state?: WalkState;
  /** A forEach child run: its input is this item of the parent's items. */
  inputFrom?: ItemRef;
  /** The top-level run of this run's tree, whose record holds the tree's child-run budget; absent on the top-level run. */
  root?: string;
  /** Node executions in flight at once, this run's child runs included; absent = RUN_WIDTH (a top-level run). */
  width?: number;
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

/** `limit`: a run limit (child-run depth or budget), which ends the whole tree whatever on_error says (the walk's NodeFailure). */
class NodeError extends Error {
  constructor(message: string, readonly attempts: number, readonly log: RunLogEntry[] = [], readonly limit = false, readonly childRuns?: ChildRunCount) {
    super(message);
  }
}

/**
 * What a timed-out attempt says. Temporal's own words ("activity StartToClose timeout") do not
 * say that a worker killed mid-node ends the same way.
 */
function timeoutMessage(t: TimeoutFailure, timeoutMs: number | undefined): string {
  if (t.timeoutType === 'HEARTBEAT') {
    return `timed out: the worker running it stopped answering (no heartbeat for ${NODE_HEARTBEAT_TIMEOUT_MS / 1000} s: stopped, or its host overloaded)`;
  }
  if (t.timeoutType === 'START_TO_CLOSE' && timeoutMs !== undefined) {
    return `timed out after ${timeoutMs} ms (its timeout_ms), still running or on a worker that stopped`;
  }
  return `timed out: ${t.message}`;
}

function failureOf(err: unknown, fallbackAttempts: number, timeoutMs?: number): NodeError {
  if (err instanceof NodeError) return err;
  if (err instanceof ActivityFailure || err instanceof ChildWorkflowFailure) {
    const cause = err.cause;
    const details = cause instanceof ApplicationFailure
      ? (cause.details?.[0] as { attempt?: number; root?: string; log?: RunLogEntry[]; childRuns?: ChildRunCount } | undefined)
      : undefined;
    // A child run's failure carries the error that started it, not a chain of "Node failed".
    const message = details?.root ?? (cause?.message || err.message);
    const limit = cause instanceof ApplicationFailure && cause.type === LIMIT_FAILURE_TYPE;
    return new NodeError(cause instanceof TimeoutFailure ? timeoutMessage(cause, timeoutMs) : message, details?.attempt ?? fallbackAttempts, details?.log, limit, details?.childRuns);
  }
  return new NodeError(err instanceof Error ? err.message : String(err), fallbackAttempts);
}

/** How a run (or a batch of child runs) ends in failure, for its parent to read. */
function runFailure(message: string, root: string, limit: boolean, childRuns?: ChildRunCount): ApplicationFailure {
  return ApplicationFailure.create({ message, type: limit ? LIMIT_FAILURE_TYPE : 'FlowRunFailed', nonRetryable: true, details: [{ root, childRuns }] });
}

/** One node execution handed out by the walk, with what it runs under. */
interface Step {
  args: FlowRunArgs;
  walk: Walk;
  node: NodeDef;
  execution: number;
  /** The width units the node holds; a flow.call or forEach spends them on its child runs. */
  share: number;
  started: number;
  policy: NodePolicy;
  ref: NodeRef;
}

const remaining = (args: FlowRunArgs) => args.deadline - Date.now();
const treeRootOf = (args: FlowRunArgs) => args.root ?? args.runId;

/** Takes child runs from the tree's budget (on the top-level run's record) before any starts. */
async function reserveChildRuns(args: FlowRunArgs, count: number): Promise<void> {
  if (count > 0 && !(await bookkeeping.reserveChildRuns({ rootRunId: treeRootOf(args), count }))) throw new NodeError(childBudgetError(count), 1, [], true);
}

const childRunsOf = (s: Step): ChildRunCount => (s.walk.state.stats[s.node.id].childRuns ??= { started: 0, failed: 0 });

async function execute(args: FlowRunArgs, walk: Walk, node: NodeDef, execution: number, share: number): Promise<NodeOutcome> {
  const started = Date.now();
  const policy = nodePolicy(node, node.id, remaining(args), started);
  walk.state.log.push(...policy.log);
  const ref: NodeRef = {
    runId: args.runId, accountId: args.accountId, flowId: args.flowId, nodeId: node.id, execution,
    record: args.record, contextKeys: walk.contextKeys(node.config), timeoutMs: policy.timeoutMs, inputFrom: args.inputFrom,
  };
  const step: Step = { args, walk, node, execution, share, started, policy, ref };
  switch (node.type) {
    case 'delay':
      await sleep((node.config as { ms: number }).ms);
      return { bytes: 0, durationMs: Date.now() - started, attempt: 1 };
    case 'flow.call':
      return flowCall(step);
    case 'forEach': {
      const cfg = node.config as ForEachConfig;
      return 'workflow_id' in cfg.do ? forEachRunsOf(step, cfg, cfg.do.workflow_id) : forEachChunks(step, cfg, cfg.do);
    }
    default:
      try {
        return await proxyActivities<FlowActivities>(policy.activity).runFlowNode({ ...ref, type: node.type, config: node.config as Record<string, unknown> });
      } catch (err) {
        // A timed-out attempt reports no attempt number of its own: when the retries ran out,
        // every allowed attempt ran (an outside probe saw `attempts: 1` after three requests).
        if (err instanceof ActivityFailure && err.retryState === 'MAXIMUM_ATTEMPTS_REACHED' && !(err.cause instanceof ApplicationFailure)) {
          throw failureOf(err, policy.maxAttempts, policy.timeoutMs);
        }
        if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure) throw failureOf(err, 1, policy.timeoutMs);
        throw err;
      }
  }
}

/** flow.call: the child run of another workflow, whose output becomes the node's. */
async function flowCall(s: Step): Promise<NodeOutcome> {
  const { args, node: n, ref } = s;
  const tooDeep = childDepthError(args.depth + 1, 'flow.call');
  if (tooDeep) throw new NodeError(tooDeep, 1, [], true);
  const cfg = n.config as FlowCallConfig;
  const childRunId = `${args.runId}.${n.id}.${s.execution}`;
  const child = await bookkeeping.prepareChildRun({ ...ref, workflowId: cfg.workflow_id, input: cfg.input, childRunId });
  await reserveChildRuns(args, 1);
  const count = childRunsOf(s);
  count.started++;
  try {
    await executeChild(flowRun, {
      workflowId: `run-${childRunId}`,
      args: [{
        runId: childRunId, accountId: args.accountId, flowId: cfg.workflow_id, nodes: child.nodes, edges: child.edges, depth: args.depth + 1,
        deadline: args.deadline, record: false, root: treeRootOf(args), width: s.share,
      }],
      workflowExecutionTimeout: Math.max(1_000, remaining(args)),
      cancellationType: CHILD_CANCELLATION,
      memo: { workflowName: child.name },
    });
  } catch (err) {
    if (!isCancellation(err)) count.failed++;
    throw err;
  }
  return bookkeeping.adoptChildOutput({ ...ref, childRunId, startedAt: s.started });
}

/** forEach step 1 (an activity): the items, stored; how many the forEach takes (capped, logged). */
async function forEachItems(s: Step, cfg: ForEachConfig): Promise<{ count: number; itemsKey: string }> {
  const { length, itemsKey } = await bookkeeping.prepareForEach({ ...s.ref, items: cfg.items });
  const counted = forEachCount(length, cfg.max_items, s.node.id, Date.now());
  s.walk.state.log.push(...counted.log);
  return { count: counted.count, itemsKey };
}

/** forEach over a workflow: a child run per item, in batch workflows of 500 (forEachRuns below), one batch at a time. */
async function forEachRunsOf(s: Step, cfg: ForEachConfig, workflowId: string): Promise<NodeOutcome> {
  const { args, node: n, ref } = s;
  const tooDeep = childDepthError(args.depth + 1, 'forEach');
  if (tooDeep) throw new NodeError(tooDeep, 1, [], true);
  const { count: items, itemsKey } = await forEachItems(s, cfg);
  const child = await bookkeeping.prepareChildRun({ ...ref, workflowId });
  await reserveChildRuns(args, items);
  const prefix = `${args.runId}.${n.id}.${s.execution}`;
  const count = childRunsOf(s);
  const before = { ...count };
  try {
    for (let b = 0; b * RUNS_PER_BATCH < items; b++) {
      try {
        const done = await executeChild(forEachRuns, {
          workflowId: `run-${prefix}.batch-${b}`,
          workflowExecutionTimeout: Math.max(1_000, remaining(args)),
          args: [{
            base: {
              accountId: args.accountId, flowId: workflowId, nodes: child.nodes, edges: child.edges, depth: args.depth + 1,
              deadline: args.deadline, record: false, root: treeRootOf(args), width: 1,
            },
            prefix, items: { runId: args.runId, key: itemsKey }, from: b * RUNS_PER_BATCH, to: Math.min(items, (b + 1) * RUNS_PER_BATCH),
            continueOnError: n.on_error === 'continue', inFlight: s.share,
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
    s.walk.state.log.push({
      level: count.failed > before.failed ? 'warn' : 'info', node: n.id, at: new Date(Date.now()).toISOString(),
      message: `forEach started ${count.started - before.started} child runs of workflow ${workflowId}; ${count.failed - before.failed} failed`,
    });
  }
  return bookkeeping.assembleForEachRuns({ ...ref, childRunPrefix: prefix, count: items, startedAt: s.started });
}

/** forEach over a node: chunk activities of 100 items, 10 at a time (at most the node's share), then the outputs joined. */
async function forEachChunks(s: Step, cfg: ForEachConfig, doNode: ForEachDoNode): Promise<NodeOutcome> {
  const { args, ref, policy } = s;
  const { count } = await forEachItems(s, cfg);
  const doRef = { ...ref, contextKeys: s.walk.contextKeys(doNode) };
  const chunks = Math.ceil(count / ITEMS_PER_CHUNK);
  const chunkActivity = proxyActivities<FlowActivities>({
    startToCloseTimeout: Math.max(1_000, remaining(args)),
    heartbeatTimeout: Math.min(policy.timeoutMs + 30_000, Math.max(1_000, remaining(args))),
    retry: policy.activity.retry,
  });
  let nextChunk = 0;
  const worker = async () => {
    while (nextChunk < chunks) {
      const c = nextChunk++;
      await chunkActivity.runForEachChunk({
        ...doRef, doNode, chunk: c, from: c * ITEMS_PER_CHUNK, to: Math.min(count, (c + 1) * ITEMS_PER_CHUNK),
        continueOnError: s.node.on_error === 'continue',
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, chunks, s.share) }, worker));
  return bookkeeping.assembleForEach({ ...ref, chunks, startedAt: s.started });
}

/** Walks the graph: starts what the walk hands out while width allows, until nothing is in flight. */
export async function flowRun(args: FlowRunArgs): Promise<FlowRunResult> {
  const walk = new Walk(args.nodes, args.edges, args.state, () => Date.now());
  const inflight = new Map<string, Promise<void>>();
  const width = args.width ?? RUN_WIDTH;
  /** Width units held by the node executions in flight. */
  let used = 0;

  /**
   * Top-level runs write their progress (changed nodes, new log entries) at most every 2 s, in
   * the background, so the API shows a running run's nodes without a write per node. The first
   * write goes out at once, so a long first node (a delay) shows as running.
   */
  let lastSave = -Infinity;
  let saving: Promise<void> | undefined;
  const saveProgress = () => {
    if (!args.record || saving || Date.now() - lastSave < PROGRESS_EVERY_MS) return;
    const changed = walk.progress();
    if (!changed) return;
    lastSave = Date.now();
    saving = bookkeeping.saveFlowProgress({ runId: args.runId, ...changed, outputBytes: walk.state.outputBytes, temporalRunId: workflowInfo().firstExecutionRunId })
      .catch(() => undefined)
      .finally(() => { saving = undefined; });
  };

  const launch = (node: NodeDef, execution: number) => {
    // Nodes that start child runs take every free unit for them; any other node takes one.
    const share = node.type === 'flow.call' || node.type === 'forEach' ? Math.max(1, width - used) : 1;
    used += share;
    const p = execute(args, walk, node, execution, share)
      .then((outcome) => walk.succeeded(node.id, outcome), (err: unknown) => {
        if (isCancellation(err)) throw err;
        walk.failed(node.id, failureOf(err, 1));
      })
      .finally(() => {
        used -= share;
        inflight.delete(node.id);
        walk.settled(node.id);
        saveProgress();
      });
    inflight.set(node.id, p);
  };

  const finish = async (status: RunStatus, error: string | null) => {
    if (saving) await saving;
    const terminals = walk.close();
    const { stats: nodes, log, outputBytes } = walk.state;
    await bookkeeping.finishFlowRun({ runId: args.runId, record: args.record, status, error, nodes, log, outputBytes, terminals });
  };

  let draining = false;
  try {
    for (;;) {
      while (!walk.failure && !draining && walk.hasReady && used < width) {
        const next = walk.take();
        if (next) launch(next.node, next.execution);
      }
      // A run limit stops the tree now: what is in flight is abandoned (child runs are terminated with this run).
      if (inflight.size === 0 || walk.limited) break;
      saveProgress();
      await Promise.race(inflight.values());
      if (shouldContinueAsNew(workflowInfo())) draining = true;
    }
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => finish('cancelled', null));
      throw err;
    }
    walk.failure ??= err instanceof Error ? err.message : String(err);
  }
  if (!walk.failure && draining && walk.hasReady) {
    // Temporal asked for a fresh history: the walk goes on in a new execution of this run.
    await continueAsNew<typeof flowRun>({ ...args, state: walk.snapshot() });
  }
  if (walk.failure) {
    await finish('failed', walk.failure);
    throw runFailure(walk.failure, walk.root ?? walk.failure, walk.limited);
  }
  await finish('completed', null);
  return { status: 'completed', outputBytes: walk.state.outputBytes };
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
