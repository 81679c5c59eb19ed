/** MongoDB access for accounts, account keys, entities, entity keys and roles. */
import { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../../storage/mongo';
import { decodeUserJson, encodeUserJson, UserJsonText } from '../../storage/user-json';
import type { PlanTier } from '../plans';
import type { AccountDoc, AccountStore, ApiKeyDoc, EntityDoc, EntityKeyDoc, RoleDoc } from '../records';
import type { Permission } from '../roles';

/** An entity's metadata is stored as JSON text (user-json.ts); older documents hold it native. */
type StoredEntity = Omit<EntityDoc, 'metadata'> & { metadata: EntityDoc['metadata'] | UserJsonText };
const entityOf = (e: StoredEntity | null): EntityDoc | null =>
  e && { ...e, metadata: typeof e.metadata === 'string' ? decodeUserJson<EntityDoc['metadata']>(e.metadata) : e.metadata };

export class MongoAccountStore implements AccountStore {
  private readonly accounts: Collection<AccountDoc>;
  private readonly apiKeys: Collection<ApiKeyDoc>;
  private readonly entities: Collection<StoredEntity>;
  private readonly entityKeys: Collection<EntityKeyDoc>;
  private readonly roles: Collection<RoleDoc>;
  /** The same collections for the reads of authentication (see Storage.readDb). */
  private readonly reads: { accounts: Collection<AccountDoc>; apiKeys: Collection<ApiKeyDoc>; entities: Collection<StoredEntity>; entityKeys: Collection<EntityKeyDoc> };

  constructor(db: Db, readDb: Db = db) {
    this.reads = {
      accounts: readDb.collection<AccountDoc>(COLLECTIONS.accounts),
      apiKeys: readDb.collection<ApiKeyDoc>(COLLECTIONS.apiKeys),
      entities: readDb.collection<StoredEntity>(COLLECTIONS.entities),
      entityKeys: readDb.collection<EntityKeyDoc>(COLLECTIONS.entityKeys),
    };
    this.accounts = db.collection<AccountDoc>(COLLECTIONS.accounts);
    this.apiKeys = db.collection<ApiKeyDoc>(COLLECTIONS.apiKeys);
    this.entities = db.collection<StoredEntity>(COLLECTIONS.entities);
    this.entityKeys = db.collection<EntityKeyDoc>(COLLECTIONS.entityKeys);
    this.roles = db.collection<RoleDoc>(COLLECTIONS.roles);
  }

  async insertAccount(doc: AccountDoc): Promise<void> { await this.accounts.insertOne(doc); }
  findAccount(id: string): Promise<AccountDoc | null> { return this.reads.accounts.findOne({ _id: id }); }
  async setPlan(id: string, plan: PlanTier): Promise<boolean> {
    const r = await this.accounts.updateOne({ _id: id }, { $set: { plan } });
    return r.matchedCount === 1;
  }

  async insertApiKey(doc: ApiKeyDoc): Promise<void> { await this.apiKeys.insertOne(doc); }
  findApiKey(id: string): Promise<ApiKeyDoc | null> { return this.reads.apiKeys.findOne({ _id: id }); }

  /** Reserves one entity slot under the plan's maximum; false when the account is full. */
  async reserveEntitySlot(accountId: string, max: number): Promise<boolean> {
    const r = await this.accounts.findOneAndUpdate(
      { _id: accountId, entityCount: { $lt: max } },
      { $inc: { entityCount: 1 } },
      { returnDocument: 'after' },
    );
    return r !== null;
  }
  async releaseEntitySlot(accountId: string): Promise<void> {
    await this.accounts.updateOne({ _id: accountId, entityCount: { $gt: 0 } }, { $inc: { entityCount: -1 } });
  }

  async insertEntity(doc: EntityDoc): Promise<void> { await this.entities.insertOne({ ...doc, metadata: encodeUserJson(doc.metadata) }); }
  async findEntity(accountId: string, name: string): Promise<EntityDoc | null> { return entityOf(await this.reads.entities.findOne({ _id: `${accountId}/${name}` })); }
  /** True when the entity existed. */
  async deleteEntity(accountId: string, name: string): Promise<boolean> {
    return (await this.entities.deleteOne({ _id: `${accountId}/${name}` })).deletedCount === 1;
  }
  async setEntityKey(accountId: string, name: string, apiKeyId: string, apiKeyHash: string): Promise<void> {
    await this.entities.updateOne({ _id: `${accountId}/${name}` }, { $set: { apiKeyId, apiKeyHash } });
  }

  async listEntities(accountId: string, offset: number, limit: number): Promise<EntityDoc[]> {
    return (await this.reads.entities.find({ accountId }).sort({ name: 1 }).skip(offset).limit(limit).toArray()).map((e) => entityOf(e) as EntityDoc);
  }
  async updateEntity(accountId: string, name: string, patch: Partial<Pick<EntityDoc, 'tags' | 'metadata' | 'role' | 'serviceId'>>, unset: Array<'serviceId'>): Promise<EntityDoc | null> {
    const set = { ...patch, ...(patch.metadata !== undefined ? { metadata: encodeUserJson(patch.metadata) } : {}) };
    return entityOf(await this.entities.findOneAndUpdate(
      { _id: `${accountId}/${name}` },
      { ...(Object.keys(set).length ? { $set: set } : {}), ...(unset.length ? { $unset: Object.fromEntries(unset.map((f) => [f, ''])) } : {}) },
      { returnDocument: 'after' },
    ));
  }
  async clearEntityService(accountId: string, serviceId: string): Promise<void> {
    await this.entities.updateMany({ accountId, serviceId }, { $unset: { serviceId: '' } });
  }

  async insertEntityKey(doc: EntityKeyDoc): Promise<void> { await this.entityKeys.insertOne(doc); }
  findEntityKey(jti: string): Promise<EntityKeyDoc | null> { return this.reads.entityKeys.findOne({ _id: jti }); }
  /** Which of these key ids are revoked or gone (MQTT re-checks its live sessions with this). */
  async deadEntityKeys(ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const live = await this.entityKeys.find({ _id: { $in: ids }, revokedAt: { $exists: false } }).project<{ _id: string }>({ _id: 1 }).toArray();
    const alive = new Set(live.map((k) => k._id));
    return ids.filter((id) => !alive.has(id));
  }
  async revokeEntityKeys(accountId: string, entityName: string, at: Date): Promise<string[]> {
    const live = await this.entityKeys.find({ accountId, entityName, revokedAt: { $exists: false } }).project<{ _id: string }>({ _id: 1 }).toArray();
    if (live.length) await this.entityKeys.updateMany({ _id: { $in: live.map((k) => k._id) } }, { $set: { revokedAt: at } });
    return live.map((k) => k._id);
  }

  findRole(accountId: string, name: string): Promise<RoleDoc | null> { return this.roles.findOne({ accountId, name }); }
  listRoles(accountId: string): Promise<RoleDoc[]> { return this.roles.find({ accountId }).sort({ name: 1 }).toArray(); }
  async insertRole(doc: RoleDoc): Promise<void> { await this.roles.insertOne(doc); }
  setRolePermissions(accountId: string, name: string, permissions: Permission[]): Promise<RoleDoc | null> {
    return this.roles.findOneAndUpdate({ accountId, name }, { $set: { permissions } }, { returnDocument: 'after' });
  }
  async deleteRole(accountId: string, name: string): Promise<boolean> {
    return (await this.roles.deleteOne({ accountId, name })).deletedCount === 1;
  }
  /** True when some entity of the account still has this role. */
  async roleInUse(accountId: string, role: string): Promise<boolean> {
    return (await this.entities.findOne({ accountId, role }, { projection: { _id: 1 } })) !== null;
  }
}
