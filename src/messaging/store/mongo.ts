/**
 * MongoDB access for messaging: message history, the inbox of pending directed messages, entity
 * state tables (kept on the entity's document; the rest of it is entities/store/mongo.ts's),
 * validation services and in-app notifications. The only place that
 * speaks MongoDB for messaging.
 *
 * Why two collections for messages: history (`messages`) only grows, while the inbox
 * (`message_inbox`) holds just the directed messages nobody has taken yet. A claim is one
 * findOneAndDelete on the inbox, atomic on a single document on MongoDB and on FerretDB alike, so
 * a message goes out once however many pollers (HTTP or MQTT) race for it; and the claim query
 * stays cheap as history grows (the local FerretDB scans whole collections for every query).
 *
 * What a device or an account sends (message data, state tables, service rule schemas) is stored
 * as JSON text (src/storage/user-json.ts), so any key or nesting is kept exactly as sent; reads
 * also accept documents written before, when these were native (see docs/messaging.md).
 */
import { Collection, Db, Filter, MongoBulkWriteError, Sort } from 'mongodb';
import { COLLECTIONS, pagesOf } from '../../storage/mongo';
import { isDuplicateKey } from '../../storage/errors';
import { GroupCommit, ItemFailure } from '../../storage/group-commit';
import { encodeUserJson, UserJsonText } from '../../storage/user-json';
import { decoded, encodedRules, exportedOf, inboxOf, messageOf, serviceOf, stateTableText, StoredInbox, StoredMessage, StoredService } from './codec';
import { ConflictError } from '../../errors';
import type { EntityDoc } from '../../entities/records';
import type { ExportedMessage, ExportSource, InboxDoc, MessageDoc, MessageFilter, MessageStore, NotificationDoc, ServiceDoc } from '../records';

type StoredState = Omit<EntityDoc, 'statusTable'> & { statusTable?: EntityDoc['statusTable'] | UserJsonText; stateVersion?: number };

/** A state-table merge that keeps losing the race to other writers of the same table. */
const STATE_MERGE_ATTEMPTS = 20;

/** Concurrent inserts into one collection go out as one unordered insertMany (group commit). */
function insertBatcher<T extends { _id: string }>(col: Collection<T>): GroupCommit<T, void> {
  return new GroupCommit<T, void>(async (_key, docs) => {
    try {
      await col.insertMany(docs as unknown as Parameters<Collection<T>['insertMany']>[0], { ordered: false });
      return docs.map(() => undefined);
    } catch (err) {
      // Unordered: only the documents named in writeErrors failed.
      if (!(err instanceof MongoBulkWriteError)) throw err;
      const list = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
      const failed = new Set(list.map((we) => we.index));
      return docs.map((_d, i) => (failed.size === 0 || failed.has(i) ? new ItemFailure(err) : undefined));
    }
  }, 500);
}

export class MongoMessageStore implements MessageStore {
  private readonly messages: Collection<StoredMessage>;
  /** History reads (list, search, one message, export) on the read pool (see Storage.readDb). */
  private readonly history: Collection<StoredMessage>;
  private readonly inbox: Collection<StoredInbox>;
  private readonly services: Collection<StoredService>;
  private readonly notifications: Collection<NotificationDoc>;
  private readonly entities: Collection<StoredState>;
  private readonly messageWriter: GroupCommit<StoredMessage, void>;
  private readonly inboxWriter: GroupCommit<StoredInbox, void>;
  private fifoSort?: Promise<Sort | undefined>;
  /** The last state-table merge queued per entity (see mergeStatusTable). */
  private readonly merging = new Map<string, Promise<void>>();

