/** Direct database access for tests that must set up or inspect state the API does not expose. */
import { Db, MongoClient } from 'mongodb';
import { stack } from './env';

/** The test stack's databases: records, and the GridFS buckets (MONGODB_BLOB_DB's default). */
export const MAIN_DB = 'sentinel';
export const BLOB_DB = 'sentinel_blobs';

/** `name` on its server: BLOB_DB on the blobs FerretDB, every other database on the records' one. */
export async function withDb<T>(fn: (db: Db) => Promise<T>, name: string = MAIN_DB): Promise<T> {
  const port = name === BLOB_DB ? stack().mongoBlobPort : stack().mongoPort;
  const client = new MongoClient(`mongodb://127.0.0.1:${port}/?maxPoolSize=1`);
  await client.connect();
  try {
    return await fn(client.db(name));
  } finally {
    await client.close();
  }
}

/** Every collection of both databases, for tests that look for a text anywhere in what is stored. */
export async function forEachCollection(fn: (db: Db, collection: string) => Promise<void>): Promise<void> {
  for (const name of [MAIN_DB, BLOB_DB]) {
    await withDb(async (db) => {
      for (const c of await db.listCollections({}, { nameOnly: true }).toArray()) await fn(db, c.name);
    }, name);
  }
}
