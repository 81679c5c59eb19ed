/**
 * The MongoDB connections of a process, its GridFS buckets, the collection names, and every
 * index, created idempotently at start. The Mongo*Store classes (`<capability>/store/mongo.ts`) are
 * the only other places that speak MongoDB; they get their connection and bucket from here and
 * open neither themselves.
 */
import { Db, Document, FindCursor, GridFSBucket, IndexDescription, MongoClient } from 'mongodb';
import { Config, mongoBlobUriOf, mongoUriOf, usesLocalBlobs } from '../config';
import { GRIDFS_CHUNK_BYTES } from './gridfs';
import { KeyedBlobs } from './keyed-blobs';
import { metricsEnabled, watchDbCommands } from '../telemetry/metrics';

export const COLLECTIONS = {
  accounts: 'accounts',
  apiKeys: 'api_keys',
  entities: 'entities',
  entityKeys: 'entity_keys',
  roles: 'roles',
  rateCounters: 'rate_counters',
  usageDaily: 'usage_daily',
  auditLog: 'audit_log',
  scans: 'scans',
  scanProfiles: 'scan_profiles',
  threatFeedHashes: 'threat_feed_hashes',
  messages: 'messages',
  messageInbox: 'message_inbox',
  services: 'services',
  notifications: 'notifications',
  files: 'files',
  // One document per download in progress (`_id` = file id): the claim that makes a download single.
  fileDownloadClaims: 'file_download_claims',
  workflows: 'workflows',
  workflowRuns: 'workflow_runs',
  workflowOutputs: 'workflow_run_outputs',
  workflowRunSlots: 'workflow_run_slots',
  workflowRunQueue: 'workflow_run_queue',
  connectors: 'connectors',
  vault: 'vault',
  mqttSignals: 'mqtt_signals',
  mqttPresence: 'mqtt_presence',
} as const;

/**
 * A cursor read a batch at a time: each page is what one getMore brought (`batchSize` documents),
 * each document turned into what `read` makes of it; closing it kills the cursor on the server.
 */
export function pagesOf<T, R>(cursor: FindCursor<T>, read: (doc: T) => R): AsyncIterable<R[]> & { close(): Promise<void> } {
  return {
    close: () => cursor.close(),
    async *[Symbol.asyncIterator]() {
      while (await cursor.hasNext()) yield cursor.readBufferedDocuments().map(read);
    },
  };
}

/** GridFS bucket names (each bucket is two collections, `<name>.files` and `<name>.chunks`). */
export const BUCKETS = {
  fileBlobs: 'file_blobs',
  workflowOutputs: 'workflow_outputs',
} as const;

/** Blobs written and read whole, kept `_id`-keyed (storage/keyed-blobs.ts: `<name>_files`, `<name>_chunks`). */
export const KEYED_BLOBS = {
  scanUploads: 'scan_uploads',
} as const;

export type Buckets = Record<keyof typeof BUCKETS, GridFSBucket> & Record<keyof typeof KEYED_BLOBS, KeyedBlobs>;

/** Every bucket is in the blob database on the blob pool (Storage.blobDb), 1 MB chunks (storage/gridfs.ts). */
export function bucketsOf(blobDb: Db): Buckets {
  const bucket = (bucketName: string) => new GridFSBucket(blobDb, { bucketName, chunkSizeBytes: GRIDFS_CHUNK_BYTES });
  return {
    scanUploads: new KeyedBlobs(blobDb, KEYED_BLOBS.scanUploads),
    fileBlobs: bucket(BUCKETS.fileBlobs),
    workflowOutputs: bucket(BUCKETS.workflowOutputs),
  };
}

