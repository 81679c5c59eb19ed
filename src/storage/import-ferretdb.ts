/**
 * The first start of the embedded engine on a DATA_DIR written by the FerretDB-based versions
 * (docs/contract.md §11 "Moving existing data"): their records (DATA_DIR/ferretdb) and stored
 * bytes (DATA_DIR/ferretdb-blobs) are imported before anything uses the embedded store. FerretDB
 * (.tools/bin/ferretdb, built by `npm run setup`) runs on those directories, on free ports, for
 * the import only; the directories are left as they are.
 *
 * The import's state is kept in the embedded database (`meta`): `running` with the process that
 * imports (another process opening the store meanwhile waits for it; a process that died leaves
 * its claim to the next start, which imports again and skips what is already there), then
 * `finished`, after which FerretDB is never started for this DATA_DIR again.
 *
 * It never runs beside a running service of the DATA_DIR (one holding run/service.lock, or an
 * earlier version's whose FerretDB's pidfile names it): that service may keep its records in
 * ferretdb/ (DATABASE_ENGINE=mongodb without MONGODB_URI runs the FerretDB stand-in there), and
 * the process that would import (the CLI, ROLES=api beside it) refuses, naming it, instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { createLogger, Logger } from '../log';
import { findFreePort, startLocalStack } from '../stack';
import { procStat, recordedChild } from '../stack/child';
import { stackHolder } from '../stack/lock';
import { sleep } from '../stack/net';
import { importFromMongo } from './import-mongo';
import { connectStorage } from './mongo';
import { EmbeddedStorage, getMeta, immediate, putMeta } from './sqlite';

/** Where the FerretDB-based versions kept their records and their stored bytes, under DATA_DIR. */
export const FERRETDB_DIRS = ['ferretdb', 'ferretdb-blobs'] as const;

export const IMPORT_META_KEY = 'ferretdb_import';

/**
 * Test hook, for tests only: the import stops (and waits to be killed) once this many records
 * are committed, so a test can kill the process at a known point part-way through.
 */
export const HALT_AFTER_ENV = 'SENTINEL_TEST_IMPORT_HALT_AFTER';

export type ImportState =
  | { state: 'running'; pid: number; started: string }
  | { state: 'finished'; at: string; records: number; blobs: number };

/** How often a process waits for another one's import to end. */
const WAIT_MS = 1000;

/** A process by pid and start time: a pid taken again by another process later is not the same. */
const startOf = (pid: number): string | undefined => procStat(pid)?.[19];

/**
 * Why this process must not import now, if it must not: the import starts FerretDB on ferretdb/
 * and ferretdb-blobs/, and a running service of this DATA_DIR may be using them. Found by an
 * outside probe: the CLI on the DATA_DIR of a service running the FerretDB stand-in imported, and
 * the stack start for it stopped all of that service's children (FerretDB, Temporal, clamd).
 */
function importRefusal(dataDir: string, from: string): string | undefined {
  const notImported = `${from} holds the data of an earlier, FerretDB-based version that is not imported yet`;
  const migrate = (records: string, blobs: string) => `\`DATABASE_ENGINE=embedded npm run cli -- migrate --from ${records} --from-blobs ${blobs}\` `
    + '(migrate does not run this import, and leaves the FerretDB it reads from alone)';
  // A service of this version holds the DATA_DIR: it keeps its records there (the FerretDB
  // stand-in), or, on the embedded store, imports them itself as it starts.
  const holder = stackHolder(dataDir);
  if (holder) {
    const port = (uri: string | undefined) => (uri ? new URL(uri).port : undefined);
    const records = port(holder.mongoUri);
    const how = records
      ? `It keeps its records in FerretDB on those directories (DATABASE_ENGINE=mongodb, MONGO_PORT ${records}): to work on its data, run this with `
        + `DATABASE_ENGINE=mongodb MONGO_PORT=${records}${holder.blobsUri ? ` MONGO_BLOB_PORT=${port(holder.blobsUri)}` : ''}; to copy it into the embedded store while it runs, `
        + `${migrate(`mongodb://127.0.0.1:${records}/`, holder.blobsUri ? `mongodb://127.0.0.1:${port(holder.blobsUri)}/` : `mongodb://127.0.0.1:${records}/`)}`
      // Addresses are published once its stack is up: a service still starting may be either.
      : 'If it runs the embedded store, it imports that data itself as it starts: run this again once it is ready; '
        + 'if it keeps its records in FerretDB there (DATABASE_ENGINE=mongodb), run this with its DATABASE_ENGINE=mongodb and MONGO_PORT';
    return `${notImported}, and the running service (pid ${holder.pid}, started ${holder.startedAt}) holds DATA_DIR ${dataDir}: `
      + `the import would start FerretDB on ferretdb/ and ferretdb-blobs/ beside it, so nothing was started or stopped. ${how}; `
      + 'or stop that service first, and the import runs here.';
  }
  // An earlier, FerretDB-based version's service holds no lock, but its FerretDB's pidfile names it.
  for (const part of ['mongo', 'blobs']) {
    const running = recordedChild(dataDir, part);
    if (running?.owner !== undefined && running.owner !== process.pid) {
      return `${notImported}, and FerretDB (pid ${running.pid}, started by the running process ${running.owner}) has it open `
        + `(an earlier version's service?): the import would start a second FerretDB on it, so nothing was started or stopped. To copy that data in while it runs, `
        + `${migrate('mongodb://127.0.0.1:<its MONGO_PORT>/', 'mongodb://127.0.0.1:<its MONGO_BLOB_PORT>/')}; or stop that process first, and the import runs here.`;
    }
  }
  return undefined;
}

