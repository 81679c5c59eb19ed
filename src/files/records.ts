/**
 * File transfer's records (one per file; the bytes of its parts kept apart) and the store
 * interface both engines implement (store/sqlite.ts, store/mongo.ts).
 */
import type { UserJsonText } from '../storage/user-json';
import type { Readable } from 'node:stream';
import type { ClipFormat, FileStatus } from './schemas';

export type BlobPart = 'raw' | 'video' | 'poster';

export interface Verdict { score: number; threatLevel: string; primaryThreat: string }

export interface ClipInfo {
  /** As declared in meta, else found from the bytes when the clip is made. */
  format?: ClipFormat;
  fps: number;
  frames?: number;
  width?: number;
  height?: number;
  durationMs?: number;
  video?: boolean;
}

export interface FileRecord {
  _id: string;
  accountId: string;
  /** Sender entity name. */
  source: string;
  /** Recipient entity name; absent for a clip that only goes to the gallery. */
  dest?: string;
  kind: 'file' | 'clip';
  filename: string;
  size: number;
  sha256: string;
  /** From the scan's content identification once scanned; the upload's part type until then. */
  contentType: string;
  tags: string[];
  /** The device's `meta` object exactly as sent. */
  meta: UserJsonText;
  status: FileStatus;
  /** The scan of this file in the account's history. */
  scanId: string;
  requestId: string;
  verdict?: Verdict;
  error?: string;
  clip?: ClipInfo;
  createdAt: Date;
  expiresAt: Date;
  deliveredAt?: Date;
  downloadedAt?: Date;
}

export interface BlobRange { start: number; end: number }

/** The records and bytes of files (records.ts); a fake in unit tests. */
export interface FileRecords {
  insert(doc: FileRecord): Promise<void>;
  find(accountId: string, id: string): Promise<FileRecord | null>;
  findById(id: string): Promise<FileRecord | null>;
  /** Moves a file from one status to another exactly once; false when it was not in `from`. */
  transition(id: string, from: FileStatus, set: Partial<FileRecord>): Promise<boolean>;
  /** Records the verdict of a clip still being processed (status stays `scanning`). */
  setVerdict(id: string, verdict: Verdict, contentType: string): Promise<void>;
  /** Delivered files of a recipient, oldest first. */
  inbox(accountId: string, dest: string, limit: number): Promise<FileRecord[]>;
  /** The gallery, newest first. */
  clips(accountId: string, opts: { source?: string; offset: number; limit: number }): Promise<FileRecord[]>;
  expiredIds(now: Date, limit: number): Promise<string[]>;
  /** Removes the record (and any download claim on it). */
  remove(id: string): Promise<void>;
  /**
   * Removes stored bytes that a process killed mid-write left without a record: written before
   * `before` and belonging to no stored blob. Returns how many pieces went.
   */
  sweepLeftoverBytes(before: Date): Promise<number>;
  /** Takes the file's single download claim unless a claim valid at `now` is held; true when taken. */
  claimDownload(id: string, token: string, until: Date, now: Date): Promise<boolean>;
  renewDownloadClaim(id: string, token: string, until: Date): Promise<void>;
  releaseDownloadClaim(id: string, token: string): Promise<void>;
  /** Streams bytes in as the file's `part`, replacing an earlier attempt's; returns the size. */
  saveBlob(id: string, part: BlobPart, source: Readable): Promise<number>;
  blobSize(id: string, part: BlobPart): Promise<number | undefined>;
  /** The bytes of a part, or of `range` (end inclusive) of it; undefined when the part is gone. */
  openBlob(id: string, part: BlobPart, range?: BlobRange): Promise<Readable | undefined>;
  readBlob(id: string, part: BlobPart): Promise<Buffer | undefined>;
  /** Idempotent. */
  deleteBlob(id: string, part: BlobPart): Promise<void>;
}

export type FileStore = FileRecords;
