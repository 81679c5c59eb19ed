/**
 * Entities (devices) of an account, their one home: creation with the first key (name rule,
 * uniqueness, the plan's entity quota), bulk registration, the entity view with its online
 * status, changes, deletion and key rotation (each with its audit entry where the account asked
 * over HTTP), and the heartbeats and disconnects that make an entity online or offline. Called by
 * HTTP routes, the CLI, the message pipeline and MQTT. Accounts, plans and roles are
 * AccountService's; authentication by an entity key is too (it reads the records kept here).
 */
import { randomUUID } from 'node:crypto';
import type { AuditLog } from '../accounts/audit';
import { newEntityKeyId, resourcePathOf, sha256Hex, signEntityKey } from '../accounts/keys';
import { FIXED_LIMITS, planOf } from '../accounts/plans';
import { ENTITY_NAME_RE } from '../accounts/service';
import type { AccountService } from '../accounts/service';
import type { AccountDoc } from '../accounts/records';
import type { Secrets } from '../secrets';
import { isDuplicateKey } from '../storage/errors';
import { AppError, BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../errors';
import { jsonBytesWithin } from '../json-schema';
import type { EntityChanges, EntityDoc, EntityStore } from './records';
import type { BulkRequest, EntityPatch } from './schemas';

/** How recent the last heartbeat must be for an entity to count as online. */
export const ONLINE_WINDOW_MS = 5 * 60_000;

/** Names that are path segments of the messaging API under /api/entities/, so no entity may take them. */
export const RESERVED_ENTITY_NAMES: ReadonlySet<string> = new Set(['me', 'message', 'messages', 'check_messages', 'status-table', 'bulk', 'files']);

/** Who acts, for audit entries: this service has no dashboard users. */
export type Actor = string;

export interface CreatedEntity { name: string; resourcePath: string; apiKeyId: string; apiKey: string }

export interface NewEntityInput {
  name: string;
  role?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  directoryId?: string;
}

export interface BulkEntryResult { name: string; status: 'created' | 'failed'; apiKeyId?: string; apiKey?: string; resourcePath?: string; detail?: string }

/** The entity's pending directed messages, dropped with it (messaging/records.ts). */
export interface EntityInbox { purgeInbox(accountId: string, entityName: string): Promise<void> }
/** Validation services an entity may be assigned (messaging/records.ts). */
export interface ValidationServices { findService(accountId: string, id: string): Promise<unknown> }

/**
 * Metadata is bounded by its stored size: bulk registration copies one request's metadata into up
 * to 1,000 entities (an outside probe stored 25 MB from one 259 KB request, and a 77 MB entity
 * list followed). 413 naming the size; nothing is created or changed.
 */
function checkMetadataSize<T>(metadata: T): T {
  if (metadata !== undefined) {
    jsonBytesWithin(JSON.stringify(metadata), FIXED_LIMITS.entityMetadataBytes, (bytes) => `metadata is ${bytes} bytes as JSON; at most ${FIXED_LIMITS.entityMetadataBytes}`);
  }
  return metadata;
}

export class EntityService {
  constructor(private readonly deps: {
    store: EntityStore;
    /** The account, its plan's quota and its roles; `events` carries key revocations to live sessions. */
    accounts: Pick<AccountService, 'getAccount' | 'validateRole' | 'reserveEntitySlot' | 'releaseEntitySlot' | 'events'>;
    secrets: Pick<Secrets, 'entityKeySecret'>;
    audit: AuditLog;
    inbox: EntityInbox;
    validationServices: ValidationServices;
    now?: () => Date;
  }) {}

  private now(): Date {
    return this.deps.now ? this.deps.now() : new Date();
  }

  /** Creates an entity and its first key. Enforces the name rule, uniqueness and the plan's entity quota. */
  async createEntity(accountId: string, input: NewEntityInput): Promise<CreatedEntity> {
    const account = await this.deps.accounts.getAccount(accountId);
    if (!ENTITY_NAME_RE.test(input.name)) throw new BadRequestError('entity name must match [A-Za-z0-9_.-]{1,64}');
    if (RESERVED_ENTITY_NAMES.has(input.name)) throw new BadRequestError(`entity name "${input.name}" is reserved`);
    const role = await this.deps.accounts.validateRole(account, input.role);
    const max = planOf(account.plan).maxEntities;
    if (!(await this.deps.accounts.reserveEntitySlot(accountId, max))) {
      throw new ForbiddenError(`Entity limit reached: ${account.entityCount}/${max} on the ${account.plan} plan`, 'entity_limit_reached');
    }
    const apiKeyId = newEntityKeyId();
    const resourcePath = resourcePathOf(accountId, input.name);
    const apiKey = await signEntityKey(this.deps.secrets.entityKeySecret, { resourcePath, apiKeyId, accountId });
    try {
      await this.deps.store.insertEntity({
        _id: `${accountId}/${input.name}`, accountId, name: input.name, resourcePath, apiKeyId, apiKeyHash: sha256Hex(apiKey), role,
        tags: input.tags ?? [], metadata: input.metadata ?? {}, directoryId: input.directoryId,
        online: false, statusTable: {}, createdAt: new Date(),
      });
    } catch (err) {
      await this.deps.accounts.releaseEntitySlot(accountId);
      if (isDuplicateKey(err)) throw new ConflictError(`entity "${input.name}" already exists`);
      throw err;
    }
    await this.recordEntityKey(accountId, input.name, apiKeyId, apiKey);
    return { name: input.name, resourcePath, apiKeyId, apiKey };
  }

  /** The entity's record; NotFound when there is none. */
  async entity(accountId: string, name: string): Promise<EntityDoc> {
    const entity = await this.deps.store.findEntity(accountId, name);
    if (!entity) throw new NotFoundError('Entity');
    return entity;
  }

  /**
   * Creates the devices one by one (the entity quota is reserved per device, so a full account
   * fails the remaining entries, not the batch), then writes one audit entry for the batch.
   */
  async bulkRegister(account: AccountDoc, req: BulkRequest, actor: Actor): Promise<{ created: number; failed: number; results: BulkEntryResult[] }> {
    checkMetadataSize(req.metadata);
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
        const e = await this.createEntity(account._id, {
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
    const docs = await this.deps.store.listEntities(accountId, offset, limit + 1);
    return { entities: docs.slice(0, limit).map((e) => this.entityView(e)), next_cursor: docs.length > limit ? offset + limit : null };
  }

  async getEntity(accountId: string, name: string) {
    return this.entityView(await this.entity(accountId, name));
  }

  async updateEntity(account: AccountDoc, name: string, patch: EntityPatch, actor: Actor) {
    if (typeof patch.service === 'string' && !(await this.deps.validationServices.findService(account._id, patch.service))) {
      throw new BadRequestError(`service "${patch.service}" does not exist`);
    }
    const set: EntityChanges = {};
    if (patch.tags !== undefined) set.tags = patch.tags;
    if (patch.metadata !== undefined) set.metadata = checkMetadataSize(patch.metadata);
    if (patch.role !== undefined) set.role = await this.deps.accounts.validateRole(account, patch.role);
    if (typeof patch.service === 'string') set.serviceId = patch.service;
    const e = await this.deps.store.updateEntity(account._id, name, set, patch.service === null ? ['serviceId'] : []);
    if (!e) throw new NotFoundError('Entity');
    if (set.role !== undefined) this.deps.accounts.events.emit('entityPermissionsChanged', account._id);
    await this.deps.audit.record({
      accountId: account._id, action: 'update', resourceType: 'entity', resourceId: e.resourcePath, resourceName: e.name,
      userEmail: actor, details: { fields: Object.keys(patch) },
    });
    return this.entityView(e);
  }

  /** Revokes the entity's keys (live sessions are cut), deletes it, frees its slot and drops its pending messages. */
  async deleteEntity(accountId: string, name: string, actor: Actor): Promise<void> {
    const e = await this.entity(accountId, name);
    const revoked = await this.deps.store.revokeEntityKeys(accountId, name, new Date());
    if (await this.deps.store.deleteEntity(accountId, name)) await this.deps.accounts.releaseEntitySlot(accountId);
    this.announceRevoked(revoked);
    await this.deps.inbox.purgeInbox(accountId, name);
    await this.deps.audit.record({
      accountId, action: 'delete', resourceType: 'entity', resourceId: e.resourcePath, resourceName: e.name,
      userEmail: actor, details: { revokedApiKeyId: e.apiKeyId },
    });
  }

  /** Revokes every live key of the entity and issues a new one (shown once). */
  async rotateKey(accountId: string, name: string, actor: Actor): Promise<CreatedEntity> {
    const before = await this.entity(accountId, name);
    const revoked = await this.deps.store.revokeEntityKeys(accountId, name, new Date());
    const apiKeyId = newEntityKeyId();
    const apiKey = await signEntityKey(this.deps.secrets.entityKeySecret, { resourcePath: before.resourcePath, apiKeyId, accountId });
    await this.recordEntityKey(accountId, name, apiKeyId, apiKey);
    // Switching the entity to the new key is what makes the old one fail authentication.
    await this.deps.store.setEntityKey(accountId, name, apiKeyId, sha256Hex(apiKey));
    this.announceRevoked(revoked);
    const r: CreatedEntity = { name, resourcePath: before.resourcePath, apiKeyId, apiKey };
    await this.deps.audit.record({
      accountId, action: 'rotate_key', resourceType: 'entity', resourceId: r.resourcePath, resourceName: r.name,
      userEmail: actor, details: { revokedApiKeyId: before.apiKeyId, newApiKeyId: r.apiKeyId },
    });
    return r;
  }

  /** A deleted validation service is no longer any entity's. */
  clearEntityService(accountId: string, serviceId: string): Promise<void> {
    return this.deps.store.clearEntityService(accountId, serviceId);
  }

  /** A heartbeat (HTTP or MQTT): online from `at`; `metrics` replace the same-named last ones. */
  recordHeartbeat(accountId: string, name: string, at: Date, metrics: Record<string, number>): Promise<void> {
    return this.deps.store.recordHeartbeat(accountId, name, at, metrics);
  }

  /** An MQTT session ended: offline until the next heartbeat or connect. */
  recordDisconnect(accountId: string, name: string, at: Date): Promise<void> {
    return this.deps.store.recordDisconnect(accountId, name, at);
  }

  /** The key record: the history of an entity's keys and their revocation (MQTT re-checks sessions against it). */
  private async recordEntityKey(accountId: string, entityName: string, apiKeyId: string, apiKey: string): Promise<void> {
    await this.deps.store.insertEntityKey({ _id: apiKeyId, accountId, entityName, tokenHash: sha256Hex(apiKey), createdAt: new Date() });
  }

  private announceRevoked(ids: string[]): void {
    for (const id of ids) this.deps.accounts.events.emit('entityKeyRevoked', id);
  }
}
