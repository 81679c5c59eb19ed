/**
 * The product limits of user workflows (src/flows/limits.ts) mapped to Temporal options (pure:
 * the interpreter workflow imports it inside the deterministic sandbox). Every capping returns a
 * run-log entry so the run says what was changed.
 */
import { FIXED_LIMITS as L, PLANS } from '../src/accounts/plans';
import { RUN_TIMEOUT_MS, RUN_WIDTH, logEntry, type RunLogEntry } from '../src/flows/limits';

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
 * How long a node's worker may go without a heartbeat before the attempt counts as lost. Long
 * enough that a busy event loop does not fail a node that is still running.
 */
export const NODE_HEARTBEAT_TIMEOUT_MS = 30_000;

/**
 * Timeout: default 30 s, ceiling 5 min, trimmed to the time left in the run. Attempts: default 1,
 * ceiling 5, lowered so that attempts x timeout (plus the waits between them) fits the time left.
 */
export function nodePolicy(node: NodePolicyInput, nodeId: string, remainingMs: number, now: number): NodePolicy {
  const log: RunLogEntry[] = [];
  const left = Math.max(1_000, Math.floor(remainingMs));
  let timeoutMs = node.timeout_ms ?? L.workflowNodeTimeoutDefaultMs;
  if (timeoutMs > L.workflowNodeTimeoutCeilingMs) {
    log.push(logEntry(now, nodeId, `timeout_ms ${timeoutMs} capped to the ceiling of ${L.workflowNodeTimeoutCeilingMs} ms`));
    timeoutMs = L.workflowNodeTimeoutCeilingMs;
  }
  if (timeoutMs > left) {
    log.push(logEntry(now, nodeId, `timeout_ms ${timeoutMs} trimmed to the ${left} ms left in the run`));
    timeoutMs = left;
  }
  const backoffMs = node.retry?.backoff_ms ?? DEFAULT_BACKOFF_MS;
  let maxAttempts = node.retry?.max_attempts ?? 1;
  if (maxAttempts > L.workflowRetryAttemptsCeiling) {
    log.push(logEntry(now, nodeId, `retry.max_attempts ${maxAttempts} capped to the ceiling of ${L.workflowRetryAttemptsCeiling}`));
    maxAttempts = L.workflowRetryAttemptsCeiling;
  }
  const fits = Math.max(1, Math.floor((left + backoffMs) / (timeoutMs + backoffMs)));
  if (maxAttempts > fits) {
    log.push(logEntry(now, nodeId, `retry.max_attempts ${maxAttempts} lowered to ${fits} so that attempts x timeout (${timeoutMs} ms) fits the ${left} ms left in the run`));
    maxAttempts = fits;
  }
  return {
    timeoutMs, maxAttempts, backoffMs, log,
    activity: {
      startToCloseTimeout: timeoutMs,
      // A node longer than this learns of a worker that died under it from the missing heartbeats
      // (activities/flows.ts beats every 2 s) instead of at its own timeout, up to 5 minutes later.
      ...(timeoutMs > NODE_HEARTBEAT_TIMEOUT_MS ? { heartbeatTimeout: NODE_HEARTBEAT_TIMEOUT_MS } : {}),
      scheduleToCloseTimeout: left,
      retry: { maximumAttempts: maxAttempts, initialInterval: Math.max(1, backoffMs), backoffCoefficient: 1, maximumInterval: Math.max(1, backoffMs) },
    },
  };
}

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
