/**
 * The embedded store of user workflows: definitions, run records, the waiting line, concurrency
 * slots and node outputs. User JSON (definitions, run input, node outputs) is kept as its text.
 * Outputs over 256 KB are stored blobs (storage/blob-files.ts); smaller ones a record each, so a
 * run record stays small however many nodes run. Every read-then-write (a claim, a finish, a slot)
 * holds the write lock from its read to its write, so two processes never both win one.
 */
import { FIXED_LIMITS } from '../../accounts/plans';
import { BLOB_KEYS, BlobFiles } from '../../storage/blob-files';
import { DocTable, immediate, placeholders, SqliteDatabase } from '../../storage/sqlite';
import { RUN_TIMEOUT_ERROR, type RunLogEntry } from '../limits';
import { observeRunEnded } from '../../telemetry/metrics';
import { FINAL_STATUSES, RunStatus } from '../schemas';
import type { LineEntry, NodeStat, OutputDoc, OutputStore, RunDoc, RunStore, SlotDoc, SlotStore, WorkflowDoc, WorkflowStore } from '../records';

const FINAL: ReadonlySet<string> = new Set(FINAL_STATUSES);

export class SqliteWorkflowStore implements WorkflowStore {
  private readonly workflows: DocTable<WorkflowDoc>;
  constructor(db: SqliteDatabase) {
    this.workflows = new DocTable(db, 'workflows');
  }
  async insert(doc: WorkflowDoc): Promise<void> { this.workflows.insert(doc); }
  async get(accountId: string, id: string): Promise<WorkflowDoc | null> { return this.workflows.findOne('id = ? AND account_id = ?', [id, accountId]); }
  async list(accountId: string, offset: number, limit: number): Promise<WorkflowDoc[]> {
    return this.workflows.find('account_id = ?', [accountId], { order: 'created_at, id', offset, limit });
  }
  async count(accountId: string): Promise<number> { return this.workflows.count('account_id = ?', [accountId]); }
  async triggeredBy(accountId: string, tags: string[], limit: number): Promise<WorkflowDoc[]> {
    if (tags.length === 0) return [];
    return this.workflows.find(
      `account_id = ? AND json_extract(doc, '$.enabled') = 1 AND json_extract(doc, '$.exposed') = 1
       AND EXISTS (SELECT 1 FROM json_each(doc, '$.trigger.tags') WHERE value IN (${placeholders(tags.length)}))`,
      [accountId, ...tags], { order: 'created_at, id', limit },
    );
  }
  async replace(accountId: string, id: string, fields: Omit<WorkflowDoc, '_id' | 'accountId' | 'createdAt'>): Promise<WorkflowDoc | null> {
    const w = this.workflows.update(id, (cur) => (cur.accountId === accountId ? { ...cur, ...fields } : undefined));
    return w && w.accountId === accountId ? w : null;
  }
  async remove(accountId: string, id: string): Promise<boolean> {
    return this.workflows.deleteWhere('id = ? AND account_id = ?', [id, accountId]) === 1;
  }
}

/** The run list leaves out what only one run's page shows. */
const summaryOf = ({ log: _l, nodes: _n, ...run }: RunDoc): RunDoc => run as RunDoc;

