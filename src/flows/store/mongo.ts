/**
 * MongoDB access for user workflows: definitions, run records and node outputs. The only place
 * that speaks MongoDB for them. User JSON (definitions, run input, node outputs) is stored as its
 * JSON text (storage/user-json.ts); the fields queries need stay native beside it. Node outputs
 * over 256 KB go to GridFS (bucket `workflow_outputs`, built by storage/); smaller ones are a document each, so a
 * run record stays small however many nodes run.
 */
import { pipeline } from 'node:stream/promises';
import { Collection, Db, GridFSBucket, ObjectId } from 'mongodb';
import { FIXED_LIMITS } from '../../accounts/plans';
import { chunkedSource } from '../../storage/gridfs';
import { COLLECTIONS } from '../../storage/mongo';
import { isDuplicateKey } from '../../storage/errors';
import { RUN_TIMEOUT_ERROR, type RunLogEntry } from '../limits';
import { observeRunEnded } from '../../telemetry/metrics';
import { FINAL_STATUSES, RunStatus } from '../schemas';
import type { LineEntry, NodeStat, OutputDoc, OutputStore, RunDoc, RunStore, SlotDoc, SlotStore, WorkflowDoc, WorkflowStore } from '../records';

/** As stored: a large output's bytes are referenced by their GridFS ObjectId. */
type StoredOutput = Omit<OutputDoc, 'fileId'> & { fileId?: ObjectId };
const outputOf = ({ fileId, ...doc }: StoredOutput): OutputDoc => ({ ...doc, ...(fileId ? { fileId: fileId.toHexString() } : {}) });

export class MongoWorkflowStore implements WorkflowStore {
  private readonly col: Collection<WorkflowDoc>;
  /** One definition by id (a run's start) on the read pool (see Storage.readDb). */
  private readonly reads: Collection<WorkflowDoc>;
  constructor(db: Db, readDb: Db = db) {
    this.col = db.collection<WorkflowDoc>(COLLECTIONS.workflows);
    this.reads = readDb.collection<WorkflowDoc>(COLLECTIONS.workflows);
  }
  async insert(doc: WorkflowDoc): Promise<void> { await this.col.insertOne(doc); }
  get(accountId: string, id: string): Promise<WorkflowDoc | null> { return this.reads.findOne({ _id: id, accountId }); }
  list(accountId: string, offset: number, limit: number): Promise<WorkflowDoc[]> {
    return this.col.find({ accountId }).sort({ createdAt: 1, _id: 1 }).skip(offset).limit(limit).toArray();
  }
  count(accountId: string): Promise<number> { return this.col.countDocuments({ accountId }); }
  triggeredBy(accountId: string, tags: string[], limit: number): Promise<WorkflowDoc[]> {
    return this.col.find({ accountId, enabled: true, exposed: true, 'trigger.tags': { $in: tags } }, { projection: { definition: 0 } })
      .sort({ createdAt: 1, _id: 1 }).limit(limit).toArray();
  }
  async replace(accountId: string, id: string, fields: Omit<WorkflowDoc, '_id' | 'accountId' | 'createdAt'>): Promise<WorkflowDoc | null> {
    return this.col.findOneAndUpdate({ _id: id, accountId }, { $set: fields }, { returnDocument: 'after' });
  }
  async remove(accountId: string, id: string): Promise<boolean> {
    return (await this.col.deleteOne({ _id: id, accountId })).deletedCount === 1;
  }
}

