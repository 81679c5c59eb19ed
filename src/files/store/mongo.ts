/**
 * MongoDB access for file transfer: one record per file in `files` (its `_id` is the public file
 * id) and the bytes in the GridFS bucket `file_blobs` (built by storage/), named `<fileId>/<part>` (raw upload, clip
 * video, clip poster) so every part of a file is found and deleted by its id alone.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Collection, Db, GridFSBucket, GridFSBucketWriteStream, ObjectId } from 'mongodb';
import { BUCKETS, COLLECTIONS } from '../../storage/mongo';
import { isDuplicateKey } from '../../storage/errors';
import type { FileStatus } from '../schemas';
import type { BlobPart, BlobRange, FileRecord, FileStore, Verdict } from '../records';

/**
 * Resolves once none of the upload's chunk inserts is in flight; the driver emits no event for it.
 * Each insert settles (the driver's operation resolves or fails); a failed one leaves the count up
 * and marks the stream errored instead, and that chunk was not written.
 */
async function insertsSettled(upload: GridFSBucketWriteStream): Promise<void> {
  while (upload.state.outstandingRequests > 0 && !upload.state.errored) await new Promise((res) => setTimeout(res, 5));
}

/** A download in progress; `until` lets another process take over a claim whose holder died. */
interface DownloadClaim { _id: string; token: string; until: Date }

export class MongoFileStore implements FileStore {
  private readonly files: Collection<FileRecord>;
  private readonly chunks: Collection;
  private readonly claims: Collection<DownloadClaim>;

  /** `blobs`: the `file_blobs` bucket from storage/, on `blobDb` (storage's `Storage.blobDb`). */
  constructor(db: Db, blobDb: Db, private readonly blobs: GridFSBucket) {
    this.files = db.collection<FileRecord>(COLLECTIONS.files);
    this.claims = db.collection<DownloadClaim>(COLLECTIONS.fileDownloadClaims);
    this.chunks = blobDb.collection(`${BUCKETS.fileBlobs}.chunks`);
  }

  async insert(doc: FileRecord): Promise<void> {
    await this.files.insertOne(doc);
  }

  find(accountId: string, id: string): Promise<FileRecord | null> { return this.files.findOne({ _id: id, accountId }); }
  findById(id: string): Promise<FileRecord | null> { return this.files.findOne({ _id: id }); }

  /** Moves a file from one status to another exactly once; false when it was not in `from`. */
  async transition(id: string, from: FileStatus, set: Partial<FileRecord>): Promise<boolean> {
    const r = await this.files.updateOne({ _id: id, status: from }, { $set: set });
    return r.modifiedCount === 1;
  }

  /** Records the verdict of a clip still being processed (status stays `scanning`). */
  async setVerdict(id: string, verdict: Verdict, contentType: string): Promise<void> {
    await this.files.updateOne({ _id: id, status: 'scanning' }, { $set: { verdict, contentType } });
  }

  inbox(accountId: string, dest: string, limit: number): Promise<FileRecord[]> {
    return this.files.find({ accountId, dest, status: 'delivered' }).sort({ createdAt: 1, _id: 1 }).limit(limit).toArray();
  }

  clips(accountId: string, opts: { source?: string; offset: number; limit: number }): Promise<FileRecord[]> {
    const filter = { accountId, kind: 'clip' as const, ...(opts.source ? { source: opts.source } : {}) };
    return this.files.find(filter).sort({ createdAt: -1, _id: -1 }).skip(opts.offset).limit(opts.limit).toArray();
  }

  async expiredIds(now: Date, limit: number): Promise<string[]> {
    const docs = await this.files.find({ expiresAt: { $lte: now } }, { projection: { _id: 1 } }).limit(limit).toArray();
    return docs.map((d) => d._id);
  }

  async remove(id: string): Promise<void> {
    await this.files.deleteOne({ _id: id });
    await this.claims.deleteOne({ _id: id });
  }

  /**
   * An insert under the file's id, so of any number of requests, in any number of processes, one
   * holds the claim (inserts are exact on MongoDB and on the local FerretDB, whose conditional
   * updates across connections are not). An expired claim (its holder died) is removed first.
   */
  /**
   * GridFS writes a file's chunks before its files document: an upload whose process was killed
   * left chunks no files document names, and nothing removed them (an outside probe: 6 MB of a
   * device's upload kept for good). Chunks are found by their first one (`n: 0`) through the
   * bucket's `files_id, n` index, older than `before` by the ObjectId's time.
   */
  async sweepLeftoverBytes(before: Date): Promise<number> {
    const firsts = await this.chunks.find({ files_id: { $lt: ObjectId.createFromTime(Math.floor(before.getTime() / 1000)) }, n: 0 }, { projection: { files_id: 1 } }).limit(1_000).toArray();
    let removed = 0;
    for (const { files_id: filesId } of firsts) {
      if (await this.blobs.find({ _id: filesId }).limit(1).hasNext()) continue;
      removed += (await this.chunks.deleteMany({ files_id: filesId })).deletedCount;
    }
    return removed;
  }

  async claimDownload(id: string, token: string, until: Date, now: Date): Promise<boolean> {
    await this.claims.deleteOne({ _id: id, until: { $lte: now } });
    try {
      await this.claims.insertOne({ _id: id, token, until });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async renewDownloadClaim(id: string, token: string, until: Date): Promise<void> {
    await this.claims.updateOne({ _id: id, token }, { $set: { until } });
  }

  async releaseDownloadClaim(id: string, token: string): Promise<void> {
    await this.claims.deleteOne({ _id: id, token });
  }

  /**
   * Streams bytes into GridFS as `<id>/<part>`, replacing what an earlier, interrupted attempt left.
   * A stream that fails leaves no chunks behind.
   */
  async saveBlob(id: string, part: BlobPart, source: Readable): Promise<number> {
    await this.deleteBlob(id, part);
    const upload = this.blobs.openUploadStream(`${id}/${part}`);
    try {
      await pipeline(source, upload);
    } catch (err) {
      // pipeline() destroys the upload without waiting for a chunk insert already sent, and an
      // upload cut off by its client usually has one in flight (it waits on each): deleted beside
      // it on another connection of the blob pool, that chunk would stay for good.
      await insertsSettled(upload);
      await this.chunks.deleteMany({ files_id: upload.id });
      throw err;
    }
    return upload.length;
  }

  async blobSize(id: string, part: BlobPart): Promise<number | undefined> {
    const doc = await this.blobs.find({ filename: `${id}/${part}` }).limit(1).next();
    return doc?.length;
  }

  /** The bytes of a part, or of `range` (end inclusive) of it; undefined when the part is gone. */
  async openBlob(id: string, part: BlobPart, range?: BlobRange): Promise<Readable | undefined> {
    const doc = await this.blobs.find({ filename: `${id}/${part}` }).limit(1).next();
    if (!doc) return undefined;
    return this.blobs.openDownloadStream(doc._id, range ? { start: range.start, end: range.end + 1 } : {});
  }

  async readBlob(id: string, part: BlobPart): Promise<Buffer | undefined> {
    const stream = await this.openBlob(id, part);
    if (!stream) return undefined;
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** Idempotent: deleting a part that is already gone is the desired state. */
  async deleteBlob(id: string, part: BlobPart): Promise<void> {
    for (const doc of await this.blobs.find({ filename: `${id}/${part}` }).toArray()) {
      await this.chunks.deleteMany({ files_id: doc._id });
      try {
        await this.blobs.delete(doc._id);
      } catch (err) {
        if (!(err instanceof Error && /not found|FileNotFound/i.test(err.message))) throw err;
      }
    }
  }
}
