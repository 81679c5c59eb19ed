/** The embedded store of accounts, account keys, entities, entity keys, custom roles and the audit log. */
import { decodeDoc, DocTable, immediate, placeholders, SqliteDatabase } from '../../storage/sqlite';
import { decodeUserJson, encodeUserJson, UserJsonText } from '../../storage/user-json';
import type { PlanTier } from '../plans';
import type { AuditCursor, AuditEntry, AuditFilter } from '../audit';
import type { AccountDoc, AccountStore, ApiKeyDoc, AuditStore, EntityDoc, EntityKeyDoc, RoleDoc } from '../records';
import type { Permission } from '../roles';

/** As stored: the user-controlled metadata and state table are JSON text (user-json.ts). */
export type StoredEntity = Omit<EntityDoc, 'metadata' | 'statusTable'> & { metadata: UserJsonText; statusTable?: UserJsonText; stateVersion?: number };

export const entityOf = ({ stateVersion: _v, ...e }: StoredEntity): EntityDoc => ({
  ...e, metadata: decodeUserJson(e.metadata), statusTable: decodeUserJson(e.statusTable ?? '{}'),
});

export class SqliteAccountStore implements AccountStore {
  private readonly accounts: DocTable<AccountDoc>;
  private readonly apiKeys: DocTable<ApiKeyDoc>;
  private readonly entities: DocTable<StoredEntity>;
  private readonly entityKeys: DocTable<EntityKeyDoc>;
  private readonly roles: DocTable<RoleDoc>;

  constructor(private readonly db: SqliteDatabase) {
    this.accounts = new DocTable(db, 'accounts');
    this.apiKeys = new DocTable(db, 'api_keys');
    this.entities = new DocTable(db, 'entities');
    this.entityKeys = new DocTable(db, 'entity_keys');
    this.roles = new DocTable(db, 'roles');
  }

  async insertAccount(doc: AccountDoc): Promise<void> { this.accounts.insert(doc); }
  async findAccount(id: string): Promise<AccountDoc | null> { return this.accounts.get(id); }
  async setPlan(id: string, plan: PlanTier): Promise<boolean> {
    return this.accounts.update(id, (a) => ({ ...a, plan })) !== null;
  }

  async insertApiKey(doc: ApiKeyDoc): Promise<void> { this.apiKeys.insert(doc); }
  async findApiKey(id: string): Promise<ApiKeyDoc | null> { return this.apiKeys.get(id); }

  async reserveEntitySlot(accountId: string, max: number): Promise<boolean> {
    let reserved = false;
    this.accounts.update(accountId, (a) => {
      if (a.entityCount >= max) return undefined;
      reserved = true;
      return { ...a, entityCount: a.entityCount + 1 };
    });
    return reserved;
  }
  async releaseEntitySlot(accountId: string): Promise<void> {
    this.accounts.update(accountId, (a) => (a.entityCount > 0 ? { ...a, entityCount: a.entityCount - 1 } : undefined));
  }

  async insertEntity(doc: EntityDoc): Promise<void> {
    this.entities.insert({ ...doc, metadata: encodeUserJson(doc.metadata), statusTable: encodeUserJson(doc.statusTable ?? {}) });
  }
  async findEntity(accountId: string, name: string): Promise<EntityDoc | null> {
    const e = this.entities.get(`${accountId}/${name}`);
    return e && entityOf(e);
  }
  async deleteEntity(accountId: string, name: string): Promise<boolean> { return this.entities.delete(`${accountId}/${name}`); }
  async setEntityKey(accountId: string, name: string, apiKeyId: string, apiKeyHash: string): Promise<void> {
    this.entities.update(`${accountId}/${name}`, (e) => ({ ...e, apiKeyId, apiKeyHash }));
  }
  async listEntities(accountId: string, offset: number, limit: number): Promise<EntityDoc[]> {
    return this.entities.find('account_id = ?', [accountId], { order: 'name', offset, limit }).map(entityOf);
  }
  async updateEntity(accountId: string, name: string, patch: Partial<Pick<EntityDoc, 'tags' | 'metadata' | 'role' | 'serviceId'>>, unset: Array<'serviceId'>): Promise<EntityDoc | null> {
    const e = this.entities.update(`${accountId}/${name}`, (cur) => {
      const next: StoredEntity = { ...cur, ...patch, metadata: patch.metadata !== undefined ? encodeUserJson(patch.metadata) : cur.metadata };
      for (const f of unset) delete next[f];
      return next;
    });
    return e && entityOf(e);
  }
  async clearEntityService(accountId: string, serviceId: string): Promise<void> {
    this.entities.updateWhere('account_id = ? AND service_id = ?', [accountId, serviceId], ({ serviceId: _s, ...e }) => e);
  }

