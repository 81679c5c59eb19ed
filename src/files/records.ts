/**
 * File transfer's records (one per file; the bytes of its parts kept apart) and the store
 * interface both engines implement (store/sqlite.ts, store/mongo.ts).
 */
import type { UserJsonText } from '../storage/user-json';
import type { ClipFormat, FileStatus } from './schemas';
import type { FileRecords } from './service';

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

export type FileStore = FileRecords;
