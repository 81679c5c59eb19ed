/**
 * User workflows' records (definitions, runs, the waiting line, concurrency slots, node outputs)
 * and the store interfaces both engines implement (store/sqlite.ts, store/mongo.ts).
 */
import type { RunLogEntry } from './limits';
import type { RunStatus } from './schemas';
import type { OutputRepository, RunRepository, WorkflowRepository } from './service';
import type { RunQueue, SlotTable } from './admission';
import type { NodeOutputs, RunProgress } from './node-runner';

export interface WorkflowDoc {
  _id: string;
  accountId: string;
  name: string;
  enabled: boolean;
  exposed: boolean;
  /** Kept native for device-event matching. */
  trigger: { tags: string[]; match: 'any' | 'all' } | null;
  /** The whole definition as sent (encodeUserJson). */
  definition: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface NodeStat {
  status: 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'cancelled';
  executions: number;
  attempts: number;
  durationMs: number;
  outputBytes: number;
  error?: string;
  /** flow.call and forEach over a workflow: the child runs this node started, and how many failed. */
  childRuns?: { started: number; failed: number };
}

export interface RunDoc {
  _id: string;
  accountId: string;
  workflowId: string;
  workflowName: string;
  trigger: { type: 'manual' | 'device_event'; messageId?: string };
  status: RunStatus;
  input: string;
  error: string | null;
  log: RunLogEntry[];
  nodes: Record<string, NodeStat>;
  /** Node ids in definition order and those without outgoing edges (the run output). */
  nodeOrder: string[];
  terminalNodes: string[];
  outputBytes: number;
  queuedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** startedAt + 10 minutes: past it, a run still `running` is settled from Temporal. */
  deadline: Date | null;
  temporal: { workflowId: string; runId: string | null };
  /** The nodes and edges the run was admitted with (encodeUserJson): a queued run starts later. */
  graph?: string;
  /** The plan's concurrent runs when the run was admitted. */
  slotLimit?: number;
  /** Child runs reserved so far by the run's whole tree (flow.call and forEach, every depth). */
  childRuns?: number;
}

/** A run's entry in the waiting line (`_id` = runId), present while its record is `queued`. */
export interface LineEntry { _id: string; accountId: string; queuedAt: Date }

/** A concurrency slot held by a running run. */
export interface SlotDoc { _id: string; accountId: string; slot: number; claimedAt: Date }

export interface OutputDoc {
  _id: string;
  runId: string;
  key: string;
  bytes: number;
  json?: string;
  /** Id of the stored bytes of an output too large to keep inline. */
  fileId?: string;
}

export type WorkflowStore = WorkflowRepository;
/** `finish` as RunRepository declares it covers the narrower ones of the queue and of progress. */
export interface RunStore extends RunRepository, Omit<RunQueue, 'finish'>, Omit<RunProgress, 'finish'> {}
export interface OutputStore extends OutputRepository, NodeOutputs {}
export type SlotStore = SlotTable;