  async insertEntityKey(doc: EntityKeyDoc): Promise<void> { this.entityKeys.insert(doc); }
  async findEntityKey(jti: string): Promise<EntityKeyDoc | null> { return this.entityKeys.get(jti); }
  async deadEntityKeys(ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const alive = new Set(this.entityKeys.ids(`id IN (${placeholders(ids.length)}) AND revoked = 0`, ids));
    return ids.filter((id) => !alive.has(id));
  }
  async revokeEntityKeys(accountId: string, entityName: string, at: Date): Promise<string[]> {
    return immediate(this.db, () => {
      const live = this.entityKeys.ids('account_id = ? AND entity_name = ? AND revoked = 0', [accountId, entityName]);
      for (const id of live) this.entityKeys.update(id, (k) => ({ ...k, revokedAt: at }));
      return live;
    });
  }

  async findRole(accountId: string, name: string): Promise<RoleDoc | null> { return this.roles.findOne('account_id = ? AND name = ?', [accountId, name]); }
  async listRoles(accountId: string): Promise<RoleDoc[]> { return this.roles.find('account_id = ?', [accountId], { order: 'name' }); }
  async insertRole(doc: RoleDoc): Promise<void> { this.roles.insert(doc); }
  async setRolePermissions(accountId: string, name: string, permissions: Permission[]): Promise<RoleDoc | null> {
    return immediate(this.db, () => {
      const role = this.roles.findOne('account_id = ? AND name = ?', [accountId, name]);
      return role && this.roles.update(role._id, (r) => ({ ...r, permissions }));
    });
  }
  async deleteRole(accountId: string, name: string): Promise<boolean> {
    return this.roles.deleteWhere('account_id = ? AND name = ?', [accountId, name]) === 1;
  }
  async roleInUse(accountId: string, role: string): Promise<boolean> {
    return this.entities.count('account_id = ? AND role = ?', [accountId, role]) > 0;
  }
}

/** Audit entries are read newest first, this many per page of a cursor at most. */
const AUDIT_PAGE_MAX = 1000;

export class SqliteAuditStore implements AuditStore {
  private readonly entries: DocTable<AuditEntry>;

  constructor(db: SqliteDatabase) {
    this.entries = new DocTable(db, 'audit_log');
  }

  async insert(doc: AuditEntry): Promise<void> { this.entries.insert(doc); }

  private filterOf(accountId: string, f: AuditFilter): { where: string; params: unknown[] } {
    const where = ['account_id = ?'];
    const params: unknown[] = [accountId];
    if (f.resourceType) { where.push('resource_type = ?'); params.push(f.resourceType); }
    if (f.action) { where.push('action = ?'); params.push(f.action); }
    if (f.from) { where.push('ts >= ?'); params.push(f.from.getTime()); }
    if (f.to) { where.push('ts < ?'); params.push(f.to.getTime()); }
    return { where: where.join(' AND '), params };
  }

  cursor(accountId: string, f: AuditFilter, batchSize: number): AuditCursor {
    const { where, params } = this.filterOf(accountId, f);
    return this.entries.newestFirst(where, params, 'ts', Math.max(1, Math.min(batchSize, AUDIT_PAGE_MAX)), (r) => decodeDoc<AuditEntry>(r.doc));
  }

  async list(accountId: string, f: AuditFilter, limit: number): Promise<AuditEntry[]> {
    const { where, params } = this.filterOf(accountId, f);
    return this.entries.find(where, params, { order: 'ts DESC, id DESC', limit });
  }
}
