/**
 * Scan records (history and deferred state), scan profiles, uploads waiting for a deferred scan,
 * threat-feed hashes, and the store interfaces both engines implement (store/sqlite.ts,
 * store/mongo.ts).
 */
import type { ScanType } from './types';
import type { ScanRecords } from './service';
import type { ScanProfiles } from './profiles';
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

export interface ScanStore extends ScanRecords, ScanProfiles {}

/** Threat-feed hashes: loaded by the CLI, looked up by the feeds engine. */
export interface FeedStore extends FeedEntrySink {
  readonly lookup: FeedLookup;
}
