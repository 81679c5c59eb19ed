/**
 * Both storage engines, for the store contract suite (test/integration/storage/contract/): the
 * embedded store on a fresh DATA_DIR, and the MongoDB stores on fresh databases of the test
 * stack's MongoDB-wire server (the local FerretDB). FerretDB v1 is not atomic across connections,
 * so the cross-process cases also run the MongoDB stores on mongo-java-server, which is
 * (forEachAtomicEngine). A spec says how to open one, so a second process can open the same store
 * (contract-worker.ts).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { bucketsOf, ensureIndexes } from '../../src/storage/mongo';
import { openEmbedded } from '../../src/storage/sqlite';
import type { Database } from '../../src/storage/engine';
import { storesOf, Stores } from '../../src/services';
import { ROOT } from './service';
import { stack } from './env';
import { IN_CI } from './tools';

export type EngineSpec =
  | { engine: 'embedded'; dataDir: string }
  | { engine: 'mongodb'; uri: string; blobUri: string; db: string; blobDb: string };

export interface OpenEngine { database: Database; stores: Stores; close(): Promise<void> }

export async function openEngine(spec: EngineSpec): Promise<OpenEngine> {
  if (spec.engine === 'embedded') {
    const embedded = await openEmbedded(spec.dataDir);
    const database: Database = { engine: 'embedded', embedded, ping: async () => undefined, close: async () => embedded.close() };
    return { database, stores: storesOf(database), close: () => database.close() };
  }
  // One connection, as the service uses the local FerretDB (src/storage/mongo.ts).
  const client = await new MongoClient(spec.uri, { maxPoolSize: 1 }).connect();
  const blobClient = await new MongoClient(spec.blobUri, { maxPoolSize: 1 }).connect();
  const db = client.db(spec.db);
  const blobDb = blobClient.db(spec.blobDb);
  await ensureIndexes(db);
  const close = async () => { await client.close(); await blobClient.close(); };
  const mongo = { client, db, readDb: db, blobDb, buckets: bucketsOf(blobDb), close };
  const database: Database = { engine: 'mongodb', mongo, ping: async () => undefined, close };
  return { database, stores: storesOf(database), close };
}

/** A new, empty store of the engine; `drop` removes everything it wrote. */
export async function freshEngine(engine: EngineSpec['engine'], ports: () => { mongoPort: number; mongoBlobPort: number }): Promise<{ spec: EngineSpec; drop(): Promise<void> }> {
  if (engine === 'embedded') {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sentinel-contract-'));
    return { spec: { engine, dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const { mongoPort, mongoBlobPort } = ports();
  const name = `contract_${randomBytes(6).toString('hex')}`;
  const spec: EngineSpec = { engine, uri: `mongodb://127.0.0.1:${mongoPort}/`, blobUri: `mongodb://127.0.0.1:${mongoBlobPort}/`, db: name, blobDb: `${name}_blobs` };
  return {
    spec,
    drop: async () => {
      for (const [uri, db] of [[spec.uri, spec.db], [spec.blobUri, spec.blobDb]]) {
        const c = await new MongoClient(uri, { maxPoolSize: 1 }).connect();
        try { await c.db(db).dropDatabase(); } finally { await c.close(); }
      }
    },
  };
}

/** Where the processes of one cross-process case meet before they start (contract-worker.ts). */
export interface Barrier { dir: string; parties: number }
export const newBarrier = (parties: number): Barrier => ({ dir: mkdtempSync(path.join(os.tmpdir(), 'sentinel-barrier-')), parties });

/** Runs contract-worker.ts in its own process on the same store; resolves with what it printed (JSON). */
export function inOtherProcess<T>(spec: EngineSpec, task: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test', 'support', 'contract-worker.ts'), JSON.stringify({ spec, task })], {
      cwd: ROOT, timeout: 120_000, maxBuffer: 16 * 1024 * 1024,
    }, (err, stdout, stderr) => {
      if (err) reject(new Error(`contract worker failed: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as T);
    });
  });
}

export interface EngineContext {
  engine: EngineSpec['engine'];
  spec(): EngineSpec;
  stores(): Stores;
}

const MONGO_JAVA_SERVER = path.join(ROOT, '.tools', 'bin', 'mongo-java-server');
const MONGO_JAVA_SERVER_NAME = 'mongodb (mongo-java-server)';
type EngineName = 'embedded' | 'mongodb' | typeof MONGO_JAVA_SERVER_NAME;

/**
 * An in-memory mongo-java-server on a free port, for one test file. It stops when its stdin
 * closes (tools/mongo-java-server/MongoJavaServer.java), so it never outlives the test worker.
 */
async function startMongoJavaServer(): Promise<{ port: number; stop(): Promise<void> }> {
  const child = spawn(MONGO_JAVA_SERVER, ['0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (\d+)/.exec(output);
      if (m) resolve(Number(m[1]));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`mongo-java-server exited (${code}) before listening: ${output}`)));
  });
  const stop = () => new Promise<void>((resolve) => {
    if (child.exitCode !== null) { resolve(); return; }
    child.on('exit', () => resolve());
    child.stdin.end();
  });
  return { port, stop };
}

/** The cases on one engine, on a fresh store for the file. */
function describeEngine(name: EngineName, fn: (ctx: EngineContext) => void, describeFn: jest.Describe = describe): void {
  describeFn(name, () => {
    const engine: EngineSpec['engine'] = name === 'embedded' ? 'embedded' : 'mongodb';
    let server: { port: number; stop(): Promise<void> } | undefined;
    let fresh: { spec: EngineSpec; drop(): Promise<void> } | undefined;
    let open: OpenEngine | undefined;
    beforeAll(async () => {
      if (name === MONGO_JAVA_SERVER_NAME) {
        const started = await startMongoJavaServer();
        server = started;
        fresh = await freshEngine(engine, () => ({ mongoPort: started.port, mongoBlobPort: started.port }));
      } else fresh = await freshEngine(engine, stack);
      open = await openEngine(fresh.spec);
    });
    afterAll(async () => {
      try {
        await open?.close();
        await fresh?.drop();
      } finally {
        await server?.stop();
      }
    });
    fn({ engine, spec: () => (fresh as { spec: EngineSpec }).spec, stores: () => (open as OpenEngine).stores });
  });
}

/** The same tests against both engines, each on a fresh store for the file. */
export function forEachEngine(fn: (ctx: EngineContext) => void): void {
  describeEngine('embedded', fn);
  describeEngine('mongodb', fn);
}

/**
 * Cases that need each single-document write atomic across connections (the cross-process ones):
 * on the embedded store and the MongoDB stores on mongo-java-server, which applies them atomically
 * as MongoDB does; FerretDB v1, the test stack's stand-in, does not (issue 29). Without the
 * server (`npm run setup` installs it) the MongoDB side is reported as skipped, and under CI=true
 * it is an error, as for the other required tools (tools.ts).
 */
export function forEachAtomicEngine(fn: (ctx: EngineContext) => void): void {
  const present = existsSync(MONGO_JAVA_SERVER);
  if (!present && IN_CI) {
    throw new Error(`${MONGO_JAVA_SERVER} is required under CI=true but is missing (npm run setup installs it; it needs java, javac and maven)`);
  }
  describeEngine('embedded', fn);
  describeEngine(MONGO_JAVA_SERVER_NAME, fn, present ? describe : describe.skip);
}

/** A new tenant id per test, so tests of one file never see each other's records. */
export const newTenant = (): string => `acct_${randomBytes(6).toString('hex')}`;
