/**
 * The embedded store of scans (history and deferred state), scan profiles, the uploads waiting for
 * their deferred scan (stored bytes, storage/blob-files.ts) and threat-feed hashes.
 */
import { newTimeOrderedId } from '../../storage/ids';
import { BLOB_KEYS, BlobFiles } from '../../storage/blob-files';
import { DocTable, immediate, placeholders, SqliteDatabase } from '../../storage/sqlite';
import type { FeedEntry, FeedLookup, HashAlgo } from '../engines/feeds';
import type { FeedStore, ProfileDoc, ScanStore, StoredScan } from '../records';

export class SqliteScanStore implements ScanStore {
  private readonly scans: DocTable<StoredScan>;
  private readonly profiles: DocTable<ProfileDoc>;

  constructor(private readonly db: SqliteDatabase, private readonly blobs: BlobFiles) {
    this.scans = new DocTable(db, 'scans');
    this.profiles = new DocTable(db, 'scan_profiles');
  }

  async insertScan(scan: StoredScan): Promise<void> { this.scans.insert(scan); }
  async findScan(accountId: string, scanId: string): Promise<StoredScan | null> {
    const s = this.scans.get(scanId);
    return s && s.accountId === accountId ? s : null;
  }
  async findScanById(scanId: string): Promise<StoredScan | null> { return this.scans.get(scanId); }

  async completeScan(scanId: string, result: Record<string, unknown>, at: Date): Promise<boolean> {
    let completed = false;
    this.scans.update(scanId, (s) => {
      if (s.status !== 'pending') return undefined;
      completed = true;
      return { ...s, status: 'complete', result, completedAt: at };
    });
    return completed;
  }

  async claimWebhook(scanId: string, at: Date): Promise<boolean> {
    let claimed = false;
    this.scans.update(scanId, (s) => {
      if (s.webhookSentAt) return undefined;
      claimed = true;
      return { ...s, webhookSentAt: at };
    });
    return claimed;
  }

  async clearUpload(scanId: string): Promise<void> {
    this.scans.update(scanId, ({ uploadId: _u, uploadHashes: _h, ...s }) => s);
  }

  async deletePendingScan(scanId: string): Promise<void> {
    this.scans.deleteWhere("id = ? AND status = 'pending'", [scanId]);
  }

  async history(accountId: string, page: number, limit: number): Promise<{ items: StoredScan[]; total: number }> {
    const where = "account_id = ? AND status = 'complete'";
    // One read transaction: the page and the total come from the same snapshot.
    return this.db.transaction(() => ({
      items: this.scans.find(where, [accountId], { order: 'created_at DESC, id DESC', offset: (page - 1) * limit, limit }),
      total: this.scans.count(where, [accountId]),
    }))();
  }

  async saveUpload(_filename: string, content: Buffer): Promise<string> {
    const id = newTimeOrderedId();
    await this.blobs.write(BLOB_KEYS.scanUpload(id), content);
    return id;
  }

  /** In memory shared with the engine threads (pool.ts hands it over without a copy). */
  async readUpload(id: string): Promise<Buffer> {
    const content = await this.blobs.read(BLOB_KEYS.scanUpload(id), (length) => Buffer.from(new SharedArrayBuffer(length)));
    if (!content) throw new Error(`stored upload ${id} not found`);
    return content;
  }

  deleteUpload(id: string): Promise<void> { return this.blobs.delete(BLOB_KEYS.scanUpload(id)); }

  async insertProfile(doc: ProfileDoc): Promise<void> { this.profiles.insert(doc); }
  async findProfile(accountId: string, id: string): Promise<ProfileDoc | null> { return this.profiles.findOne('id = ? AND account_id = ?', [id, accountId]); }
  async findDefaultProfile(accountId: string): Promise<ProfileDoc | null> { return this.profiles.findOne('account_id = ? AND is_default = 1', [accountId]); }
  async listProfiles(accountId: string): Promise<ProfileDoc[]> { return this.profiles.find('account_id = ?', [accountId], { order: 'created_at, id' }); }
  async updateProfile(accountId: string, id: string, set: Partial<ProfileDoc>, unset: string[] = []): Promise<ProfileDoc | null> {
    const p = this.profiles.update(id, (cur) => {
      if (cur.accountId !== accountId) return undefined;
      const next: Record<string, unknown> = { ...cur, ...set, updatedAt: new Date() };
      for (const k of unset) delete next[k];
      return next as unknown as ProfileDoc;
    });
    return p && p.accountId === accountId ? p : null;
  }
  async clearDefault(accountId: string, exceptId: string): Promise<void> {
    this.profiles.updateWhere('account_id = ? AND is_default = 1 AND id != ?', [accountId, exceptId], (p) => ({ ...p, isDefault: false }));
  }
  async deleteProfile(accountId: string, id: string): Promise<boolean> {
    return this.profiles.deleteWhere('id = ? AND account_id = ?', [id, accountId]) === 1;
  }
}

interface FeedDoc { _id: string; algo: HashAlgo; name?: string; source: string; addedAt: Date }

export class SqliteFeedStore implements FeedStore {
  private readonly hashes: DocTable<FeedDoc>;

  constructor(private readonly db: SqliteDatabase, private readonly batch = 1000) {
    this.hashes = new DocTable(db, 'threat_feed_hashes');
  }

  /** Upserts feed entries, a batch per transaction; counts the inserted and the changed. */
  async upsert(entries: FeedEntry[]): Promise<{ upserted: number; modified: number }> {
    let upserted = 0;
    let modified = 0;
    const now = new Date();
    for (let i = 0; i < entries.length; i += this.batch) {
      immediate(this.db, () => {
        for (const e of entries.slice(i, i + this.batch)) {
          const before = this.hashes.get(e.hash);
          const next: FeedDoc = { _id: e.hash, algo: e.algo, source: e.source, ...(e.name ? { name: e.name } : before?.name ? { name: before.name } : {}), addedAt: before?.addedAt ?? now };
          if (!before) upserted++;
          else if (before.algo !== next.algo || before.source !== next.source || before.name !== next.name) modified++;
          else continue;
          this.hashes.put(next);
        }
      });
      // Let requests in between batches of a large feed.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { upserted, modified };
  }

  readonly lookup: FeedLookup = async ({ sha256, md5, sha1 }) => {
    const ids = [sha256, md5, sha1].map((h) => h.toLowerCase());
    return this.hashes.find(`id IN (${placeholders(ids.length)})`, ids)
      .map((d) => ({ hash: d._id, algo: d.algo, source: d.source, ...(d.name ? { name: d.name } : {}) }));
  };
}
