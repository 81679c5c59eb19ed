/**
 * The embedded store of messaging: message history, the inbox of pending directed messages,
 * entity state tables (on the entity's row; the rest of it is entities/store/sqlite.ts's),
 * validation services and notifications. A claim deletes the
 * inbox row it returns in one statement under the write lock, so a message goes out once however
 * many pollers in however many processes race for it; a state-table merge reads and writes the
 * table under the same lock, so concurrent merges keep every key.
 */
import { DocTable, placeholders, SqliteDatabase } from '../../storage/sqlite';
import { isDuplicateKey } from '../../storage/errors';
import { decodeUserJson, encodeUserJson } from '../../storage/user-json';
import type { StoredEntity } from '../../entities/store/sqlite';
import type { ExportedMessage, ExportSource, InboxDoc, MessageDoc, MessageFilter, MessageStore, NotificationDoc, ServiceDoc } from '../records';
import { encodedRules, exportedOf, inboxOf, messageOf, serviceOf, stateTableText, StoredInbox, StoredMessage, StoredService } from './codec';

/**
 * Export pages: this many messages per read at most. A page is read, parsed and written in one
 * turn of the event loop: 250 rows hold it about 1.5 ms (1,000 rows: 6 ms), at the same rows/s.
 */
const EXPORT_PAGE_MAX = 250;

export class SqliteMessageStore implements MessageStore {
  private readonly messages: DocTable<StoredMessage>;
  private readonly inbox: DocTable<StoredInbox>;
  private readonly services: DocTable<StoredService>;
  private readonly notifications: DocTable<NotificationDoc>;
  private readonly entities: DocTable<StoredEntity>;

  constructor(db: SqliteDatabase) {
    this.messages = new DocTable(db, 'messages');
    this.inbox = new DocTable(db, 'message_inbox');
    this.services = new DocTable(db, 'services');
    this.notifications = new DocTable(db, 'notifications');
    this.entities = new DocTable(db, 'entities');
  }

  // --- history -------------------------------------------------------------------------------

  async insertMessage(doc: MessageDoc): Promise<void> {
    this.messages.insert({ ...doc, data: encodeUserJson(doc.data) });
  }

  private publishFilter(f: MessageFilter): { where: string; params: unknown[] } {
    const where = ["account_id = ? AND msg_type = 'publish'"];
    const params: unknown[] = [f.accountId];
    if (f.sourceName) { where.push('source_name = ?'); params.push(f.sourceName); }
    if (f.tags?.length) {
      where.push(`id IN (SELECT message_id FROM message_tags WHERE account_id = ? AND tag IN (${placeholders(f.tags.length)}))`);
      params.push(f.accountId, ...f.tags);
    }
    if (f.from) { where.push('ts >= ?'); params.push(f.from.getTime()); }
    if (f.to) { where.push('ts < ?'); params.push(f.to.getTime()); }
    return { where: where.join(' AND '), params };
  }

  async listPublished(f: MessageFilter, offset: number, limit: number): Promise<MessageDoc[]> {
    if (f.tags?.length) return this.listTagged({ ...f, tags: f.tags }, offset, limit);
    const { where, params } = this.publishFilter(f);
    return this.messages.find(where, params, { order: 'ts DESC, id DESC', offset, limit }).map(messageOf);
  }

  /**
   * A tag search reads, per tag, at most offset + limit rows of message_tags' index, newest first
   * (the sender's range of it with entity_name), merges them without duplicates, then reads those
   * messages: its cost follows the page asked for, not the size of the account's history.
   */
  private listTagged(f: MessageFilter & { tags: string[] }, offset: number, limit: number): MessageDoc[] {
    const cond = ['account_id = ?', 'tag = ?'];
    const fixed: unknown[] = [];
    if (f.sourceName) { cond.push('source_name = ?'); fixed.push(f.sourceName); }
    if (f.from) { cond.push('ts >= ?'); fixed.push(f.from.getTime()); }
    if (f.to) { cond.push('ts < ?'); fixed.push(f.to.getTime()); }
    const branch = `SELECT * FROM (SELECT ts, message_id FROM message_tags WHERE ${cond.join(' AND ')} ORDER BY ts DESC, message_id DESC LIMIT ?)`;
    const tags = [...new Set(f.tags)];
    const keys = `SELECT ts, message_id AS id FROM (${tags.map(() => branch).join(' UNION ')}) ORDER BY ts DESC, message_id DESC LIMIT ? OFFSET ?`;
    const params = tags.flatMap((tag) => [f.accountId, tag, ...fixed, offset + limit]);
    return this.messages.findByKeys(keys, [...params, limit, offset], 'k.ts DESC, k.id DESC').map(messageOf);
  }

