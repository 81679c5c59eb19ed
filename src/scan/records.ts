/**
 * Scan records (history and deferred state), scan profiles, uploads waiting for a deferred scan,
 * threat-feed hashes, and the store interfaces both engines implement (store/sqlite.ts,
 * store/mongo.ts).
 */
import type { ScanType } from './types';
import type { FeedEntrySink, FeedLookup } from './engines/feeds';

export interface StoredScan {
  _id: string; // scanId
  accountId: string;
  requestId: string;
  status: 'pending' | 'complete';
  scanType: ScanType;
  filename: string;
  profileId?: string;
  createdAt: Date;
  completedAt?: Date;
  /** Id of the uploaded bytes while a deferred scan waits; removed when it completes. */
  uploadId?: string;
  /** Digests computed while the upload streamed in, so its deferred scan does not hash 60 MB again. */
  uploadHashes?: { sha256: string; md5: string; sha1: string };
  size: number;
  creditsUsed: number;
  /** The stored scan result (synchronous shape plus scanId), excerpt fields cut to 200 characters. */
  result?: Record<string, unknown>;
  /** Set once the webhook of this scan has been handed to delivery, so it goes out at most once. */
  webhookSentAt?: Date;
}

export interface WebhookConfigDoc {
  url: string;
  authType: 'none' | 'api_key' | 'bearer' | 'custom_header';
  /** AES-256-GCM sealed credential (see src/crypto.ts). */
  valueSealed?: string;
  headerName?: string;
  /** Additional headers, sealed as one JSON object. */
  headersSealed?: string;
  headerNames: string[];
}

export interface ProfileDoc {
  _id: string;
  accountId: string;
  name: string;
  isDefault: boolean;
  allowedTypes: string[];
  suppressedEngines: string[];
  webhook?: WebhookConfigDoc;
  createdAt: Date;
  updatedAt: Date;
}

/** Where scans, their deferred uploads and the profiles they name are kept (scan/records.ts). */
export interface ScanRecords {
  insertScan(scan: StoredScan): Promise<void>;
  findScan(accountId: string, scanId: string): Promise<StoredScan | null>;
  findScanById(scanId: string): Promise<StoredScan | null>;
  /** Completes a pending scan exactly once; false when it was already complete. */
  completeScan(scanId: string, result: Record<string, unknown>, at: Date): Promise<boolean>;
  /** Claims the webhook send of a scan; false when it was already claimed. */
  claimWebhook(scanId: string, at: Date): Promise<boolean>;
  clearUpload(scanId: string): Promise<void>;
  /** Removes a scan that never started (its durable work could not be scheduled); idempotent. */
  deletePendingScan(scanId: string): Promise<void>;
  /** Complete scans newest first, one page. */
  history(accountId: string, page: number, limit: number): Promise<{ items: StoredScan[]; total: number }>;
  /** Keeps the bytes of a deferred scan; returns their id. */
  saveUpload(filename: string, content: Buffer): Promise<string>;
  readUpload(id: string): Promise<Buffer>;
  /** Idempotent. */
  deleteUpload(id: string): Promise<void>;
  findProfile(accountId: string, id: string): Promise<ProfileDoc | null>;
}

/** Where scan profiles are kept (scan/records.ts). */
export interface ScanProfiles {
  insertProfile(doc: ProfileDoc): Promise<void>;
  findProfile(accountId: string, id: string): Promise<ProfileDoc | null>;
  findDefaultProfile(accountId: string): Promise<ProfileDoc | null>;
  /** Oldest first. */
  listProfiles(accountId: string): Promise<ProfileDoc[]>;
  /** Sets `set` and removes the `unset` fields; the profile after, or null when there is none. */
  updateProfile(accountId: string, id: string, set: Partial<ProfileDoc>, unset?: string[]): Promise<ProfileDoc | null>;
  /** The account's other profiles stop being the default. */
  clearDefault(accountId: string, exceptId: string): Promise<void>;
  deleteProfile(accountId: string, id: string): Promise<boolean>;
}

export interface ScanStore extends ScanRecords, ScanProfiles {}

/** Threat-feed hashes: loaded by the CLI, looked up by the feeds engine. */
export interface FeedStore extends FeedEntrySink {
  readonly lookup: FeedLookup;
}
