/**
 * Registering and managing entities (devices) for the account: bulk registration, the entity
 * view with its online status, changes, deletion and key rotation, each with its audit entry.
 * Keys and the entity records are AccountService's; called by HTTP routes and the CLI.
 */
import { randomUUID } from 'node:crypto';
import type { AuditLog } from '../accounts/audit';
import type { AccountService, CreatedEntity } from '../accounts/service';
import type { AccountDoc, EntityDoc } from '../accounts/records';
import { AppError, BadRequestError } from '../errors';
import type { BulkRequest, EntityPatch } from './schemas';

/** How recent the last heartbeat must be for an entity to count as online. */
export const ONLINE_WINDOW_MS = 5 * 60_000;

/** Who acts, for audit entries: this service has no dashboard users. */
export type Actor = string;

export interface BulkEntryResult { name: string; status: 'created' | 'failed'; apiKeyId?: string; apiKey?: string; resourcePath?: string; detail?: string }

/** The entity's pending directed messages, dropped with it (messaging/records.ts). */
export interface EntityInbox { purgeInbox(accountId: string, entityName: string): Promise<void> }
/** Validation services an entity may be assigned (messaging/records.ts). */
export interface ValidationServices { findService(accountId: string, id: string): Promise<unknown> }

export class EntityService {
  constructor(private readonly deps: {
    accounts: AccountService;
    audit: AuditLog;
    inbox: EntityInbox;
    validationServices: ValidationServices;
    now?: () => Date;
  }) {}

  private now(): Date {
    return this.deps.now ? this.deps.now() : new Date();
  }

  /**
   * Creates the devices one by one (the entity quota is reserved per device, so a full account
   * fails the remaining entries, not the batch), then writes one audit entry for the batch.
   */
  async bulkRegister(account: AccountDoc, req: BulkRequest, actor: Actor): Promise<{ created: number; failed: number; results: BulkEntryResult[] }> {
    let entries: Array<{ name: string; tags?: string[] }>;
    let mode: 'entities' | 'count';
    if (req.entities) {
      mode = 'entities';
      entries = req.entities;
    } else if (req.count !== undefined && req.prefix !== undefined) {
      mode = 'count';
      entries = Array.from({ length: req.count }, (_, i) => ({ name: `${req.prefix}-${i + 1}`, tags: req.tags }));
    } else {
      throw new BadRequestError('Give either entities (an explicit list) or count and prefix');
    }
    const seen = new Set<string>();
    const results: BulkEntryResult[] = [];
    for (const entry of entries) {
      if (seen.has(entry.name)) {
        results.push({ name: entry.name, status: 'failed', detail: 'name appears twice in this request' });
        continue;
      }
      seen.add(entry.name);
      try {
        const e: CreatedEntity = await this.deps.accounts.createEntity(account._id, {
          name: entry.name, tags: entry.tags ?? req.tags ?? [], metadata: req.metadata, directoryId: req.directoryId,
        });
        results.push({ name: e.name, status: 'created', apiKeyId: e.apiKeyId, apiKey: e.apiKey, resourcePath: e.resourcePath });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        results.push({ name: entry.name, status: 'failed', detail: err.message });
      }
    }
    const created = results.filter((r) => r.status === 'created').length;
    await this.deps.audit.record({
      accountId: account._id, action: 'bulk_create', resourceType: 'entity', resourceId: randomUUID(),
      resourceName: mode === 'count' ? `${req.prefix}-1..${req.prefix}-${req.count}` : `${entries.length} listed entities`,
      userEmail: actor,
      details: { mode, requested: entries.length, created, failed: entries.length - created, ...(req.directoryId ? { directoryId: req.directoryId } : {}) },
    });
    return { created, failed: entries.length - created, results };
  }

  entityView(e: EntityDoc) {
    const lastSeen = e.lastSeenAt ?? null;
    return {
      name: e.name, resourcePath: e.resourcePath, apiKeyId: e.apiKeyId, role: e.role, tags: e.tags, metadata: e.metadata,
      ...(e.directoryId ? { directoryId: e.directoryId } : {}),
      service: e.serviceId ?? null,
      online: e.online && lastSeen !== null && this.now().getTime() - lastSeen.getTime() < ONLINE_WINDOW_MS,
      lastSeenAt: lastSeen ? lastSeen.toISOString() : null,
      metrics: e.metrics ?? {},
      createdAt: e.createdAt.toISOString(),
    };
  }

  async listEntities(accountId: string, offset: number, limit: number) {
    const docs = await this.deps.accounts.listEntities(accountId, offset, limit + 1);
    return { entities: docs.slice(0, limit).map((e) => this.entityView(e)), next_cursor: docs.length > limit ? offset + limit : null };
  }

  async getEntity(accountId: string, name: string) {
    return this.entityView(await this.deps.accounts.getEntity(accountId, name));
  }

  async updateEntity(account: AccountDoc, name: string, patch: EntityPatch, actor: Actor) {
    if (typeof patch.service === 'string' && !(await this.deps.validationServices.findService(account._id, patch.service))) {
      throw new BadRequestError(`service "${patch.service}" does not exist`);
    }
    const e = await this.deps.accounts.updateEntity(account, name, { tags: patch.tags, metadata: patch.metadata, role: patch.role, serviceId: patch.service });
    await this.deps.audit.record({
      accountId: account._id, action: 'update', resourceType: 'entity', resourceId: e.resourcePath, resourceName: e.name,
      userEmail: actor, details: { fields: Object.keys(patch) },
    });
    return this.entityView(e);
  }

  async deleteEntity(accountId: string, name: string, actor: Actor): Promise<void> {
    const e = await this.deps.accounts.deleteEntity(accountId, name);
    await this.deps.inbox.purgeInbox(accountId, name);
    await this.deps.audit.record({
      accountId, action: 'delete', resourceType: 'entity', resourceId: e.resourcePath, resourceName: e.name,
      userEmail: actor, details: { revokedApiKeyId: e.apiKeyId },
    });
  }

  async rotateKey(accountId: string, name: string, actor: Actor): Promise<CreatedEntity> {
    const before = await this.deps.accounts.getEntity(accountId, name);
    const r = await this.deps.accounts.rotateEntityKey(accountId, name);
    await this.deps.audit.record({
      accountId, action: 'rotate_key', resourceType: 'entity', resourceId: r.resourcePath, resourceName: r.name,
      userEmail: actor, details: { revokedApiKeyId: before.apiKeyId, newApiKeyId: r.apiKeyId },
    });
    return r;
  }
}