/** Index declarations, one place. Names are explicit so re-creation is a no-op. */
const INDEXES: Record<string, IndexDescription[]> = {
  [COLLECTIONS.apiKeys]: [{ key: { accountId: 1 }, name: 'by_account' }],
  [COLLECTIONS.entities]: [
    { key: { accountId: 1, name: 1 }, name: 'account_name', unique: true },
    { key: { apiKeyId: 1 }, name: 'by_key' },
  ],
  [COLLECTIONS.entityKeys]: [{ key: { accountId: 1, entityName: 1 }, name: 'account_entity' }],
  [COLLECTIONS.roles]: [{ key: { accountId: 1, name: 1 }, name: 'account_name', unique: true }],
  [COLLECTIONS.rateCounters]: [{ key: { expiresAt: 1 }, name: 'expiry' }],
  [COLLECTIONS.usageDaily]: [{ key: { accountId: 1, date: 1 }, name: 'account_date' }],
  [COLLECTIONS.auditLog]: [
    { key: { accountId: 1, timestamp: -1, _id: -1 }, name: 'account_time' },
  ],
  [COLLECTIONS.scans]: [
    { key: { accountId: 1, createdAt: -1, _id: -1 }, name: 'account_time' },
  ],
  [COLLECTIONS.scanProfiles]: [{ key: { accountId: 1, name: 1 }, name: 'account_name', unique: true }],
  // History: list/search/export walk (accountId, msgType) newest first; entity_name filters by sender.
  [COLLECTIONS.messages]: [
    { key: { accountId: 1, msgType: 1, timestamp: -1, _id: -1 }, name: 'account_type_time' },
    { key: { accountId: 1, msgType: 1, sourceName: 1, timestamp: -1, _id: -1 }, name: 'account_type_source_time' },
    // A tag search: one multikey range per tag, merged newest first, instead of the account's whole history.
    { key: { accountId: 1, msgType: 1, tags: 1, timestamp: -1, _id: -1 }, name: 'account_type_tags_time' },
  ],
  // Pending directed messages: claims take the oldest of one destination.
  [COLLECTIONS.messageInbox]: [{ key: { accountId: 1, dest: 1, queuedAt: 1, _id: 1 }, name: 'dest_fifo' }],
  [COLLECTIONS.services]: [{ key: { accountId: 1, name: 1 }, name: 'account_name', unique: true }],
  [COLLECTIONS.notifications]: [{ key: { accountId: 1, createdAt: -1 }, name: 'account_time' }],
  [COLLECTIONS.vault]: [{ key: { accountId: 1, name: 1 }, name: 'account_name' }],
  [COLLECTIONS.connectors]: [{ key: { accountId: 1, name: 1 }, name: 'account_name', unique: true }],
  // File transfer: a recipient's inbox, the clip gallery newest first, the expiry sweep.
  [COLLECTIONS.files]: [
    { key: { accountId: 1, dest: 1, status: 1, createdAt: 1 }, name: 'account_dest_status' },
    { key: { accountId: 1, kind: 1, createdAt: -1, _id: -1 }, name: 'account_kind_time' },
    { key: { expiresAt: 1 }, name: 'expiry' },
  ],
  [COLLECTIONS.workflows]: [{ key: { accountId: 1, createdAt: 1, _id: 1 }, name: 'account_time' }],
  // Runs list newest first per workflow; the sweeper finds running runs past their deadline.
  [COLLECTIONS.workflowRuns]: [
    { key: { accountId: 1, workflowId: 1, queuedAt: -1, _id: -1 }, name: 'account_workflow_time' },
    { key: { status: 1, deadline: 1 }, name: 'status_deadline' },
    // The expiry sweep and the worker's repair of the waiting line.
    { key: { status: 1, accountId: 1, queuedAt: 1, _id: 1 }, name: 'status_account_fifo' },
  ],
  // The waiting line, one entry per queued run (`_id` = runId): the oldest of an account (FIFO).
  [COLLECTIONS.workflowRunQueue]: [{ key: { accountId: 1, queuedAt: 1, _id: 1 }, name: 'account_fifo' }],
  // One document per running run (`_id` = runId); the unique index makes a slot number one run's.
  [COLLECTIONS.workflowRunSlots]: [{ key: { accountId: 1, slot: 1 }, name: 'account_slot', unique: true }],
  // MQTT processes poll signals newer than their last read; old ones are swept by time.
  [COLLECTIONS.mqttSignals]: [{ key: { at: 1 }, name: 'by_time' }],
};

export interface Storage {
  client: MongoClient;
  /** Every write goes here. */
  db: Db;
  /**
   * Plain reads. The local FerretDB stand-in (SQLite) can lose concurrent updates of one document
   * made over several connections, so `db` has a single connection there; reads need no such
   * serialising and must not queue behind writes on it. A real MongoDB: the same pool as `db`.
   */
  readDb: Db;
  /**
   * The stored bytes (GridFS streams through `buckets`, and the keyed upload chunks) in a database
   * of their own, MONGODB_BLOB_DB, on the server of MONGODB_BLOB_URI. On the FerretDB stand-in
   * that is its second server, at a lower CPU priority (stack/index.ts): one 60 MB upload is 60
   * chunk inserts, and in the records' FerretDB they held its single SQLite writer and most of its
   * CPU, which every other request's reads and writes waited for. A real MongoDB: the same pool as `db` unless
   * MONGODB_BLOB_URI names another server.
   */
  blobDb: Db;
  /** The GridFS buckets (on `blobDb`), handed to the stores that keep bytes. */
  buckets: Buckets;
  close(): Promise<void>;
}

/** Connections of the FerretDB stand-in's read pool. */
const LOCAL_READ_POOL = 8;
/**
 * Connections to the stand-in's blobs FerretDB: at most this many chunk inserts hold or wait for its
 * SQLite writer at once, however many uploads run, so a download or a scan's read gets a turn.
 */