export class SqliteRunStore implements RunStore {
  private readonly runs: DocTable<RunDoc>;
  /** The waiting line: queued runs only, so admission never scans the run records. */
  private readonly line: DocTable<LineEntry>;
  constructor(private readonly db: SqliteDatabase) {
    this.runs = new DocTable(db, 'workflow_runs');
    this.line = new DocTable(db, 'workflow_run_queue');
  }
  async unlaunched(before: Date, now: Date, limit: number): Promise<RunDoc[]> {
    return this.runs.find(
      "status = 'running' AND json_extract(doc, '$.temporal.runId') IS NULL AND json_extract(doc, '$.startedAt.\"$date\"') < ? AND deadline > ?",
      [before.getTime(), now.getTime()], { limit },
    );
  }
  async insert(doc: RunDoc): Promise<void> { this.runs.insert(doc); }
  async enqueue(doc: RunDoc): Promise<void> {
    immediate(this.db, () => {
      this.runs.insert(doc);
      this.line.insert({ _id: doc._id, accountId: doc.accountId, queuedAt: doc.queuedAt });
    });
  }
  async hasQueued(accountId: string): Promise<boolean> { return this.line.count('account_id = ?', [accountId]) > 0; }
  async restoreLine(): Promise<number> {
    return immediate(this.db, () => {
      let restored = 0;
      for (const r of this.runs.find("status = 'queued'", [])) {
        if (this.line.get(r._id)) continue;
        this.line.insert({ _id: r._id, accountId: r.accountId, queuedAt: r.queuedAt });
        restored++;
      }
      return restored;
    });
  }
  async get(accountId: string, runId: string): Promise<RunDoc | null> { return this.runs.findOne('id = ? AND account_id = ?', [runId, accountId]); }
  async list(accountId: string, workflowId: string, offset: number, limit: number): Promise<RunDoc[]> {
    return this.runs.find('account_id = ? AND workflow_id = ?', [accountId, workflowId], { order: 'queued_at DESC, id DESC', offset, limit }).map(summaryOf);
  }
  async input(runId: string): Promise<string | undefined> { return this.runs.get(runId)?.input; }
  async recordProgress(runId: string, nodes: Record<string, NodeStat>, log: RunLogEntry[], outputBytes: number, temporalRunId?: string): Promise<void> {
    this.runs.update(runId, (r) => (r.status !== 'running' ? undefined : {
      ...r, outputBytes, nodes: { ...r.nodes, ...nodes }, log: [...r.log, ...log],
      ...(temporalRunId ? { temporal: { ...r.temporal, runId: temporalRunId } } : {}),
    }));
  }
  /**
   * Takes `count` child runs from the run tree's budget in one transaction, so the runs of one tree
   * on several workers never pass `limit` together; false when they would.
   */
  async reserveChildRuns(runId: string, count: number, limit: number): Promise<boolean> {
    return immediate(this.db, () => {
      let taken = false;
      this.runs.update(runId, (r) => {
        if ((r.childRuns ?? 0) > limit - count) return undefined;
        taken = true;
        return { ...r, childRuns: (r.childRuns ?? 0) + count };
      });
      return taken;
    });
  }
  async finish(runId: string, fields: Partial<Pick<RunDoc, 'nodes' | 'log' | 'outputBytes'>> & { status: RunStatus; error: string | null; finishedAt: Date }, appendLog: RunLogEntry[] = [], from?: RunStatus): Promise<boolean> {
    return immediate(this.db, () => {
      let changed = false;
      this.runs.update(runId, (r) => {
        if (from ? r.status !== from : FINAL.has(r.status)) return undefined;
        changed = true;
        return { ...r, ...fields, log: [...(fields.log ?? r.log), ...appendLog] };
      });
      // A queued run that ends (a cancel) leaves the line.
      if (from === 'queued') this.line.delete(runId);
      if (changed) observeRunEnded(fields.status, fields.error === RUN_TIMEOUT_ERROR);
      return changed;
    });
  }
  async countQueued(accountId?: string): Promise<number> {
    return accountId ? this.line.count('account_id = ?', [accountId]) : this.line.count('1', []);
  }
  async oldestQueued(accountId: string): Promise<RunDoc | null> {
    for (;;) {
      const entry = this.line.findOne('account_id = ?', [accountId], 'queued_at, id');
      if (!entry) return null;
      const run = this.runs.get(entry._id);
      if (run?.status === 'queued') return summaryOf(run);
      this.line.delete(entry._id);
    }
  }
  async accountsWithQueued(): Promise<string[]> { return this.line.distinct('account_id') as string[]; }
  async claimQueued(runId: string, startedAt: Date, deadline: Date): Promise<RunDoc | null> {
    return immediate(this.db, () => {
      let claimed: RunDoc | null = null;
      this.runs.update(runId, (r) => {
        if (r.status !== 'queued') return undefined;
        claimed = { ...r, status: 'running', startedAt, deadline };
        return claimed;
      });
      this.line.delete(runId);
      return claimed;
    });
  }
  async expireQueued(before: Date, finishedAt: Date, error: string, runId?: string): Promise<number> {
    return immediate(this.db, () => {
      const where = `status = 'queued' AND queued_at <= ?${runId ? ' AND id = ?' : ''}`;
      const params = runId ? [before.getTime(), runId] : [before.getTime()];
      const n = this.runs.updateWhere(where, params, (r) => ({ ...r, status: 'expired', finishedAt, error }));
      if (runId) this.line.delete(runId);
      else this.line.deleteWhere('queued_at <= ?', [before.getTime()]);
      observeRunEnded('expired', false, n);
      return n;
    });
  }
  async statuses(runIds: string[]): Promise<Array<Pick<RunDoc, '_id' | 'status'>>> {
    if (runIds.length === 0) return [];
    return this.runs.find(`id IN (${placeholders(runIds.length)})`, runIds).map((r) => ({ _id: r._id, status: r.status }));
  }
  async overdue(before: Date, limit: number): Promise<RunDoc[]> {
    return this.runs.find("status = 'running' AND deadline < ?", [before.getTime()], { limit });
  }
}

