/**
 * Messaging rules outside the message pipeline: state table reads and direct writes, delivery
 * (check_messages and the MQTT claim), message history, validation services and notifications
 * (registering and managing entities is entities/service.ts's). Called by HTTP routes, MQTT and the CLI.
 */
import { randomUUID } from 'node:crypto';
import type { AuditLog } from '../accounts/audit';
import type { EntityService } from '../entities/service';
import type { AccountDoc } from '../accounts/records';
import type { EntityDoc } from '../entities/records';
import { isDuplicateKey } from '../storage/errors';
import { ConflictError, NotFoundError } from '../errors';
import { MessagingEvents } from './pipeline';
import type { MessageSearch, ServiceInput } from './schemas';
import type { DeliveredMessage, MessageDoc, MessageFilter, MessagingRecords, ServiceDoc } from './records';
import type { ServiceValidator } from './validation';
import { topicsOf } from './topics';

export interface MessageItem { id: string; source: string; destination: string | null; msgType: string; data: Record<string, unknown>; tags: string[]; timestamp: string }
export interface MessagePage { messages: MessageItem[]; next_cursor: number | null }

export const messageItemOf = (m: MessageDoc): MessageItem => ({
  id: m._id, source: m.source, destination: m.destination, msgType: m.msgType, data: m.data, tags: m.tags, timestamp: m.timestamp.toISOString(),
});

export const serviceViewOf = (s: ServiceDoc) => ({
  id: s._id, name: s.name, rules: s.rules, createdAt: s.createdAt.toISOString(), updatedAt: s.updatedAt.toISOString(),
});

export class MessagingInfo {
  constructor(private readonly publicMqttUrl: string) {}

  entityInfo(account: AccountDoc, entity: EntityDoc) {
    return {
      name: entity.name,
      resourcePath: entity.resourcePath,
      apiKeyId: entity.apiKeyId,
      accountId: account._id,
      region: account.region,
      tags: entity.tags,
      mqtt: { url: this.publicMqttUrl, topics: topicsOf(account._id, account.region, entity.apiKeyId) },
    };
  }
}

/** Who acts, for audit entries: this service has no dashboard users. */
export type Actor = string;


export class MessagingService {
  constructor(private readonly deps: {
    store: MessagingRecords;
    entities: Pick<EntityService, 'clearEntityService'>;
    audit: AuditLog;
    validator: ServiceValidator;
    events: MessagingEvents;
    now?: () => Date;
  }) {}

  private now(): Date {
    return this.deps.now ? this.deps.now() : new Date();
  }

  // --- state table ---------------------------------------------------------------------------

  async getStatusTable(accountId: string, entityName: string): Promise<Record<string, unknown>> {
    const t = await this.deps.store.getStatusTable(accountId, entityName);
    if (!t) throw new NotFoundError('Entity');
    return t;
  }

  /** PATCH/PUT: immediate, no message processing (no validation, flows or data accounting). */
  async writeStatusTable(entity: EntityDoc, table: Record<string, unknown>, mode: 'merge' | 'replace'): Promise<Record<string, unknown>> {
    const t = mode === 'merge'
      ? await this.deps.store.mergeStatusTable(entity.accountId, entity.name, table)
      : await this.deps.store.replaceStatusTable(entity.accountId, entity.name, table);
    if (!t) throw new NotFoundError('Entity');
    this.deps.events.emit('stateChanged', { accountId: entity.accountId, entityName: entity.name, apiKeyId: entity.apiKeyId, statusTable: t });
    return t;
  }

  // --- delivery ------------------------------------------------------------------------------

  /** Claims up to `limit` pending messages of the entity, oldest first; null when none. */
  async checkMessages(accountId: string, entityName: string, limit: number): Promise<DeliveredMessage[] | null> {
    const out: DeliveredMessage[] = [];
    while (out.length < limit) {
      const doc = await this.deps.store.claimNext(accountId, entityName);
      if (!doc) break;
      out.push(doc.message);
    }
    return out.length ? out : null;
  }

  /**
   * For MQTT delivery after `messageQueued`: takes the message if no poller took it first.
   * Returns the message to send, or null (already delivered elsewhere).
   */
  async claimForDelivery(messageId: string): Promise<DeliveredMessage | null> {
    const doc = await this.deps.store.claimForDelivery(messageId);
    return doc ? doc.message : null;
  }