/**
 * Takes the import for this process, unless it is finished or a live process is importing (then
 * waited for), or a running service uses the FerretDB-era directories (then refused).
 */
function claim(storage: EmbeddedStorage, dataDir: string, from: string): ImportState | 'claimed' {
  return immediate(storage.db, () => {
    const now = getMeta<ImportState>(storage.db, IMPORT_META_KEY);
    if (now?.state === 'finished') return now;
    if (now?.state === 'running' && now.pid !== process.pid && startOf(now.pid) === now.started) return now;
    const refusal = importRefusal(dataDir, from);
    if (refusal) throw new Error(refusal);
    putMeta(storage.db, IMPORT_META_KEY, { state: 'running', pid: process.pid, started: startOf(process.pid) ?? '' });
    return 'claimed';
  });
}

function haltHook(after: number | undefined, log: Logger): ((records: number) => Promise<void>) | undefined {
  if (after === undefined) return undefined;
  return async (records) => {
    if (records < after) return;
    log.warn({ records }, `import halted after ${records} records (${HALT_AFTER_ENV}, a test hook)`);
    await new Promise<never>(() => setInterval(() => undefined, 60_000));
  };
}

/** Imports DATA_DIR's FerretDB-era data into `storage` unless there is none or it is done. */
export async function importFerretdbDataDir(config: Config, storage: EmbeddedStorage, logger?: Logger): Promise<void> {
  const dirs = FERRETDB_DIRS.map((d) => path.join(config.dataDir, d));
  if (!fs.existsSync(dirs[0]) || getMeta<ImportState>(storage.db, IMPORT_META_KEY)?.state === 'finished') return;
  const ferretdb = path.join(config.rootDir, '.tools', 'bin', 'ferretdb');
  try {
    fs.accessSync(ferretdb, fs.constants.X_OK);
  } catch {
    throw new Error(`${dirs[0]} holds the data of an earlier, FerretDB-based version that is not imported yet, and importing it needs `
      + `FerretDB, which is missing (${ferretdb}): run \`npm run setup\` (it builds FerretDB) and start again; it is imported then. `
      + `To start without that data instead, move ${dirs[0]} out of DATA_DIR.`);
  }
  const log = logger ?? createLogger(config.logLevel);
  for (let waiting = false; ;) {
    const now = claim(storage, config.dataDir, dirs[0]);
    if (now === 'claimed') break;
    if (now.state === 'finished') return;
    if (!waiting) log.info({ pid: now.pid }, `process ${now.pid} is importing the earlier version's data of this DATA_DIR: waiting for it`);
    waiting = true;
    await sleep(WAIT_MS);
  }

  log.info({ from: dirs }, "importing the earlier, FerretDB-based version's data into the embedded store (once; an interrupted import resumes at the next start)");
  const mongoPort = await findFreePort();
  let mongoBlobPort = await findFreePort();
  while (mongoBlobPort === mongoPort) mongoBlobPort = await findFreePort();
  const stack = await startLocalStack({
    rootDir: config.rootDir, dataDir: config.dataDir, mongo: { port: mongoPort }, blobs: { port: mongoBlobPort }, logger: log.child({ component: 'import' }),
  });
  try {
    const source = await connectStorage({ ...config, databaseEngine: 'mongodb', mongodbUri: undefined, mongodbBlobUri: undefined, mongoPort, mongoBlobPort });
    const counts = await importFromMongo(source, storage, { afterBatch: haltHook(config.importHaltAfter, log) }).finally(() => source.close());
    const tables = Object.values(counts.records);
    const records = tables.reduce((n, c) => n + c.read, 0);
    putMeta(storage.db, IMPORT_META_KEY, { state: 'finished', at: new Date().toISOString(), records, blobs: counts.blobs.read } satisfies ImportState);
    log.info({
      records, recordsAdded: tables.reduce((n, c) => n + c.added, 0), blobs: counts.blobs.read, blobsAdded: counts.blobs.added,
      tables: Object.fromEntries(Object.entries(counts.records).filter(([, c]) => c.read > 0).map(([t, c]) => [t, c.read])), kept: dirs,
    }, `imported the earlier version's data: ${records} records and ${counts.blobs.read} stored blobs; ${FERRETDB_DIRS.join(' and ')} `
      + 'are left in DATA_DIR as they were and are no longer used (delete them once you have checked the data)');
  } finally {
    await stack.stop();
  }
}
