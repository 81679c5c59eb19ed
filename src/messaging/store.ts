/**
 * MongoDB access for messaging: message history, the inbox of pending directed messages, entity
 * state tables and heartbeats, validation services and in-app notifications. The only place that
 * speaks MongoDB for messaging.
 *
 * Why two collections for messages: history (`messages`) only grows, while the inbox
 * (`message_inbox`) holds just the directed messages nobody has taken yet. A claim is one
 * findOneAndDelete on the inbox, atomic on a single document on MongoDB and on FerretDB alike, so
 * a message goes out once however many pollers (HTTP or MQTT) race for it; and the claim query
 * stays cheap as history grows (the local FerretDB scans whole collections for every query).
 */
import { Collection, Db, Filter, FindCursor, MongoBulkWriteError, Sort } from 'mongodb';
import { COLLECTIONS } from '../storage/mongo';
import { isDuplicateKey } from '../storage/mongo';
import { GroupCommit, ItemFailure } from '../storage/group-commit';
import type { EntityDoc } from '../accounts/store';
import type { ServiceRule } from './schemas';

export type ValidationResult = 'passed' | 'failed' | 'skipped';
export interface ActionResult { rule: string; passed: boolean; errors: string[] }
export interface ValidationOutcome { result: ValidationResult; actionResults?: ActionResult[] }

export interface MessageDoc {
  _id: string;
  accountId: string;
  msgType: 'publish' | 'client_cmd_resp';
  /** Sender resource path. */
  source: string;
  sourceName: string;
  /** Destination entity name of a directed message. */
  destination: string | null;
  data: Record<string, unknown>;
  tags: string[];
  /** The message's own timestamp (RFC 3339 from the sender, else server time). */
  timestamp: Date;
  receivedAt: Date;
  validation: ValidationOutcome;
  bytes: number;
}

/** A message as an entity receives it (check_messages, MQTT messages topic). */
export interface DeliveredMessage {
  id: string;
  msg_type: string;
  data: Record<string, unknown>;
  tags: string[];
  source: string;
  timestamp: string;
}

export interface InboxDoc {
  _id: string; // the message id
  accountId: string;
  dest: string;
  queuedAt: Date;
  message: DeliveredMessage;
}

export interface ServiceDoc {
  _id: string;
  accountId: string;
  name: string;
  rules: ServiceRule[];
  /** Bumped on every change, so compiled validators cached by (id, version) never go stale. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export type NotificationKind = 'data_limit_80' | 'data_limit_100';
export interface NotificationDoc {
  _id: string; // `${accountId}:${period}:${kind}`: raised once per month
  accountId: string;
  kind: NotificationKind;
  period: string;
  message: string;
  usedBytes: number;
  limitBytes: number;
  createdAt: Date;
}

export interface MessageFilter { accountId: string; sourceName?: string; tags?: string[]; from?: Date; to?: Date }

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

export class MessageStore {
  readonly messages: Collection<MessageDoc>;
  readonly inbox: Collection<InboxDoc>;
  readonly services: Collection<ServiceDoc>;
  readonly notifications: Collection<NotificationDoc>;
  private readonly entities: Collection<EntityDoc>;
  private readonly messageWriter: GroupCommit<MessageDoc, void>;
  private readonly inboxWriter: GroupCommit<InboxDoc, void>;
  private fifoSort?: Promise<Sort | undefined>;

  constructor(private readonly db: Db) {
    this.messages = db.collection<MessageDoc>(COLLECTIONS.messages);
    this.inbox = db.collection<InboxDoc>(COLLECTIONS.messageInbox);
    this.services = db.collection<ServiceDoc>(COLLECTIONS.services);
    this.notifications = db.collection<NotificationDoc>(COLLECTIONS.notifications);
    this.entities = db.collection<EntityDoc>(COLLECTIONS.entities);
    this.messageWriter = insertBatcher(this.messages);
    this.inboxWriter = insertBatcher(this.inbox);
  }

  // --- history -------------------------------------------------------------------------------

  insertMessage(doc: MessageDoc): Promise<void> {
    return this.messageWriter.submit('', doc);
  }

  private publishFilter(f: MessageFilter): Filter<MessageDoc> {
    const q: Filter<MessageDoc> = { accountId: f.accountId, msgType: 'publish' };
    if (f.sourceName) q.sourceName = f.sourceName;
    if (f.tags?.length) q.tags = { $in: f.tags };
    if (f.from || f.to) q.timestamp = { ...(f.from ? { $gte: f.from } : {}), ...(f.to ? { $lt: f.to } : {}) };
    return q;
  }

  /** Publish messages newest first (timestamp, then id), one page by offset. */
  listPublished(f: MessageFilter, offset: number, limit: number): Promise<MessageDoc[]> {
    return this.messages.find(this.publishFilter(f)).sort({ timestamp: -1, _id: -1 }).skip(offset).limit(limit).toArray();
  }

