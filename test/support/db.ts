/**
 * The shared test stack's records as the service keeps them (the embedded store in the stack's
 * DATA_DIR, opened beside the running service as a second process would), for tests that must set
 * up or inspect state the API does not expose. Stores speak the domain's words; `table` gives a
 * record table's raw documents for the few set-ups no store method makes (a month's usage counter
 * pushed near its limit, a run's times moved into the past).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DocTable } from '../../src/storage/sqlite';
import type { Stores } from '../../src/services';
import { openEngine } from './engines';
import { stack } from './env';
import type { StackEnv } from './service';

export interface StackRecords {
  stores: Stores;
  /** A table of storage/sqlite.ts TABLES, its documents as the stores write them (Dates as Dates). */
  table<T extends { _id: string }>(name: string): DocTable<T>;
}

export async function withStackRecords<T>(fn: (r: StackRecords) => Promise<T>, env: StackEnv = stack()): Promise<T> {
  if (env.databaseEngine !== 'embedded') throw new Error('withStackRecords reads the embedded store; this stack runs on MongoDB (use support/mongo.ts)');
  const open = await openEngine({ engine: 'embedded', dataDir: env.dataDir });
  try {
    const { database } = open;
    if (database.engine !== 'embedded') throw new Error('unreachable: opened the embedded engine');
    return await fn({ stores: open.stores, table: (name) => new DocTable(database.embedded.db, name) });
  } finally {
    await open.close();
  }
}

/** The file's bytes; undefined when it went between listing and reading (a blob deleted or renamed into place meanwhile). */
function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Every file under the stack's DATA_DIR/db (records, write-ahead log, stored bytes) that holds `needle`. */
export function filesHolding(needle: Buffer, env: StackEnv = stack()): string[] {
  const hits: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (readIfPresent(p)?.includes(needle)) hits.push(path.relative(env.dataDir, p));
    }
  };
  walk(path.join(env.dataDir, 'db'));
  return hits;
}
