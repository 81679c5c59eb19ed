/** MongoDB access for vault entries: one document per account and name, `_id` = `<accountId>/<name>`. */
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../../storage/mongo';
import type { SealedVaultEntry, VaultStore } from '../records';

interface VaultDoc {
  _id: string;
  accountId: string;
  name: string;
  valueSealed: string;
  createdAt: Date;
  updatedAt: Date;
}

const idOf = (accountId: string, name: string) => `${accountId}/${name}`;
const entryOf = (d: VaultDoc): SealedVaultEntry => ({ name: d.name, valueSealed: d.valueSealed, createdAt: d.createdAt, updatedAt: d.updatedAt });

export class MongoVaultStore implements VaultStore {
  private readonly col: Collection<VaultDoc>;

  constructor(db: Db) {
    this.col = db.collection<VaultDoc>(COLLECTIONS.vault);
  }

  async list(accountId: string): Promise<SealedVaultEntry[]> {
    return (await this.col.find({ accountId }).sort({ name: 1 }).toArray()).map(entryOf);
  }

  async find(accountId: string, names: readonly string[]): Promise<SealedVaultEntry[]> {
    return (await this.col.find({ _id: { $in: names.map((n) => idOf(accountId, n)) } }).toArray()).map(entryOf);
  }

  async put(accountId: string, name: string, valueSealed: string, now: Date): Promise<{ entry: SealedVaultEntry; created: boolean }> {
    const before = await this.col.findOneAndUpdate(
      { _id: idOf(accountId, name) },
      { $set: { valueSealed, updatedAt: now }, $setOnInsert: { accountId, name, createdAt: now } },
      { upsert: true, returnDocument: 'before' },
    );
    const createdAt = before?.createdAt ?? now;
    return { entry: { name, valueSealed, createdAt, updatedAt: now }, created: before === null };
  }

  async remove(accountId: string, name: string): Promise<boolean> {
    return (await this.col.deleteOne({ _id: idOf(accountId, name) })).deletedCount === 1;
  }
}