export class MongoRunStore implements RunStore {
  private readonly col: Collection<RunDoc>;
  /** The waiting line: small (queued runs only), so admission never scans the run records. */
  private readonly line: Collection<LineEntry>;
  /** The line for admission's look (is anybody waiting?) on the read pool (see Storage.readDb). */
  private readonly lineReads: Collection<LineEntry>;
  /** Records for admission's looks at statuses (see Storage.readDb). */
  private readonly reads: Collection<RunDoc>;
  constructor(db: Db, readDb: Db = db) {
    this.col = db.collection<RunDoc>(COLLECTIONS.workflowRuns);
    this.line = db.collection<LineEntry>(COLLECTIONS.workflowRunQueue);
    this.lineReads = readDb.collection<LineEntry>(COLLECTIONS.workflowRunQueue);
    this.reads = readDb.collection<RunDoc>(COLLECTIONS.workflowRuns);
  }
  /** `running` records started before `before`, deadline not passed, that no execution has reported on. */
  unlaunched(before: Date, now: Date, limit: number): Promise<RunDoc[]> {
    return this.reads.find({ status: 'running', 'temporal.runId': null, startedAt: { $lt: before }, deadline: { $gt: now } })
      .limit(limit).toArray();
  }
  async insert(doc: RunDoc): Promise<void> { await this.col.insertOne(doc); }
  async enqueue(doc: RunDoc): Promise<void> {
    await this.col.insertOne(doc);
    await this.line.insertOne({ _id: doc._id, accountId: doc.accountId, queuedAt: doc.queuedAt });
  }
  async hasQueued(accountId: string): Promise<boolean> {
    return (await this.lineReads.findOne({ accountId }, { projection: { _id: 1 } })) !== null;
  }
  async restoreLine(): Promise<number> {
    let restored = 0;
    for (const r of await this.col.find({ status: 'queued' }, { projection: { _id: 1, accountId: 1, queuedAt: 1 } }).toArray()) {
      try {
        await this.line.insertOne({ _id: r._id, accountId: r.accountId, queuedAt: r.queuedAt });
        restored++;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err; // in line already: the common case
      }
    }
    return restored;
  }
  get(accountId: string, runId: string): Promise<RunDoc | null> { return this.col.findOne({ _id: runId, accountId }); }
  getById(runId: string): Promise<RunDoc | null> { return this.col.findOne({ _id: runId }); }
  list(accountId: string, workflowId: string, offset: number, limit: number): Promise<RunDoc[]> {
    return this.col.find({ accountId, workflowId }, { projection: { log: 0, nodes: 0 } })
      .sort({ queuedAt: -1, _id: -1 }).skip(offset).limit(limit).toArray();
  }
  async input(runId: string): Promise<string | undefined> {
    return (await this.col.findOne({ _id: runId }, { projection: { input: 1 } }))?.input;
  }
  /** Live progress: the nodes that changed since the last write and the new log entries. */
  async recordProgress(runId: string, nodes: Record<string, NodeStat>, log: RunLogEntry[], outputBytes: number, temporalRunId?: string): Promise<void> {
    const set: Record<string, unknown> = { outputBytes, ...(temporalRunId ? { 'temporal.runId': temporalRunId } : {}) };
    for (const [id, stat] of Object.entries(nodes)) set[`nodes.${id}`] = stat;
    await this.col.updateOne({ _id: runId, status: 'running' }, { $set: set, ...(log.length ? { $push: { log: { $each: log } } } : {}) });
  }
  /**
   * Takes `count` child runs from the run tree's budget in one conditional update, so the runs of
   * one tree on several workers never pass `limit` together; false when they would.
   */
  async reserveChildRuns(runId: string, count: number, limit: number): Promise<boolean> {
    const r = await this.col.updateOne(
      { _id: runId, $or: [{ childRuns: { $exists: false } }, { childRuns: { $lte: limit - count } }] },
      { $inc: { childRuns: count } },
    );
    return r.modifiedCount === 1;
  }
  /** Final state; only a record not already final is changed (the first writer wins). */
  async finish(runId: string, fields: Partial<Pick<RunDoc, 'nodes' | 'log' | 'outputBytes'>> & { status: RunStatus; error: string | null; finishedAt: Date }, appendLog: RunLogEntry[] = [], from?: RunStatus): Promise<boolean> {
    const update = fields.log
      ? { $set: { ...fields, log: [...fields.log, ...appendLog] } }
      : { $set: fields, ...(appendLog.length ? { $push: { log: { $each: appendLog } } } : {}) };
    const r = await this.col.updateOne({ _id: runId, status: from ?? { $nin: [...FINAL_STATUSES] } }, update);
    // A queued run that ends (a cancel) leaves the line.
    if (from === 'queued') await this.line.deleteOne({ _id: runId });
    if (r.modifiedCount === 1) observeRunEnded(fields.status, fields.error === RUN_TIMEOUT_ERROR);
    return r.modifiedCount === 1;
  }
  countQueued(accountId?: string): Promise<number> {
    return this.line.countDocuments(accountId ? { accountId } : {});
  }
  countRunning(accountId: string): Promise<number> { return this.col.countDocuments({ status: 'running', accountId }); }
  /** The account's oldest waiting run (FIFO); an entry whose record is no longer queued is dropped. */
  async oldestQueued(accountId: string): Promise<RunDoc | null> {
    for (;;) {
      const entry = await this.line.findOne({ accountId }, { sort: { queuedAt: 1, _id: 1 } });
      if (!entry) return null;
      const run = await this.col.findOne({ _id: entry._id }, { projection: { log: 0, nodes: 0 } });
      if (run?.status === 'queued') return run;
      await this.line.deleteOne({ _id: entry._id });
    }
  }
  async accountsWithQueued(): Promise<string[]> {
    return (await this.line.distinct('accountId', {})) as string[];
  }
  /** Queued → running, by `_id` and only from `queued`: of two promoters only one wins. */
  async claimQueued(runId: string, startedAt: Date, deadline: Date): Promise<RunDoc | null> {
    const run = await this.col.findOneAndUpdate({ _id: runId, status: 'queued' }, { $set: { status: 'running', startedAt, deadline } }, { returnDocument: 'after' });
    await this.line.deleteOne({ _id: runId });
    return run;
  }
  /** Queued runs that waited since before `before` become `expired`; returns how many. */
  async expireQueued(before: Date, finishedAt: Date, error: string, runId?: string): Promise<number> {
    const r = await this.col.updateMany(
      { status: 'queued', queuedAt: { $lte: before }, ...(runId ? { _id: runId } : {}) },
      { $set: { status: 'expired', finishedAt, error } },
    );
    await this.line.deleteMany(runId ? { _id: runId } : { queuedAt: { $lte: before } });
    observeRunEnded('expired', false, r.modifiedCount);
    return r.modifiedCount;
  }
  statuses(runIds: string[]): Promise<Array<Pick<RunDoc, '_id' | 'status'>>> {
    return Promise.all(runIds.map((id) => this.reads.findOne({ _id: id }, { projection: { status: 1 } }))).then((docs) => docs.filter((d): d is RunDoc => d !== null));
  }
  /** Runs still `running` past their deadline (with a grace for the final write in flight). */
  overdue(before: Date, limit: number): Promise<RunDoc[]> {
    return this.col.find({ status: 'running', deadline: { $lt: before } }, { projection: { _id: 1, accountId: 1, temporal: 1, deadline: 1 } })
      .limit(limit).toArray();
  }
}

