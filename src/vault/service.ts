/**
 * The vault: named secrets of an account, sealed with AES-256-GCM (src/crypto.ts, the service's
 * data-encryption key). Values are never returned by the API; `reveal` is for the activity that
 * resolves `{{ vault.NAME }}`, which redacts them from everything it reports (redact.ts).
 */
import { decryptSecret, encryptSecret } from '../crypto';
import { LimitReachedError, NotFoundError } from '../errors';
import { planOf, type PlanTier } from '../accounts/plans';
import type { VaultEntryView } from './schemas';
import { Redactor } from './redact';
import { vaultRefs } from './template';

export interface SealedVaultEntry {
  name: string;
  valueSealed: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Where vault entries are kept (store.ts). */
export interface VaultEntries {
  list(accountId: string): Promise<SealedVaultEntry[]>;
  find(accountId: string, names: readonly string[]): Promise<SealedVaultEntry[]>;
  put(accountId: string, name: string, valueSealed: string, now: Date): Promise<{ entry: SealedVaultEntry; created: boolean }>;
  remove(accountId: string, name: string): Promise<boolean>;
}

export function publicVaultEntry(e: SealedVaultEntry): VaultEntryView {
  return { name: e.name, configured: true, createdAt: e.createdAt.toISOString(), updatedAt: e.updatedAt.toISOString() };
}

export class VaultService {
  constructor(private readonly entries: VaultEntries, private readonly key: Buffer) {}

  list(accountId: string): Promise<SealedVaultEntry[]> {
    return this.entries.list(accountId);
  }

  /**
   * Creates the entry, or replaces the value of an existing one (`created` tells which). A new
   * name past the plan's vault entries is 403 `limit_reached` (counted before the write: concurrent
   * creates may pass the limit by the few in flight).
   */
  async put(accountId: string, name: string, value: string, plan: PlanTier): Promise<{ entry: SealedVaultEntry; created: boolean }> {
    if ((await this.entries.find(accountId, [name])).length === 0) {
      const { maxVaultEntries, tier } = planOf(plan);
      const count = (await this.entries.list(accountId)).length;
      if (count >= maxVaultEntries) throw new LimitReachedError('vault entries', 'vault entry', count, maxVaultEntries, tier);
    }
    return this.entries.put(accountId, name, encryptSecret(this.key, value), new Date());
  }

  async remove(accountId: string, name: string): Promise<void> {
    if (!(await this.entries.remove(accountId, name))) throw new NotFoundError('Vault entry');
  }

  /**
   * The plaintext values of the named entries, for the activity that uses them and nothing
   * else. A missing name fails with its name (never a value).
   */
  async reveal(accountId: string, names: readonly string[]): Promise<Record<string, string>> {
    const wanted = [...new Set(names)];
    if (wanted.length === 0) return {};
    const found = await this.entries.find(accountId, wanted);
    const missing = wanted.filter((n) => !found.some((e) => e.name === n));
    if (missing.length) throw new NotFoundError(`Vault entry ${missing.map((n) => `"${n}"`).join(', ')}`);
    return Object.fromEntries(found.map((e) => [e.name, decryptSecret(this.key, e.valueSealed)]));
  }

  /**
   * The activity-side use of the vault: reveals every `{{ vault.NAME }}` that `definition` (the
   * author's node config, never data) names, runs `use` with those values, and returns its result
   * (or throws its error) with each revealed value redacted. Plaintext exists only inside this call;
   * the caller fills the references itself, in one pass over the author's text.
   */
  async withSecrets<R>(accountId: string, definition: unknown, use: (secrets: Readonly<Record<string, string>>, redactor: Redactor) => Promise<R>): Promise<R> {
    const revealed = await this.reveal(accountId, vaultRefs(definition));
    const redactor = new Redactor(revealed);
    try {
      return redactor.json(await use(revealed, redactor));
    } catch (err) {
      throw redactor.error(err);
    }
  }
}
