/**
 * Activities of the user-workflow interpreter (workflows/flow.ts): thin wrappers over
 * src/flows/node-runner.ts that add what only an activity knows (attempt number, heartbeats,
 * cancellation) and turn a node failure into a Temporal failure the workflow can read.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { NodeFailure } from '../src/flows/nodes/types';
import type { NodeRunner, NodeRef, RunNodeArgs } from '../src/flows/node-runner';
import { adoptChildOutput } from '../src/flows/nodes/flow-call';
import { assembleForEach, assembleForEachRuns, prepareForEach, runForEachChunk } from '../src/flows/nodes/for-each';

/** Failure details the interpreter reads: the attempt that failed and the run-log lines it wrote. */
export interface NodeFailureDetails { attempt: number; log?: NodeFailure['log'] }

async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const attempt = Context.current().info.attempt;
    if (err instanceof NodeFailure) {
      throw ApplicationFailure.create({ message: err.message, type: 'NodeFailure', nonRetryable: !err.retryable, details: [{ attempt, ...(err.log ? { log: err.log } : {}) }] });
    }
    throw ApplicationFailure.create({ message: (err as Error).message ?? String(err), type: 'NodeError', details: [{ attempt }] });
  }
}

/**
 * How often a running node heartbeats. Temporal hands an activity its cancellation only in the
 * answer to a heartbeat: without them a cancelled run's Python jail (or HTTP wait) ran on to its
 * node timeout, holding its slot (an outside probe: 80 s after the cancel). The worker sends them
 * on at most this often (temporal/worker.ts, defaultHeartbeatThrottleInterval). Nodes longer
 * than 30 s also have a 30 s heartbeat timeout (temporal/limits.ts), so a worker that died under
 * one is noticed then; shorter ones have none: a busy event loop must not fail a running node.
 */
export const NODE_HEARTBEAT_MS = 2_000;

export function createFlowActivities(runner: NodeRunner) {
  return {
    async runFlowNode(args: Omit<RunNodeArgs, 'attempt'>) {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), NODE_HEARTBEAT_MS);
      try {
        return await guarded(() => runner.runNode({ ...args, attempt: ctx.info.attempt }, ctx.cancellationSignal));
      } finally {
        clearInterval(beat);
      }
    },
    async prepareForEach(args: NodeRef & { items: string }) {
      return guarded(() => prepareForEach(runner, args));
    },
    async runForEachChunk(args: Parameters<typeof runForEachChunk>[1]) {
      const ctx = Context.current();
      return guarded(() => runForEachChunk(runner, args, () => ctx.heartbeat(), ctx.cancellationSignal));
    },
    async assembleForEach(args: Omit<Parameters<typeof assembleForEach>[1], 'attempt'>) {
      return guarded(() => assembleForEach(runner, { ...args, attempt: Context.current().info.attempt }));
    },
    async prepareChildRun(args: Parameters<NodeRunner['prepareChildRun']>[0]) {
      return guarded(() => runner.prepareChildRun(args));
    },
    async reserveChildRuns(args: Parameters<NodeRunner['reserveChildRuns']>[0]) {
      return runner.reserveChildRuns(args);
    },
    async assembleForEachRuns(args: Omit<Parameters<typeof assembleForEachRuns>[1], 'attempt'>) {
      return guarded(() => assembleForEachRuns(runner, { ...args, attempt: Context.current().info.attempt }));
    },
    async adoptChildOutput(args: Omit<Parameters<typeof adoptChildOutput>[1], 'attempt'>) {
      return guarded(() => adoptChildOutput(runner, { ...args, attempt: Context.current().info.attempt }));
    },
    async saveFlowProgress(args: Parameters<NodeRunner['saveProgress']>[0]) {
      return runner.saveProgress(args);
    },
    async finishFlowRun(args: Parameters<NodeRunner['finishRun']>[0]) {
      return guarded(() => runner.finishRun(args));
    },
  };
}

export type FlowActivities = ReturnType<typeof createFlowActivities>;
