/** The embedded store of vault entries: one record per account and name, `_id` = `<accountId>/<name>`. */
import { DocTable, immediate, placeholders, SqliteDatabase } from '../../storage/sqlite';
import type { SealedVaultEntry, VaultStore } from '../records';

interface VaultDoc { _id: string; accountId: string; name: string; valueSealed: string; createdAt: Date; updatedAt: Date }

const idOf = (accountId: string, name: string) => `${accountId}/${name}`;
const entryOf = (d: VaultDoc): SealedVaultEntry => ({ name: d.name, valueSealed: d.valueSealed, createdAt: d.createdAt, updatedAt: d.updatedAt });

export class SqliteVaultStore implements VaultStore {
  private readonly entries: DocTable<VaultDoc>;

  constructor(private readonly db: SqliteDatabase) {
    this.entries = new DocTable(db, 'vault');
  }

  async list(accountId: string): Promise<SealedVaultEntry[]> {
    return this.entries.find('account_id = ?', [accountId], { order: 'name' }).map(entryOf);
  }

  async find(accountId: string, names: readonly string[]): Promise<SealedVaultEntry[]> {
    if (names.length === 0) return [];
    return this.entries.find(`id IN (${placeholders(names.length)})`, names.map((n) => idOf(accountId, n))).map(entryOf);
  }

  async put(accountId: string, name: string, valueSealed: string, now: Date): Promise<{ entry: SealedVaultEntry; created: boolean }> {
    return immediate(this.db, () => {
      const before = this.entries.get(idOf(accountId, name));
      const doc: VaultDoc = { _id: idOf(accountId, name), accountId, name, valueSealed, createdAt: before?.createdAt ?? now, updatedAt: now };
      this.entries.put(doc);
      return { entry: entryOf(doc), created: before === null };
    });
  }

  async remove(accountId: string, name: string): Promise<boolean> {
    return this.entries.delete(idOf(accountId, name));
  }
}