export class SqliteOutputStore implements OutputStore {
  private readonly outputs: DocTable<OutputDoc>;
  constructor(db: SqliteDatabase, private readonly blobs: BlobFiles) {
    this.outputs = new DocTable(db, 'workflow_run_outputs');
  }

  /** Saves (or replaces, for a loop's next execution) one output; returns its size in bytes. */
  async save(runId: string, key: string, json: string): Promise<number> {
    const bytes = Buffer.byteLength(json);
    const _id = `${runId}/${key}`;
    if (bytes > FIXED_LIMITS.workflowInlineOutputBytes) {
      await this.blobs.write(BLOB_KEYS.nodeOutput(_id), Buffer.from(json));
      this.outputs.put({ _id, runId, key, bytes, fileId: _id });
    } else {
      const previous = this.outputs.get(_id);
      this.outputs.put({ _id, runId, key, bytes, json });
      // A loop's earlier execution of the node left bytes that nothing points to any more.
      if (previous?.fileId) await this.blobs.delete(BLOB_KEYS.nodeOutput(previous.fileId));
    }
    return bytes;
  }

  async load(runId: string, key: string): Promise<string | undefined> {
    const doc = this.outputs.get(`${runId}/${key}`);
    return doc ? this.read(doc) : undefined;
  }

  async read(doc: OutputDoc): Promise<string> {
    if (doc.json !== undefined) return doc.json;
    const bytes = await this.blobs.read(BLOB_KEYS.nodeOutput(doc.fileId as string));
    if (!bytes) throw new Error(`stored output ${doc._id} lost its bytes`);
    return bytes.toString('utf8');
  }

  async find(runId: string, keys: readonly string[]): Promise<OutputDoc[]> {
    if (keys.length === 0) return [];
    return this.outputs.find(`id IN (${placeholders(keys.length)})`, keys.map((k) => `${runId}/${k}`));
  }
}

/** Concurrency slots: a run holds one while it runs; numbers 0..limit-1 per account. */
export class SqliteSlotStore implements SlotStore {
  private readonly slots: DocTable<SlotDoc>;
  constructor(private readonly db: SqliteDatabase) {
    this.slots = new DocTable(db, 'workflow_run_slots');
  }
  async claim(accountId: string, runId: string, limit: number, now: Date): Promise<boolean> {
    return immediate(this.db, () => {
      if (this.slots.get(runId)) return false;
      const held = new Set(this.slots.find('account_id = ?', [accountId]).map((s) => s.slot));
      for (let slot = 0; slot < limit; slot++) {
        if (held.has(slot)) continue;
        this.slots.insert({ _id: runId, accountId, slot, claimedAt: now });
        return true;
      }
      return false;
    });
  }
  async release(runId: string): Promise<string | undefined> { return this.slots.take(runId)?.accountId; }
  async all(limit: number): Promise<SlotDoc[]> { return this.slots.find('1', [], { limit }); }
  async count(accountId: string): Promise<number> { return this.slots.count('account_id = ?', [accountId]); }
}