const LOCAL_BLOB_POOL = 2;

/** host:port list of a MongoDB URI, without its credentials, path or options. */
function hostsOf(uri: string): string {
  const m = /^mongodb(?:\+srv)?:\/\/(?:[^@/]*@)?([^/?]*)/.exec(uri);
  return m ? m[1] : 'the configured URI';
}

export async function connectStorage(config: Config): Promise<Storage> {
  const local = config.mongodbUri === undefined;
  const open = async (uri: string, maxPoolSize: number, appName: string) => {
    const c = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000, maxPoolSize, appName, monitorCommands: metricsEnabled() });
    watchDbCommands(c, appName === 'sentinel-read' ? 'reads' : appName === 'sentinel-blob' ? 'blobs' : 'records');
    try {
      await c.connect();
    } catch (err) {
      // The driver's words ("connect ECONNREFUSED 127.0.0.1:27999") do not say which setting; the
      // URI is shown by host only (it may hold a password).
      const setting = local ? (appName === 'sentinel-blob' ? 'MONGO_BLOB_PORT (the local FerretDB)' : 'MONGO_PORT (the local FerretDB)') : appName === 'sentinel-blob' ? 'MONGODB_BLOB_URI' : 'MONGODB_URI';
      throw new Error(`cannot reach MongoDB at ${hostsOf(uri)} (${setting}): ${(err as Error).message}`, { cause: err });
    }
    return c;
  };
  const client = await open(mongoUriOf(config), local ? 1 : 50, 'sentinel');
  const readClient = local ? await open(mongoUriOf(config), LOCAL_READ_POOL, 'sentinel-read') : client;
  const blobUri = mongoBlobUriOf(config);
  const localBlobs = usesLocalBlobs(config);
  const blobClient = blobUri !== mongoUriOf(config) ? await open(blobUri, localBlobs ? LOCAL_BLOB_POOL : 50, 'sentinel-blob') : client;
  const blobDb = blobClient.db(config.mongodbBlobDb);
  // Versions before the blobs FerretDB kept MONGODB_BLOB_DB in the records' FerretDB (local blobs
  // imply local records: usesLocalBlobs).
  if (localBlobs) await moveDatabase(client.db(config.mongodbBlobDb), blobDb);
  return {
    client,
    db: client.db(config.mongodbDb),
    readDb: readClient.db(config.mongodbDb),
    blobDb,
    buckets: bucketsOf(blobDb),
    close: async () => {
      await client.close();
      if (readClient !== client) await readClient.close();
      if (blobClient !== client) await blobClient.close();
    },
  };
}

/**
 * Copies every collection of `from` into `to` (another server), then drops it from `from`; returns
 * the documents copied. Safe to run again after a crash part-way: documents already copied are
 * duplicates and skipped, and a collection is dropped only once all of it is in `to`.
 */
export async function moveDatabase(from: Db, to: Db): Promise<number> {
  let moved = 0;
  for (const { name } of await from.listCollections({}, { nameOnly: true }).toArray()) {
    const source = from.collection(name);
    const target = to.collection(name);
    let batch: Document[] = [];
    const flush = async () => {
      if (!batch.length) return;
      try {
        await target.insertMany(batch, { ordered: false });
      } catch (err) {
        const errors = (err as { writeErrors?: unknown[] }).writeErrors;
        if (!Array.isArray(errors) || !errors.every((e) => (e as { code?: number }).code === 11000)) throw err;
      }
      moved += batch.length;
      batch = [];
    };
    // Small batches: a chunk document holds up to a megabyte.
    for await (const doc of source.find({}, { batchSize: 8 })) {
      batch.push(doc);
      if (batch.length >= 8) await flush();
    }
    await flush();
    await source.drop();
  }
  return moved;
}

export async function ensureIndexes(db: Db): Promise<void> {
  const existing = new Set((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
  for (const name of Object.values(COLLECTIONS)) {
    if (!existing.has(name)) {
      try {
        await db.createCollection(name);
      } catch (err) {
        // Another replica created it between our list and create: that is the desired state.
        if (!(err instanceof Error && /already exists/i.test(err.message))) throw err;
      }
    }
  }
  for (const [collection, indexes] of Object.entries(INDEXES)) {
    const col = db.collection(collection);
    const present = new Set((await col.listIndexes().toArray()).map((i) => String(i.name)));
    // One index per call, only the missing ones: FerretDB v1 crashes on a multi-index
    // createIndexes whose indexes partly exist.
    for (const index of indexes) {
      if (!present.has(index.name as string)) await col.createIndexes([index]);
    }
  }
}

export async function pingStorage(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}
