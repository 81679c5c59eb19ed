/**
 * The product limits of user workflows mapped to Temporal options, in one module (pure: the
 * interpreter workflow imports it inside the deterministic sandbox). Numbers come from
 * FIXED_LIMITS; every capping returns a run-log entry so the run says what was changed.
 */
import { FIXED_LIMITS as L, PLANS } from '../src/accounts/plans';

export interface RunLogEntry {
  level: 'info' | 'warn' | 'error';
  node?: string;
  message: string;
  at: string;
}

export const RUN_TIMEOUT_MS = L.workflowRunTimeoutMs;
export const RUN_TIMEOUT_ERROR = 'Workflow execution timed out';

const entry = (at: number, node: string | undefined, message: string, level: RunLogEntry['level'] = 'warn'): RunLogEntry =>
  ({ level, ...(node ? { node } : {}), message, at: new Date(at).toISOString() });

/** A retry between attempts waits this long unless the node says otherwise. */
export const DEFAULT_BACKOFF_MS = 1_000;

export interface NodePolicyInput {
  timeout_ms?: number;
  retry?: { max_attempts: number; backoff_ms?: number };
}

export interface NodePolicy {
  timeoutMs: number;
  maxAttempts: number;
  backoffMs: number;
  /** For proxyActivities. */
  activity: {
    startToCloseTimeout: number;
    scheduleToCloseTimeout: number;
    retry: { maximumAttempts: number; initialInterval: number; backoffCoefficient: number; maximumInterval: number };
  };
  log: RunLogEntry[];
}

/**
 * Timeout: default 30 s, ceiling 5 min, trimmed to the time left in the run. Attempts: default 1,
 * ceiling 5, lowered so that attempts x timeout (plus the waits between them) fits the time left.
 */
export function nodePolicy(node: NodePolicyInput, nodeId: string, remainingMs: number, now: number): NodePolicy {
  const log: RunLogEntry[] = [];
  const left = Math.max(1_000, Math.floor(remainingMs));
  let timeoutMs = node.timeout_ms ?? L.workflowNodeTimeoutDefaultMs;
  if (timeoutMs > L.workflowNodeTimeoutCeilingMs) {
    log.push(entry(now, nodeId, `timeout_ms ${timeoutMs} capped to the ceiling of ${L.workflowNodeTimeoutCeilingMs} ms`));
    timeoutMs = L.workflowNodeTimeoutCeilingMs;
  }
  if (timeoutMs > left) {
    log.push(entry(now, nodeId, `timeout_ms ${timeoutMs} trimmed to the ${left} ms left in the run`));
    timeoutMs = left;
  }
  const backoffMs = node.retry?.backoff_ms ?? DEFAULT_BACKOFF_MS;
  let maxAttempts = node.retry?.max_attempts ?? 1;
  if (maxAttempts > L.workflowRetryAttemptsCeiling) {
    log.push(entry(now, nodeId, `retry.max_attempts ${maxAttempts} capped to the ceiling of ${L.workflowRetryAttemptsCeiling}`));
    maxAttempts = L.workflowRetryAttemptsCeiling;
  }
  const fits = Math.max(1, Math.floor((left + backoffMs) / (timeoutMs + backoffMs)));
  if (maxAttempts > fits) {
    log.push(entry(now, nodeId, `retry.max_attempts ${maxAttempts} lowered to ${fits} so that attempts x timeout (${timeoutMs} ms) fits the ${left} ms left in the run`));
    maxAttempts = fits;
  }
  return {
    timeoutMs, maxAttempts, backoffMs, log,
    activity: {
      startToCloseTimeout: timeoutMs,
      scheduleToCloseTimeout: left,
      retry: { maximumAttempts: maxAttempts, initialInterval: Math.max(1, backoffMs), backoffCoefficient: 1, maximumInterval: Math.max(1, backoffMs) },
    },
  };
}

