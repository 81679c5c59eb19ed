/**
 * The embedded store of file transfer: one record per file (`_id` is the public file id) and the
 * bytes of its parts (raw upload, clip video, clip poster) as stored blobs keyed `<fileId>/<part>`
 * (storage/blob-files.ts: written off the event loop, erased on delete). A status transition reads
 * and writes the record under the write lock, so of two racing callers (two downloads of one
 * delivered file) exactly one moves it.
 */
import type { Readable } from 'node:stream';
import { BLOB_KEYS, BlobFiles } from '../../storage/blob-files';
import { DocTable, immediate, SqliteDatabase } from '../../storage/sqlite';
import type { FileStatus } from '../schemas';
import type { BlobPart, BlobRange, FileRecord, FileStore, Verdict } from '../records';

/** A download in progress; `until` lets another process take over a claim whose holder died. */
interface DownloadClaim { _id: string; token: string; until: Date }

export class SqliteFileStore implements FileStore {
  private readonly files: DocTable<FileRecord>;
  private readonly claims: DocTable<DownloadClaim>;

  constructor(private readonly db: SqliteDatabase, private readonly blobs: BlobFiles) {
    this.files = new DocTable(db, 'files');
    this.claims = new DocTable(db, 'file_download_claims');
  }

  async insert(doc: FileRecord): Promise<void> { this.files.insert(doc); }

  async find(accountId: string, id: string): Promise<FileRecord | null> { return this.files.findOne('id = ? AND account_id = ?', [id, accountId]); }
  async findById(id: string): Promise<FileRecord | null> { return this.files.get(id); }

  async transition(id: string, from: FileStatus, set: Partial<FileRecord>): Promise<boolean> {
    let moved = false;
    this.files.update(id, (f) => {
      if (f.status !== from) return undefined;
      moved = true;
      return { ...f, ...set };
    });
    return moved;
  }

  async setVerdict(id: string, verdict: Verdict, contentType: string): Promise<void> {
    this.files.update(id, (f) => (f.status === 'scanning' ? { ...f, verdict, contentType } : undefined));
  }

  async inbox(accountId: string, dest: string, limit: number): Promise<FileRecord[]> {
    return this.files.find("account_id = ? AND dest = ? AND status = 'delivered'", [accountId, dest], { order: 'created_at, id', limit });
  }

  async clips(accountId: string, opts: { source?: string; offset: number; limit: number }): Promise<FileRecord[]> {
    const where = `account_id = ? AND kind = 'clip'${opts.source ? ' AND source = ?' : ''}`;
    return this.files.find(where, opts.source ? [accountId, opts.source] : [accountId], { order: 'created_at DESC, id DESC', offset: opts.offset, limit: opts.limit });
  }

  async expiredIds(now: Date, limit: number): Promise<string[]> {
    return this.files.ids('expires_at <= ?', [now.getTime()], limit);
  }

  /** Removes the record and any download claim on it. */
  async remove(id: string): Promise<void> {
    immediate(this.db, () => { this.files.delete(id); this.claims.delete(id); });
  }

  /** One transaction under the write lock: of any number of requests, in any process, one holds the claim. */
  async claimDownload(id: string, token: string, until: Date, now: Date): Promise<boolean> {
    return immediate(this.db, () => {
      const held = this.claims.get(id);
      if (held && held.until > now) return false;
      this.claims.put({ _id: id, token, until });
      return true;
    });
  }

  async renewDownloadClaim(id: string, token: string, until: Date): Promise<void> {
    this.claims.update(id, (c) => (c.token === token ? { ...c, until } : undefined));
  }

  async releaseDownloadClaim(id: string, token: string): Promise<void> {
    immediate(this.db, () => { if (this.claims.get(id)?.token === token) this.claims.delete(id); });
  }

  /** Temporary files of writes a killed process cut short (blob-files.ts), older than `before`. */
  sweepLeftoverBytes(before: Date): Promise<number> { return this.blobs.sweepTemporary(0, before.getTime()); }

  saveBlob(id: string, part: BlobPart, source: Readable): Promise<number> { return this.blobs.write(BLOB_KEYS.filePart(id, part), source); }
  blobSize(id: string, part: BlobPart): Promise<number | undefined> { return this.blobs.size(BLOB_KEYS.filePart(id, part)); }
  openBlob(id: string, part: BlobPart, range?: BlobRange): Promise<Readable | undefined> { return this.blobs.open(BLOB_KEYS.filePart(id, part), range); }
  readBlob(id: string, part: BlobPart): Promise<Buffer | undefined> { return this.blobs.read(BLOB_KEYS.filePart(id, part)); }
  deleteBlob(id: string, part: BlobPart): Promise<void> { return this.blobs.delete(BLOB_KEYS.filePart(id, part)); }
}
