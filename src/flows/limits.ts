/**
 * The product limits of one user workflow run and the run log that says what a limit changed, in
 * one module (pure: the interpreter workflow imports it inside the deterministic sandbox). Numbers
 * come from FIXED_LIMITS; temporal/limits.ts maps them to Temporal options.
 */
import { FIXED_LIMITS as L } from '../accounts/plans';

export interface RunLogEntry {
  level: 'info' | 'warn' | 'error';
  node?: string;
  message: string;
  at: string;
}

export const RUN_TIMEOUT_MS = L.workflowRunTimeoutMs;
export const RUN_TIMEOUT_ERROR = 'Workflow execution timed out';

export const logEntry = (at: number, node: string | undefined, message: string, level: RunLogEntry['level'] = 'warn'): RunLogEntry =>
  ({ level, ...(node ? { node } : {}), message, at: new Date(at).toISOString() });

/** forEach: `max_items` default 1,000, hard maximum 10,000; a longer array is truncated. */
export function forEachCount(length: number, maxItems: number | undefined, nodeId: string, now: number): { count: number; log: RunLogEntry[] } {
  const log: RunLogEntry[] = [];
  let max = maxItems ?? L.workflowForEachDefaultItems;
  if (max > L.workflowForEachMaxItems) {
    log.push(logEntry(now, nodeId, `max_items ${max} capped to the hard maximum of ${L.workflowForEachMaxItems}`));
    max = L.workflowForEachMaxItems;
  }
  if (length > max) {
    log.push(logEntry(now, nodeId, `forEach items truncated from ${length} to ${max}`));
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
