/** MongoDB access for accounts, account keys and roles (entities are entities/store/mongo.ts's). */
import { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../../storage/mongo';
import type { PlanTier } from '../plans';
import type { AccountDoc, AccountStore, ApiKeyDoc, RoleDoc } from '../records';
import type { Permission } from '../roles';

export class MongoAccountStore implements AccountStore {
  private readonly accounts: Collection<AccountDoc>;
  private readonly apiKeys: Collection<ApiKeyDoc>;
  private readonly roles: Collection<RoleDoc>;
  /** The same collections for the reads of authentication (see Storage.readDb). */
  private readonly reads: { accounts: Collection<AccountDoc>; apiKeys: Collection<ApiKeyDoc> };

  constructor(db: Db, readDb: Db = db) {
    this.reads = {
      accounts: readDb.collection<AccountDoc>(COLLECTIONS.accounts),
      apiKeys: readDb.collection<ApiKeyDoc>(COLLECTIONS.apiKeys),
    };
    this.accounts = db.collection<AccountDoc>(COLLECTIONS.accounts);
    this.apiKeys = db.collection<ApiKeyDoc>(COLLECTIONS.apiKeys);
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

  findRole(accountId: string, name: string): Promise<RoleDoc | null> { return this.roles.findOne({ accountId, name }); }
  listRoles(accountId: string): Promise<RoleDoc[]> { return this.roles.find({ accountId }).sort({ name: 1 }).toArray(); }
  async insertRole(doc: RoleDoc): Promise<void> { await this.roles.insertOne(doc); }
  setRolePermissions(accountId: string, name: string, permissions: Permission[]): Promise<RoleDoc | null> {
    return this.roles.findOneAndUpdate({ accountId, name }, { $set: { permissions } }, { returnDocument: 'after' });
  }
  async deleteRole(accountId: string, name: string): Promise<boolean> {
    return (await this.roles.deleteOne({ accountId, name })).deletedCount === 1;
  }
}