  async findPublished(accountId: string, id: string): Promise<MessageDoc | null> {
    const doc = this.messages.get(id);
    return doc && doc.accountId === accountId && doc.msgType === 'publish' ? messageOf(doc) : null;
  }

  exportCursor(f: MessageFilter, batchSize: number): ExportSource<ExportedMessage> {
    const { where, params } = this.publishFilter(f);
    // A plain JSON.parse of each record (no revival of its dates, the bulk of a page's time): the
    // fields an export writes hold none, and the time is the ts column's.
    return this.messages.newestFirst(where, params, 'ts', Math.max(1, Math.min(batchSize, EXPORT_PAGE_MAX)),
      ({ t, doc }) => exportedOf(JSON.parse(doc) as Omit<StoredMessage, 'timestamp'>, new Date(t)));
  }

  // --- inbox ---------------------------------------------------------------------------------

  async enqueue(doc: InboxDoc): Promise<void> {
    this.inbox.insert({ ...doc, message: { ...doc.message, data: encodeUserJson(doc.message.data) } });
  }

  async claimNext(accountId: string, dest: string): Promise<InboxDoc | null> {
    const doc = this.inbox.takeFirst('account_id = ? AND dest = ?', [accountId, dest], 'queued_at, id');
    return doc && inboxOf(doc);
  }

  async claimForDelivery(messageId: string): Promise<InboxDoc | null> {
    const doc = this.inbox.take(messageId);
    return doc && inboxOf(doc);
  }

  async purgeInbox(accountId: string, dest: string): Promise<void> {
    this.inbox.deleteWhere('account_id = ? AND dest = ?', [accountId, dest]);
  }

  // --- state table ---------------------------------------------------------------------------

  async getStatusTable(accountId: string, name: string): Promise<Record<string, unknown> | undefined> {
    const e = this.entities.get(`${accountId}/${name}`);
    return e ? decodeUserJson(e.statusTable ?? '{}') : undefined;
  }

  async replaceStatusTable(accountId: string, name: string, table: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    const text = stateTableText(table);
    const e = this.entities.update(`${accountId}/${name}`, (cur) => ({ ...cur, statusTable: text }));
    return e ? table : undefined;
  }

  async mergeStatusTable(accountId: string, name: string, patch: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    let table: Record<string, unknown> | undefined;
    this.entities.update(`${accountId}/${name}`, (cur) => {
      table = { ...decodeUserJson<Record<string, unknown>>(cur.statusTable ?? '{}'), ...patch };
      return Object.keys(patch).length ? { ...cur, statusTable: stateTableText(table) } : undefined;
    });
    return table;
  }

  // --- validation services -------------------------------------------------------------------

  async insertService(doc: ServiceDoc): Promise<void> {
    this.services.insert({ ...doc, rules: encodedRules(doc.rules) });
  }
  async findService(accountId: string, id: string): Promise<ServiceDoc | null> {
    const s = this.services.get(id);
    return s && s.accountId === accountId ? serviceOf(s) : null;
  }
  async listServices(accountId: string): Promise<ServiceDoc[]> {
    return this.services.find('account_id = ?', [accountId], { order: 'name' }).map((s) => serviceOf(s) as ServiceDoc);
  }
  async updateService(accountId: string, id: string, set: Partial<Pick<ServiceDoc, 'name' | 'rules'>>): Promise<ServiceDoc | null> {
    const { rules, ...rest } = set;
    const s = this.services.update(id, (cur) => (cur.accountId !== accountId ? undefined : {
      ...cur, ...rest, ...(rules ? { rules: encodedRules(rules) } : {}), updatedAt: new Date(), version: cur.version + 1,
    }));
    return s && s.accountId === accountId ? serviceOf(s) : null;
  }
  async deleteService(accountId: string, id: string): Promise<boolean> {
    return this.services.deleteWhere('id = ? AND account_id = ?', [id, accountId]) === 1;
  }

  // --- notifications -------------------------------------------------------------------------

  async raiseNotification(doc: NotificationDoc): Promise<boolean> {
    try {
      this.notifications.insert(doc);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }
  async listNotifications(accountId: string): Promise<NotificationDoc[]> {
    return this.notifications.find('account_id = ?', [accountId], { order: 'created_at DESC, id DESC', limit: 100 });
  }
}
