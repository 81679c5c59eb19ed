/**
 * MongoDB access for scans (history and deferred state), scan profiles, and uploads waiting in the
 * blob store storage/ hands in.
 */
import { Readable } from 'node:stream';
import { Collection, Db, ObjectId } from 'mongodb';
import type { KeyedBlobs } from '../../storage/keyed-blobs';
import { COLLECTIONS } from '../../storage/mongo';
import type { ProfileDoc, ScanStore, StoredScan } from '../records';

/** As stored: the upload is referenced by an ObjectId (its id in the blob store, as hex). */
type ScanDoc = Omit<StoredScan, 'uploadId'> & { uploadId?: ObjectId };
const scanOf = ({ uploadId, ...doc }: ScanDoc): StoredScan => ({ ...doc, ...(uploadId ? { uploadId: uploadId.toHexString() } : {}) });
const docOf = ({ uploadId, ...scan }: StoredScan): ScanDoc => ({ ...scan, ...(uploadId ? { uploadId: new ObjectId(uploadId) } : {}) });

export class MongoScanStore implements ScanStore {
  private readonly scans: Collection<ScanDoc>;
  private readonly profiles: Collection<ProfileDoc>;
  private readonly scanReads: Collection<ScanDoc>;

  /** `readDb`: scan reads (see Storage.readDb); `uploads`: the `scan_uploads` blobs from storage/. */
  constructor(db: Db, readDb: Db, private readonly uploads: KeyedBlobs) {
    this.scans = db.collection<ScanDoc>(COLLECTIONS.scans);
    this.scanReads = readDb.collection<ScanDoc>(COLLECTIONS.scans);
    this.profiles = db.collection<ProfileDoc>(COLLECTIONS.scanProfiles);
  }

  async insertScan(scan: StoredScan): Promise<void> { await this.scans.insertOne(docOf(scan)); }
  async findScan(accountId: string, scanId: string): Promise<StoredScan | null> {
    const doc = await this.scanReads.findOne({ _id: scanId, accountId });
    return doc && scanOf(doc);
  }
  async findScanById(scanId: string): Promise<StoredScan | null> {
    const doc = await this.scanReads.findOne({ _id: scanId });
    return doc && scanOf(doc);
  }

  /** Completes a pending scan exactly once; false when it was already complete. */
  async completeScan(scanId: string, result: Record<string, unknown>, at: Date): Promise<boolean> {
    const r = await this.scans.updateOne({ _id: scanId, status: 'pending' }, { $set: { status: 'complete', result, completedAt: at } });
    return r.modifiedCount === 1;
  }

  /** Claims the webhook send of a scan; false when it was already claimed. */
  async claimWebhook(scanId: string, at: Date): Promise<boolean> {
    const r = await this.scans.updateOne({ _id: scanId, webhookSentAt: { $exists: false } }, { $set: { webhookSentAt: at } });
    return r.modifiedCount === 1;
  }

  async clearUpload(scanId: string): Promise<void> {
    await this.scans.updateOne({ _id: scanId }, { $unset: { uploadId: '', uploadHashes: '' } });
  }

  async deletePendingScan(scanId: string): Promise<void> {
    await this.scans.deleteOne({ _id: scanId, status: 'pending' });
  }

  async history(accountId: string, page: number, limit: number): Promise<{ items: StoredScan[]; total: number }> {
    const filter = { accountId, status: 'complete' as const };
    const [items, total] = await Promise.all([
      this.scanReads.find(filter).sort({ createdAt: -1, _id: -1 }).skip((page - 1) * limit).limit(limit).toArray(),
      this.scanReads.countDocuments(filter),
    ]);
    return { items: items.map(scanOf), total };
  }

  saveUpload(filename: string, content: Buffer): Promise<string> {
    return this.uploads.save(filename, content);
  }

  /**
   * The stored bytes, in memory shared with the engine threads (pool.ts then hands them over
   * without a copy), filled chunk by chunk as they arrive: copying 60 MB at once held the event
   * loop for a tenth of a second.
   */
  async readUpload(id: string): Promise<Buffer> {
    const content = await this.uploads.read(id, (length) => Buffer.from(new SharedArrayBuffer(length)));
    if (!content) throw new Error(`stored upload ${id} not found`);
    return content;
  }

  /** Idempotent: an earlier attempt of the same completion may have deleted it already. */
  deleteUpload(id: string): Promise<void> {
    return this.uploads.delete(id);
  }

  async insertProfile(doc: ProfileDoc): Promise<void> { await this.profiles.insertOne(doc); }
  findProfile(accountId: string, id: string): Promise<ProfileDoc | null> { return this.profiles.findOne({ _id: id, accountId }); }
  findDefaultProfile(accountId: string): Promise<ProfileDoc | null> { return this.profiles.findOne({ accountId, isDefault: true }); }
  listProfiles(accountId: string): Promise<ProfileDoc[]> { return this.profiles.find({ accountId }).sort({ createdAt: 1 }).toArray(); }
  async updateProfile(accountId: string, id: string, set: Partial<ProfileDoc>, unset: string[] = []): Promise<ProfileDoc | null> {
    const update: Record<string, unknown> = { $set: { ...set, updatedAt: new Date() } };
    if (unset.length) update.$unset = Object.fromEntries(unset.map((k) => [k, '']));
    return this.profiles.findOneAndUpdate({ _id: id, accountId }, update, { returnDocument: 'after' });
  }
  async clearDefault(accountId: string, exceptId: string): Promise<void> {
    await this.profiles.updateMany({ accountId, isDefault: true, _id: { $ne: exceptId } }, { $set: { isDefault: false } });
  }
  async deleteProfile(accountId: string, id: string): Promise<boolean> {
    return (await this.profiles.deleteOne({ _id: id, accountId })).deletedCount === 1;
  }
}
