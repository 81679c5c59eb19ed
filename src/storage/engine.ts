/**
 * The database of a process, whichever engine config names (docs/contract.md §11): the embedded
 * store (SQLite in the process, storage/sqlite.ts) or MongoDB (storage/mongo.ts). Opened, brought
 * to its schema (migrations, indexes) and pinged here; the stores are built on it in services.ts.
 */
import type { Config } from '../config';
import type { Logger } from '../log';
import { importFerretdbDataDir } from './import-ferretdb';
import { connectStorage, ensureIndexes, pingStorage, Storage } from './mongo';
import { EmbeddedStorage, openEmbedded } from './sqlite';

export type Database =
  | { engine: 'mongodb'; mongo: Storage; ping(): Promise<void>; close(): Promise<void> }
  | { engine: 'embedded'; embedded: EmbeddedStorage; ping(): Promise<void>; close(): Promise<void> };

/**
 * `logger` tells of the one-time import of a FerretDB-era DATA_DIR (storage/import-ferretdb.ts),
 * which the embedded engine runs here before any store uses it; a logger at LOG_LEVEL otherwise.
 * `importFerretdb: false` opens without it: the CLI's `migrate` is that import, from the addresses
 * it is given, and must not start a second FerretDB on (or refuse because of) the one it reads.
 */
export async function openDatabase(config: Config, logger?: Logger, opts: { importFerretdb?: boolean } = {}): Promise<Database> {
  if (config.databaseEngine === 'embedded') {
    const embedded = await openEmbedded(config.dataDir);
    try {
      if (opts.importFerretdb !== false) await importFerretdbDataDir(config, embedded, logger);
    } catch (err) {
      embedded.close();
      throw err;
    }
    return {
      engine: 'embedded',
      embedded,
      ping: async () => { embedded.db.prepare('SELECT 1').get(); },
      close: async () => embedded.close(),
    };
  }
  const mongo = await connectStorage(config);
  try {
    await ensureIndexes(mongo.db);
  } catch (err) {
    await mongo.close();
    throw err;
  }
  return { engine: 'mongodb', mongo, ping: () => pingStorage(mongo.readDb), close: () => mongo.close() };
}