  // --- history -------------------------------------------------------------------------------

  private async page(filter: MessageFilter, offset: number, limit: number): Promise<MessagePage> {
    const docs = await this.deps.store.listPublished(filter, offset, limit + 1);
    const more = docs.length > limit;
    return { messages: docs.slice(0, limit).map(messageItemOf), next_cursor: more ? offset + limit : null };
  }

  listMessages(accountId: string, q: { entity_name?: string; limit: number; offset: number }): Promise<MessagePage> {
    return this.page({ accountId, sourceName: q.entity_name }, q.offset, q.limit);
  }

  searchMessages(accountId: string, q: MessageSearch): Promise<MessagePage> {
    const from = q.from ? new Date(q.from) : undefined;
    const to = q.to ? new Date(q.to) : undefined;
    // An empty interval holds no messages.
    if (from && to && from >= to) return Promise.resolve({ messages: [], next_cursor: null });
    return this.page({ accountId, sourceName: q.entity_name, tags: q.tags, from, to }, q.offset, q.limit);
  }

  async getMessage(accountId: string, id: string): Promise<MessageItem> {
    const doc = await this.deps.store.findPublished(accountId, id);
    if (!doc) throw new NotFoundError('Message');
    return messageItemOf(doc);
  }

  // --- validation services -------------------------------------------------------------------

  async listServices(accountId: string) {
    return { services: (await this.deps.store.listServices(accountId)).map(serviceViewOf) };
  }

  async getService(accountId: string, id: string) {
    const s = await this.deps.store.findService(accountId, id);
    if (!s) throw new NotFoundError('Service');
    return serviceViewOf(s);
  }

  async createService(accountId: string, input: ServiceInput, actor: Actor) {
    this.deps.validator.compile(input.rules);
    const now = this.now();
    const doc: ServiceDoc = { _id: randomUUID(), accountId, name: input.name, rules: input.rules, version: 1, createdAt: now, updatedAt: now };
    try {
      await this.deps.store.insertService(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError(`service "${input.name}" already exists`);
      throw err;
    }
    await this.deps.audit.record({ accountId, action: 'create', resourceType: 'service', resourceId: doc._id, resourceName: doc.name, userEmail: actor, details: { rules: doc.rules.length } });
    return serviceViewOf(doc);
  }

  async updateService(accountId: string, id: string, patch: Partial<ServiceInput>, actor: Actor) {
    if (patch.rules) this.deps.validator.compile(patch.rules);
    let s: ServiceDoc | null;
    try {
      s = await this.deps.store.updateService(accountId, id, { ...(patch.name !== undefined ? { name: patch.name } : {}), ...(patch.rules ? { rules: patch.rules } : {}) });
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError(`service "${patch.name}" already exists`);
      throw err;
    }
    if (!s) throw new NotFoundError('Service');
    await this.deps.audit.record({ accountId, action: 'update', resourceType: 'service', resourceId: s._id, resourceName: s.name, userEmail: actor, details: { fields: Object.keys(patch) } });
    return serviceViewOf(s);
  }

  /** Deleting a service unassigns it from its entities (their publishes are then `skipped`). */
  async deleteService(accountId: string, id: string, actor: Actor): Promise<void> {
    const s = await this.deps.store.findService(accountId, id);
    if (!s || !(await this.deps.store.deleteService(accountId, id))) throw new NotFoundError('Service');
    await this.deps.entities.clearEntityService(accountId, id);
    await this.deps.audit.record({ accountId, action: 'delete', resourceType: 'service', resourceId: id, resourceName: s.name, userEmail: actor, details: {} });
  }

  // --- notifications -------------------------------------------------------------------------

  async notifications(accountId: string) {
    const docs = await this.deps.store.listNotifications(accountId);
    return {
      notifications: docs.map((n) => ({
        id: n._id, kind: n.kind, period: n.period, message: n.message, usedBytes: n.usedBytes, limitBytes: n.limitBytes, createdAt: n.createdAt.toISOString(),
      })),
    };
  }
}
