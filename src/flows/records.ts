/**
 * User workflows' records (definitions, runs, the waiting line, concurrency slots, node outputs)
 * and the store interfaces both engines implement (store/sqlite.ts, store/mongo.ts).
 */
import type { RunLogEntry } from './limits';
import type { RunStatus } from './schemas';

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

/** Where node outputs live. */
export interface OutputRepository {
  save(runId: string, key: string, json: string): Promise<number>;
  read(doc: OutputDoc): Promise<string>;
  find(runId: string, keys: readonly string[]): Promise<OutputDoc[]>;
}

/** Where run records live. */
export interface RunRepository {
  get(accountId: string, runId: string): Promise<RunDoc | null>;
  list(accountId: string, workflowId: string, offset: number, limit: number): Promise<RunDoc[]>;
  /** `from`: only a record in that status changes (default: any not final). */
  finish(runId: string, fields: Partial<Pick<RunDoc, 'nodes' | 'log' | 'outputBytes'>> & { status: RunStatus; error: string | null; finishedAt: Date }, appendLog?: RunLogEntry[], from?: RunStatus): Promise<boolean>;
  overdue(before: Date, limit: number): Promise<RunDoc[]>;
}

/** Where definitions live. */
export interface WorkflowRepository {
  insert(doc: WorkflowDoc): Promise<void>;
  get(accountId: string, id: string): Promise<WorkflowDoc | null>;
  list(accountId: string, offset: number, limit: number): Promise<WorkflowDoc[]>;
  replace(accountId: string, id: string, fields: Omit<WorkflowDoc, '_id' | 'accountId' | 'createdAt'>): Promise<WorkflowDoc | null>;
  remove(accountId: string, id: string): Promise<boolean>;
  count(accountId: string): Promise<number>;
  /** Enabled, exposed workflows whose trigger names one of the tags, oldest first. */
  triggeredBy(accountId: string, tags: string[], limit: number): Promise<WorkflowDoc[]>;
}

/** Run records as admission sees them, and the waiting line of queued ones. */
export interface RunQueue {
  /** A run admitted straight to a slot: its record, already `running`. */
  insert(run: RunDoc): Promise<void>;
  /** A run that waits: its `queued` record, then its entry in the line. */
  enqueue(run: RunDoc): Promise<void>;
  /** Whether anybody of the account waits (one lookup in the line, never a scan of the records). */
  hasQueued(accountId: string): Promise<boolean>;
  /** Queued records that lost their line entry (a process died between the two writes) get it back. */
  restoreLine(): Promise<number>;
  countQueued(accountId?: string): Promise<number>;
  oldestQueued(accountId: string): Promise<RunDoc | null>;
  accountsWithQueued(): Promise<string[]>;
  /** Queued → running, by `_id` and only from `queued`; the line entry goes either way. */
  claimQueued(runId: string, startedAt: Date, deadline: Date): Promise<RunDoc | null>;
  expireQueued(before: Date, finishedAt: Date, error: string, runId?: string): Promise<number>;
  finish(runId: string, fields: { status: RunStatus; error: string | null; finishedAt: Date }): Promise<boolean>;
  statuses(runIds: string[]): Promise<Array<Pick<RunDoc, '_id' | 'status'>>>;
  /**
   * `running` records started before `before` and not past their deadline whose execution has
   * not reported yet (no Temporal run id): launches lost with their process, or slow ones.
   */
  unlaunched(before: Date, now: Date, limit: number): Promise<RunDoc[]>;
}

/** Concurrency slots held by running runs. */
export interface SlotTable {
  claim(accountId: string, runId: string, limit: number, now: Date): Promise<boolean>;
  release(runId: string): Promise<string | undefined>;
  all(limit: number): Promise<SlotDoc[]>;
  count(accountId: string): Promise<number>;
}

/** Node outputs as the interpreter's activities use them (flows/records.ts). */
export interface NodeOutputs {
  save(runId: string, key: string, json: string): Promise<number>;
  load(runId: string, key: string): Promise<string | undefined>;
  read(doc: OutputDoc): Promise<string>;
  find(runId: string, keys: readonly string[]): Promise<OutputDoc[]>;
}

/** A running run's record: its input, live progress and final state (flows/records.ts). */
export interface RunProgress {
  recordProgress(runId: string, nodes: Record<string, NodeStat>, log: RunLogEntry[], outputBytes: number, temporalRunId?: string): Promise<void>;
  input(runId: string): Promise<string | undefined>;
  finish(runId: string, fields: { status: RunStatus; error: string | null; finishedAt: Date; nodes: Record<string, NodeStat>; log: RunLogEntry[]; outputBytes: number }): Promise<boolean>;
  reserveChildRuns(runId: string, count: number, limit: number): Promise<boolean>;
}

export type WorkflowStore = WorkflowRepository;
/** `finish` as RunRepository declares it covers the narrower ones of the queue and of progress. */
export interface RunStore extends RunRepository, Omit<RunQueue, 'finish'>, Omit<RunProgress, 'finish'> {}
export interface OutputStore extends OutputRepository, NodeOutputs {}
export type SlotStore = SlotTable;