  constructor(private readonly db: Db, readDb: Db = db) {
    this.messages = db.collection<StoredMessage>(COLLECTIONS.messages);
    this.history = readDb.collection<StoredMessage>(COLLECTIONS.messages);
    this.inbox = db.collection<StoredInbox>(COLLECTIONS.messageInbox);
    this.services = db.collection<StoredService>(COLLECTIONS.services);
    this.notifications = db.collection<NotificationDoc>(COLLECTIONS.notifications);
    this.entities = db.collection<StoredState>(COLLECTIONS.entities);
    this.messageWriter = insertBatcher(this.messages);
    this.inboxWriter = insertBatcher(this.inbox);
  }

  // --- history -------------------------------------------------------------------------------

  insertMessage(doc: MessageDoc): Promise<void> {
    return this.messageWriter.submit('', { ...doc, data: encodeUserJson(doc.data) });
  }

  private publishFilter(f: MessageFilter): Filter<StoredMessage> {
    const q: Filter<StoredMessage> = { accountId: f.accountId, msgType: 'publish' };
    if (f.sourceName) q.sourceName = f.sourceName;
    if (f.tags?.length) q.tags = { $in: f.tags };
    if (f.from || f.to) q.timestamp = { ...(f.from ? { $gte: f.from } : {}), ...(f.to ? { $lt: f.to } : {}) };
    return q;
  }

  /** Publish messages newest first (timestamp, then id), one page by offset. */
  async listPublished(f: MessageFilter, offset: number, limit: number): Promise<MessageDoc[]> {
    const docs = await this.history.find(this.publishFilter(f)).sort({ timestamp: -1, _id: -1 }).skip(offset).limit(limit).toArray();
    return docs.map(messageOf);
  }

  async findPublished(accountId: string, id: string): Promise<MessageDoc | null> {
    const doc = await this.history.findOne({ _id: id, accountId, msgType: 'publish' });
    return doc && messageOf(doc);
  }

  /** One cursor over the account's publish messages, newest first, a page per getMore of `batchSize`. */
  exportCursor(f: MessageFilter, batchSize: number): ExportSource<ExportedMessage> {
    return pagesOf(this.history.find(this.publishFilter(f)).sort({ timestamp: -1, _id: -1 }).batchSize(batchSize), (m) => exportedOf(m, m.timestamp));
  }

  // --- inbox ---------------------------------------------------------------------------------

  enqueue(doc: InboxDoc): Promise<void> {
    return this.inboxWriter.submit('', { ...doc, message: { ...doc.message, data: encodeUserJson(doc.message.data) } });
  }

  /**
   * The order claims take pending messages in. MongoDB: the `dest_fifo` index. The local FerretDB
   * sorts in memory (about 65 ms per claim with 1,000 pending against 8 ms unsorted) and returns
   * unsorted rows in insertion order (SQLite rowid), which is already FIFO, so it gets no sort.
   */
  private claimOrder(): Promise<Sort | undefined> {
    this.fifoSort ??= this.db.command({ buildInfo: 1 }).then(
      (info) => ('ferretdbVersion' in info ? undefined : { queuedAt: 1, _id: 1 }),
      () => ({ queuedAt: 1, _id: 1 }),
    );
    return this.fifoSort;
  }

  /** Takes the oldest pending message of an entity, or null: the take is the delete itself. */
  async claimNext(accountId: string, dest: string): Promise<InboxDoc | null> {
    const sort = await this.claimOrder();
    const doc = await this.inbox.findOneAndDelete({ accountId, dest }, sort ? { sort } : {});
    return doc && inboxOf(doc);
  }

  /** Takes one named pending message (MQTT delivery); null when a poller already took it. */
  async claimForDelivery(messageId: string): Promise<InboxDoc | null> {
    const doc = await this.inbox.findOneAndDelete({ _id: messageId });
    return doc && inboxOf(doc);
  }

  async purgeInbox(accountId: string, dest: string): Promise<void> {
    await this.inbox.deleteMany({ accountId, dest });
  }

  // --- state table ---------------------------------------------------------------------------

  // The table is one JSON text, so its keys may be anything a device sends. `stateVersion` counts
  // its writes: a merge reads the table and writes it back only if no other write came between.