export class MongoOutputStore implements OutputStore {
  private readonly col: Collection<StoredOutput>;
  /** `files`: the `workflow_outputs` bucket from storage/. */
  constructor(db: Db, private readonly files: GridFSBucket) {
    this.col = db.collection<StoredOutput>(COLLECTIONS.workflowOutputs);
  }

  /** Saves (or replaces, for a loop's next execution) one output; returns its size in bytes. */
  async save(runId: string, key: string, json: string): Promise<number> {
    const bytes = Buffer.byteLength(json);
    const _id = `${runId}/${key}`;
    let doc: StoredOutput;
    if (bytes > FIXED_LIMITS.workflowInlineOutputBytes) {
      const upload = this.files.openUploadStream(_id);
      await pipeline(chunkedSource(Buffer.from(json)), upload);
      doc = { _id, runId, key, bytes, fileId: upload.id };
    } else {
      doc = { _id, runId, key, bytes, json };
    }
    const previous = await this.col.findOneAndReplace({ _id }, doc, { upsert: true });
    // A loop's earlier execution of the node left a file that nothing points to any more.
    if (previous?.fileId) await this.files.delete(previous.fileId).catch(() => undefined);
    return bytes;
  }

  async load(runId: string, key: string): Promise<string | undefined> {
    const doc = await this.col.findOne({ _id: `${runId}/${key}` });
    if (!doc) return undefined;
    return this.read(outputOf(doc));
  }

  async read(doc: OutputDoc): Promise<string> {
    if (doc.json !== undefined) return doc.json;
    const chunks: Buffer[] = [];
    for await (const chunk of this.files.openDownloadStream(new ObjectId(doc.fileId))) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * The output documents of a run for the given keys (inline text or a GridFS reference). One
   * lookup by `_id` per key: the local FerretDB serves `_id` equality from its primary key but
   * scans the whole collection for `$in`.
   */
  async find(runId: string, keys: readonly string[]): Promise<OutputDoc[]> {
    const docs = await Promise.all(keys.map((k) => this.col.findOne({ _id: `${runId}/${k}` })));
    return docs.filter((d): d is StoredOutput => d !== null).map(outputOf);
  }
}

/** Concurrency slots: a run holds one while it runs; numbers 0..limit-1 per account, unique. */
export class MongoSlotStore implements SlotStore {
  private readonly col: Collection<SlotDoc>;
  /** The held numbers, read before a claim, on the read pool; the unique index decides a race. */
  private readonly reads: Collection<SlotDoc>;
  constructor(db: Db, readDb: Db = db) {
    this.col = db.collection<SlotDoc>(COLLECTIONS.workflowRunSlots);
    this.reads = readDb.collection<SlotDoc>(COLLECTIONS.workflowRunSlots);
  }
  /** Takes a free slot number below `limit` for the run; false when all are held (or the run holds one). */
  async claim(accountId: string, runId: string, limit: number, now: Date): Promise<boolean> {
    const held = new Set((await this.reads.find({ accountId }, { projection: { slot: 1 } }).toArray()).map((d) => d.slot));
    for (let slot = 0; slot < limit; slot++) {
      if (held.has(slot)) continue;
      try {
        await this.col.insertOne({ _id: runId, accountId, slot, claimedAt: now });
        return true;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // Another process took this number a moment ago (or this run holds a slot already).
        if (await this.col.findOne({ _id: runId })) return false;
      }
    }
    return false;
  }
  /** Frees the run's slot; returns its account when it held one. */
  async release(runId: string): Promise<string | undefined> {
    return (await this.col.findOneAndDelete({ _id: runId }))?.accountId;
  }
  all(limit: number): Promise<SlotDoc[]> { return this.col.find({}).limit(limit).toArray(); }
  count(accountId: string): Promise<number> { return this.col.countDocuments({ accountId }); }
}
