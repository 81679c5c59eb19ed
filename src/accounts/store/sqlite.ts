/** The embedded store of accounts, account keys, custom roles and the audit log (entities are entities/store/sqlite.ts's). */
import { decodeDoc, DocTable, immediate, SqliteDatabase } from '../../storage/sqlite';
import type { PlanTier } from '../plans';
import type { AuditCursor, AuditEntry, AuditFilter } from '../audit';
import type { AccountDoc, AccountStore, ApiKeyDoc, AuditStore, RoleDoc } from '../records';
import type { Permission } from '../roles';

export class SqliteAccountStore implements AccountStore {
  private readonly accounts: DocTable<AccountDoc>;
  private readonly apiKeys: DocTable<ApiKeyDoc>;
  private readonly roles: DocTable<RoleDoc>;

  constructor(private readonly db: SqliteDatabase) {
    this.accounts = new DocTable(db, 'accounts');
    this.apiKeys = new DocTable(db, 'api_keys');
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