  async getStatusTable(accountId: string, name: string): Promise<Record<string, unknown> | undefined> {
    const e = await this.entities.findOne({ _id: `${accountId}/${name}` }, { projection: { statusTable: 1, stateVersion: 1 } });
    return e ? decoded(e.statusTable ?? {}) : undefined;
  }

  async replaceStatusTable(accountId: string, name: string, table: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    const r = await this.entities.updateOne({ _id: `${accountId}/${name}` }, { $set: { statusTable: stateTableText(table) }, $inc: { stateVersion: 1 } });
    return r.matchedCount === 1 ? table : undefined;
  }

  /**
   * Shallow merge: each top-level key of `patch` is set, other keys stay. Merges of one table
   * from this process go one after another: 40 at once each re-reading after every lost race ran
   * out of attempts (the contract suite's 40 concurrent merges). Writers in other processes are
   * still met by the version check.
   */
  mergeStatusTable(accountId: string, name: string, patch: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    const _id = `${accountId}/${name}`;
    const merge = () => this.mergeOnce(_id, patch);
    const result = (this.merging.get(_id) ?? Promise.resolve()).then(merge, merge);
    const tail = result.then(() => undefined, () => undefined);
    this.merging.set(_id, tail);
    void tail.then(() => { if (this.merging.get(_id) === tail) this.merging.delete(_id); });
    return result;
  }

  private async mergeOnce(_id: string, patch: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    for (let attempt = 0; attempt < STATE_MERGE_ATTEMPTS; attempt++) {
      const e = await this.entities.findOne({ _id }, { projection: { statusTable: 1, stateVersion: 1 } });
      if (!e) return undefined;
      const table = { ...decoded(e.statusTable ?? {}), ...patch };
      if (Object.keys(patch).length === 0) return table;
      const r = await this.entities.updateOne(
        { _id, stateVersion: e.stateVersion ?? { $exists: false } },
        { $set: { statusTable: stateTableText(table) }, $inc: { stateVersion: 1 } },
      );
      if (r.matchedCount === 1) return table;
    }
    throw new ConflictError('The state table is being changed concurrently; retry');
  }

  // --- validation services -------------------------------------------------------------------

  async insertService(doc: ServiceDoc): Promise<void> {
    await this.services.insertOne({ ...doc, rules: encodedRules(doc.rules) });
  }
  async findService(accountId: string, id: string): Promise<ServiceDoc | null> {
    return serviceOf(await this.services.findOne({ _id: id, accountId }));
  }
  async listServices(accountId: string): Promise<ServiceDoc[]> {
    return (await this.services.find({ accountId }).sort({ name: 1 }).toArray()).map((s) => serviceOf(s) as ServiceDoc);
  }
  async updateService(accountId: string, id: string, set: Partial<Pick<ServiceDoc, 'name' | 'rules'>>): Promise<ServiceDoc | null> {
    const { rules, ...rest } = set;
    return serviceOf(await this.services.findOneAndUpdate(
      { _id: id, accountId },
      { $set: { ...rest, ...(rules ? { rules: encodedRules(rules) } : {}), updatedAt: new Date() }, $inc: { version: 1 } },
      { returnDocument: 'after' },
    ));
  }
  async deleteService(accountId: string, id: string): Promise<boolean> {
    const r = await this.services.deleteOne({ _id: id, accountId });
    return r.deletedCount === 1;
  }

  // --- notifications -------------------------------------------------------------------------

  /** Inserts the notification unless this month already has it; true when it was new. */
  async raiseNotification(doc: NotificationDoc): Promise<boolean> {
    try {
      await this.notifications.insertOne(doc);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }
  listNotifications(accountId: string): Promise<NotificationDoc[]> {
    return this.notifications.find({ accountId }).sort({ createdAt: -1, _id: -1 }).limit(100).toArray();
  }
}