/** forEach: `max_items` default 1,000, hard maximum 10,000; a longer array is truncated. */
export function forEachCount(length: number, maxItems: number | undefined, nodeId: string, now: number): { count: number; log: RunLogEntry[] } {
  const log: RunLogEntry[] = [];
  let max = maxItems ?? L.workflowForEachDefaultItems;
  if (max > L.workflowForEachMaxItems) {
    log.push(entry(now, nodeId, `max_items ${max} capped to the hard maximum of ${L.workflowForEachMaxItems}`));
    max = L.workflowForEachMaxItems;
  }
  if (length > max) {
    log.push(entry(now, nodeId, `forEach items truncated from ${length} to ${max}`));
    return { count: max, log };
  }
  return { count: length, log };
}

/**
 * Nesting of child runs: the top-level run is depth 0 and each flow.call or forEach child run
 * adds one, so both count toward one depth; a child at depth 11 is refused.
 */
export function childDepthError(childDepth: number, kind: 'flow.call' | 'forEach'): string | undefined {
  if (childDepth <= L.workflowFlowCallDepth) return undefined;
  return kind === 'flow.call'
    ? `flow.call nesting depth ${childDepth} exceeds the maximum of ${L.workflowFlowCallDepth}`
    : `forEach child run nesting depth ${childDepth} exceeds the maximum of ${L.workflowFlowCallDepth} (flow.call and forEach child runs count together)`;
}

/** Child runs of one top-level run's whole tree (every depth); a reservation past it is refused. */
export const CHILD_RUNS_PER_RUN = L.workflowChildRunsPerRun;

export function childBudgetError(wanted: number): string {
  return `starting ${wanted} more child run${wanted === 1 ? '' : 's'} would pass the limit of ${CHILD_RUNS_PER_RUN} child runs per run (flow.call and forEach child runs at every depth)`;
}

/**
 * Node executions in flight in one run, its child runs included: a flow.call or forEach takes
 * the run's free share for its child runs, which run with that share as their own width.
 */
export const RUN_WIDTH = L.workflowRunWidth;

/**
 * A run limit (child-run depth, child-run budget) ends the whole tree: neither `on_error:
 * continue` nor error edges catch it, and a parent's batch stops at once. The Temporal failure
 * type that carries it up the tree.
 */
export const LIMIT_FAILURE_TYPE = 'FlowRunLimit';

/**
 * The worker's activity slots: twice what the largest plan's account can hold at once (its
 * concurrent runs x the run width), so one account never holds every slot; the task queue's
 * fairness key (the account) orders what waits.
 */
export const WORKER_ACTIVITY_SLOTS = 2 * Math.max(...Object.values(PLANS).map((p) => p.concurrentWorkflowRuns)) * RUN_WIDTH;

/** The 101st execution of one node in a run fails the run, naming the node. */
export function executionCapError(nodeId: string, execution: number): string | undefined {
  return execution > L.workflowNodeExecutionCap
    ? `Node "${nodeId}" reached the node execution cap of ${L.workflowNodeExecutionCap} executions per run`
    : undefined;
}

export function stepOutputError(nodeId: string, bytes: number): string | undefined {
  return bytes > L.workflowStepOutputBytes
    ? `Output of node "${nodeId}" is ${bytes} bytes; the step output limit is ${L.workflowStepOutputBytes} bytes (10 MB)`
    : undefined;
}

export function runOutputError(totalBytes: number): string | undefined {
  return totalBytes > L.workflowRunOutputBytes
    ? `The run's outputs reached ${totalBytes} bytes; the limit per run is ${L.workflowRunOutputBytes} bytes (100 MB)`
    : undefined;
}

/**
 * The interpreter continues-as-new when Temporal suggests it or once an execution's history
 * reaches this many events: histories stay far below Temporal's limits (50,000 events, 50 MB)
 * and a worker that takes a run over replays little.
 */
export const HISTORY_EVENTS_PER_EXECUTION = 2_000;

export function shouldContinueAsNew(info: { continueAsNewSuggested: boolean; historyLength: number }): boolean {
  return info.continueAsNewSuggested || info.historyLength >= HISTORY_EVENTS_PER_EXECUTION;
}

/** Options of the Temporal execution of one run. */
export function runStartOptions(): { workflowExecutionTimeout: number } {
  return { workflowExecutionTimeout: RUN_TIMEOUT_MS };
}