  findPublished(accountId: string, id: string): Promise<MessageDoc | null> {
    return this.messages.findOne({ _id: id, accountId, msgType: 'publish' });
  }

  /** One cursor over the account's publish messages, newest first, read `batchSize` at a time. */
  exportCursor(f: MessageFilter, batchSize: number): FindCursor<MessageDoc> {
    return this.messages.find(this.publishFilter(f)).sort({ timestamp: -1, _id: -1 }).batchSize(batchSize);
  }

  // --- inbox ---------------------------------------------------------------------------------

  enqueue(doc: InboxDoc): Promise<void> {
    return this.inboxWriter.submit('', doc);
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
    return this.inbox.findOneAndDelete({ accountId, dest }, sort ? { sort } : {});
  }

  /** Takes one named pending message (MQTT delivery); null when a poller already took it. */
  claimForDelivery(messageId: string): Promise<InboxDoc | null> {
    return this.inbox.findOneAndDelete({ _id: messageId });
  }

  async purgeInbox(accountId: string, dest: string): Promise<void> {
    await this.inbox.deleteMany({ accountId, dest });
  }

  // --- state table and heartbeats ------------------------------------------------------------

  // findAndModify with a projection is NotImplemented on FerretDB v1: the whole entity comes back.
  async getStatusTable(accountId: string, name: string): Promise<Record<string, unknown> | undefined> {
    const e = await this.entities.findOne({ _id: `${accountId}/${name}` }, { projection: { statusTable: 1 } });
    return e ? e.statusTable ?? {} : undefined;
  }

  async replaceStatusTable(accountId: string, name: string, table: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    const e = await this.entities.findOneAndUpdate(
      { _id: `${accountId}/${name}` }, { $set: { statusTable: table } }, { returnDocument: 'after' },
    );
    return e ? e.statusTable ?? {} : undefined;
  }

  /** Shallow merge: each top-level key of `patch` is set, other keys stay. */
  async mergeStatusTable(accountId: string, name: string, patch: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    const keys = Object.keys(patch);
    if (keys.length === 0) return this.getStatusTable(accountId, name);
    const set: Record<string, unknown> = {};
    for (const k of keys) set[`statusTable.${k}`] = patch[k];
    const e = await this.entities.findOneAndUpdate(
      { _id: `${accountId}/${name}` }, { $set: set }, { returnDocument: 'after' },
    );
    return e ? e.statusTable ?? {} : undefined;
  }

  async recordHeartbeat(accountId: string, name: string, at: Date, metrics: Record<string, number>): Promise<void> {
    const set: Record<string, unknown> = { online: true, lastSeenAt: at };
    for (const [k, v] of Object.entries(metrics)) set[`metrics.${k}`] = v;
    await this.entities.updateOne({ _id: `${accountId}/${name}` }, { $set: set });
  }

  /** MQTT disconnect: offline until the next heartbeat or connect. */
  async recordDisconnect(accountId: string, name: string, at: Date): Promise<void> {
    await this.entities.updateOne({ _id: `${accountId}/${name}` }, { $set: { online: false, lastDisconnectAt: at } });
  }

  // --- validation services -------------------------------------------------------------------

  insertService(doc: ServiceDoc) { return this.services.insertOne(doc); }
  findService(accountId: string, id: string) { return this.services.findOne({ _id: id, accountId }); }
  listServices(accountId: string) { return this.services.find({ accountId }).sort({ name: 1 }).toArray(); }
  async updateService(accountId: string, id: string, set: Partial<Pick<ServiceDoc, 'name' | 'rules'>>): Promise<ServiceDoc | null> {
    return this.services.findOneAndUpdate(
      { _id: id, accountId }, { $set: { ...set, updatedAt: new Date() }, $inc: { version: 1 } }, { returnDocument: 'after' },
    );
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
  listNotifications(accountId: string) {
    return this.notifications.find({ accountId }).sort({ createdAt: -1, _id: -1 }).limit(100).toArray();
  }
}
