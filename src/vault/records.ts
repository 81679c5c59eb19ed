/** Vault entries (sealed secrets of an account) and the store interface both engines implement (store/sqlite.ts, store/mongo.ts). */

export interface SealedVaultEntry {
  name: string;
  valueSealed: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Where vault entries are kept (records.ts). */
export interface VaultEntries {
  list(accountId: string): Promise<SealedVaultEntry[]>;
  find(accountId: string, names: readonly string[]): Promise<SealedVaultEntry[]>;
  put(accountId: string, name: string, valueSealed: string, now: Date): Promise<{ entry: SealedVaultEntry; created: boolean }>;
  remove(accountId: string, name: string): Promise<boolean>;
}

export type VaultStore = VaultEntries;
