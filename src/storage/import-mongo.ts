/**
 * Moves a MongoDB-era database (the FerretDB files of an older DATA_DIR, or any MongoDB) into the
 * embedded store (docs/contract.md §11): every collection into its table, every stored blob into
 * the blob files. Safe to run again after an interruption: a record already there is skipped by
 * its id and a blob already whole by its size, so nothing is lost or doubled.
 */
import type { Readable } from 'node:stream';
import type { Document } from 'mongodb';
import { BLOB_KEYS } from './blob-files';
import { COLLECTIONS, KEYED_BLOBS, Storage } from './mongo';
import { encodeDoc, immediate, EmbeddedStorage } from './sqlite';
import { encodeUserJson } from './user-json';

/** The table of each collection (storage/sqlite.ts TABLES). */
export const TABLE_OF: Record<keyof typeof COLLECTIONS, string> = {
  accounts: 'accounts', apiKeys: 'api_keys', entities: 'entities', entityKeys: 'entity_keys', roles: 'roles',
  rateCounters: 'rate_counters', usageDaily: 'usage', auditLog: 'audit_log', scans: 'scans', scanProfiles: 'scan_profiles',
  threatFeedHashes: 'threat_feed_hashes', messages: 'messages', messageInbox: 'message_inbox', services: 'services',
  notifications: 'notifications', files: 'files', workflows: 'workflows', workflowRuns: 'workflow_runs',
  workflowOutputs: 'workflow_run_outputs', workflowRunSlots: 'workflow_run_slots', workflowRunQueue: 'workflow_run_queue',
  fileDownloadClaims: 'file_download_claims', connectors: 'connectors', vault: 'vault', mqttSignals: 'mqtt_signals', mqttPresence: 'mqtt_presence',
};

const BATCH = 1000;

/** ObjectIds (upload and output references) become their hex, as the embedded stores keep ids. */
function plain(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  if ((value as { _bsontype?: string })._bsontype === 'ObjectId') return (value as { toHexString(): string }).toHexString();
  if (Array.isArray(value)) return value.map(plain);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
}

/** Entity documents written before user JSON was kept as text hold metadata and state natively. */
function recordOf(collection: keyof typeof COLLECTIONS, doc: Document): Document {
  const d = plain(doc) as Document;
  if (collection !== 'entities') return d;
  return {
    ...d,
    metadata: typeof d.metadata === 'string' ? d.metadata : encodeUserJson(d.metadata ?? {}),
    ...(d.statusTable !== undefined ? { statusTable: typeof d.statusTable === 'string' ? d.statusTable : encodeUserJson(d.statusTable) } : {}),
  };
}

export interface ImportCounts { records: Record<string, { read: number; added: number }>; blobs: { read: number; added: number } }

export interface ImportOptions {
  /** Awaited after each batch of records is committed, with the number of records read so far. */
  afterBatch?: (records: number) => Promise<void>;
}

export async function importFromMongo(from: Storage, to: EmbeddedStorage, opts: ImportOptions = {}): Promise<ImportCounts> {
  const counts: ImportCounts = { records: {}, blobs: { read: 0, added: 0 } };
  let records = 0;
  for (const [key, collection] of Object.entries(COLLECTIONS) as Array<[keyof typeof COLLECTIONS, string]>) {
    const table = TABLE_OF[key];
    const insert = to.db.prepare(`INSERT INTO ${table} (id, doc) VALUES (?, ?) ON CONFLICT(id) DO NOTHING`);
    const c = (counts.records[table] = { read: 0, added: 0 });
    let batch: Document[] = [];
    // A batch is one transaction: an interrupted import leaves whole batches, and the next run
    // skips their records by id.
    const flush = async () => {
      immediate(to.db, () => {
        for (const doc of batch) c.added += insert.run(String(doc._id), encodeDoc(doc)).changes;
      });
      c.read += batch.length;
      records += batch.length;
      batch = [];
      await opts.afterBatch?.(records);
    };
    for await (const doc of from.db.collection(collection).find({}, { batchSize: BATCH })) {
      batch.push(recordOf(key, doc));
      if (batch.length >= BATCH) await flush();
    }
    await flush();
  }
  const copy = async (blobKey: string, length: number, read: () => Promise<Readable | Buffer | undefined>) => {
    counts.blobs.read++;
    if ((await to.blobs.size(blobKey)) === length) return;
    const source = await read();
    if (source === undefined) return;
    await to.blobs.write(blobKey, source);
    counts.blobs.added++;
  };
  // File parts are named `<fileId>/<part>`; node outputs are referenced by their GridFS id.
  for await (const f of from.buckets.fileBlobs.find({})) {
    await copy(BLOB_KEYS.filePart(...(f.filename.split('/') as [string, string])), f.length, async () => from.buckets.fileBlobs.openDownloadStream(f._id));
  }
  for await (const f of from.buckets.workflowOutputs.find({})) {
    await copy(BLOB_KEYS.nodeOutput(f._id.toHexString()), f.length, async () => from.buckets.workflowOutputs.openDownloadStream(f._id));
  }
  for await (const h of from.blobDb.collection<{ _id: string; length: number }>(`${KEYED_BLOBS.scanUploads}_files`).find({})) {
    await copy(BLOB_KEYS.scanUpload(h._id), h.length, () => from.buckets.scanUploads.read(h._id));
  }
  return counts;
}

