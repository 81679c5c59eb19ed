/**
 * Opening the embedded engine on a DATA_DIR of the FerretDB-based versions (storage/import-ferretdb.ts):
 * whether the import runs, who runs it, and what happens without FerretDB. The import of real data,
 * over HTTP and through kill -9, is test/integration/storage/import-on-start.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/log';
import { openDatabase } from '../../../src/storage/engine';
import { IMPORT_META_KEY, ImportState } from '../../../src/storage/import-ferretdb';
import { processArgv, procStat } from '../../../src/stack/child';
import { getMeta, openSqlite, putMeta } from '../../../src/storage/sqlite';

const ROOT = path.resolve(__dirname, '../../..');

let dir: string;
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-ferretdb-unit-')); });
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const configFor = (rootDir = ROOT) => ({ ...loadConfig({ DATABASE_ENGINE: 'embedded', DATA_DIR: dir }), rootDir });
const records = () => path.join(dir, 'db', 'records.sqlite');
const stateOf = (): ImportState | undefined => {
  const db = openSqlite(records());
  try { return getMeta<ImportState>(db, IMPORT_META_KEY); } finally { db.close(); }
};
const setState = (state: ImportState) => {
  const db = openSqlite(records());
  try { putMeta(db, IMPORT_META_KEY, state); } finally { db.close(); }
};
const silent = createLogger('silent');

test('a DATA_DIR without FerretDB-era data opens without an import', async () => {
  const database = await openDatabase(configFor(dir), silent);
  await database.close();
  expect(stateOf()).toBeUndefined();
});

test('FerretDB-era data without FerretDB installed stops start-up, saying how to import it', async () => {
  fs.mkdirSync(path.join(dir, 'ferretdb'));
  const opening = openDatabase(configFor(dir), silent);
  await expect(opening).rejects.toThrow(/holds the data of an earlier, FerretDB-based version that is not imported yet/);
  await expect(opening).rejects.toThrow(/run `npm run setup` \(it builds FerretDB\)/);
  expect(stateOf()).toBeUndefined();
});

test('once the import is finished FerretDB is never needed again for that DATA_DIR', async () => {
  fs.mkdirSync(path.join(dir, 'ferretdb'));
  setState({ state: 'finished', at: new Date().toISOString(), records: 3, blobs: 0 });
  // No FerretDB under this root: opening would fail if the import ran.
  const database = await openDatabase(configFor(dir), silent);
  await database.close();
  expect(fs.existsSync(path.join(dir, 'logs'))).toBe(false);
});

test("another live process's import is waited for; FerretDB is not started twice", async () => {
  fs.mkdirSync(path.join(dir, 'ferretdb'));
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const pid = other.pid as number;
    setState({ state: 'running', pid, started: procStat(pid)?.[19] ?? '' });
    let opened = false;
    const opening = openDatabase(configFor(), silent).then((d) => { opened = true; return d; });
    await new Promise((r) => setTimeout(r, 1500));
    expect(opened).toBe(false);
    setState({ state: 'finished', at: new Date().toISOString(), records: 0, blobs: 0 });
    await (await opening).close();
    expect(fs.existsSync(path.join(dir, 'logs', 'mongo.log'))).toBe(false);
  } finally {
    other.kill('SIGKILL');
  }
});

test("a dead process's unfinished import is taken over and finished", async () => {
  fs.mkdirSync(path.join(dir, 'ferretdb'));
  const gone = spawn('true', { stdio: 'ignore' });
  await new Promise((r) => gone.once('exit', r));
  setState({ state: 'running', pid: gone.pid as number, started: '1' });
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => { lines.push((JSON.parse(line) as { msg: string }).msg); } });
  await (await openDatabase(configFor(), logger)).close();
  expect(stateOf()).toMatchObject({ state: 'finished', records: 0, blobs: 0 });
  expect(lines.filter((l) => l.startsWith('imported the earlier version'))).toHaveLength(1);
  expect(lines.find((l) => l.startsWith('imported'))).toContain('ferretdb and ferretdb-blobs are left in DATA_DIR as they were');
  // FerretDB ran for the import and is stopped.
  expect(fs.readFileSync(path.join(dir, 'logs', 'mongo.log'), 'utf8')).toContain('starting');
  expect(fs.readdirSync(path.join(dir, 'run'))).toEqual([]);
});

/** bash running `sleep 300` in the background and waiting on it: a running service and one child of it. */
async function serviceWithChild(): Promise<{ service: ChildProcess; pid: number; child: number }> {
  const service = spawn('bash', ['-c', 'sleep 300 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const child = await new Promise<number>((resolve) => service.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
  for (let i = 0; i < 40 && processArgv(child)?.[0] !== 'sleep'; i++) await new Promise((r) => setTimeout(r, 50));
  return { service, pid: service.pid as number, child };
}
const alive = (pid: number) => (processArgv(pid)?.length ?? 0) > 0;
function end(s: { service: ChildProcess; child: number }): void {
  if (alive(s.child)) process.kill(s.child, 'SIGKILL');
  s.service.kill('SIGKILL');
}
const writeRun = (name: string, content: object) => {
  fs.mkdirSync(path.join(dir, 'run'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'run', name), JSON.stringify(content));
};

// Found by an outside probe: the CLI (DATABASE_ENGINE=embedded) on the DATA_DIR of a running
// service whose FerretDB stand-in keeps its records in ferretdb/ (DATABASE_ENGINE=mongodb without
// MONGODB_URI) ran the import, and the stack start for it stopped all of that service's children.
test('the import does not run while a running service holds the DATA_DIR: refused naming its pid, nothing of it stopped', async () => {
  fs.mkdirSync(path.join(dir, 'ferretdb'));
  const s = await serviceWithChild();
  const mongoUri = 'mongodb://127.0.0.1:27071/?maxPoolSize=1';
  try {
    writeRun('service.lock', { pid: s.pid, argv: processArgv(s.pid), startedAt: '2026-11-28T00:00:00.000Z', mongoUri });
    // Its FerretDB stand-in on ferretdb/ (and, as far as the clean-up can tell, its Temporal).
    const pidFiles = { 'mongo.pid': { pid: s.child, argv: ['sleep', '300'], parent: s.pid }, 'temporal.pid': { pid: s.child, argv: ['sleep', '300'], parent: s.pid } };
    for (const [name, content] of Object.entries(pidFiles)) writeRun(name, content);
    const opening = openDatabase(configFor(), silent);
    await expect(opening).rejects.toThrow(`the running service (pid ${s.pid}, started 2026-11-28T00:00:00.000Z) holds DATA_DIR ${dir}`);
    await expect(opening).rejects.toThrow('DATABASE_ENGINE=mongodb MONGO_PORT=27071');
    await new Promise((r) => setTimeout(r, 300));
    expect(alive(s.child)).toBe(true);
    for (const [name, content] of Object.entries(pidFiles)) expect(JSON.parse(fs.readFileSync(path.join(dir, 'run', name), 'utf8'))).toEqual(content);
    expect(fs.existsSync(path.join(dir, 'logs', 'mongo.log'))).toBe(false);
    // Not claimed: the service's own embedded start, or this one once the service stops, imports it.
    expect(stateOf()).toBeUndefined();
  } finally {
    end(s);
  }
});

test("a running service's own import is waited for, not refused", async () => {
  fs.mkdirSync(path.join(dir, 'ferretdb'));
  const s = await serviceWithChild();
  try {
    writeRun('service.lock', { pid: s.pid, argv: processArgv(s.pid), startedAt: new Date().toISOString() });
    setState({ state: 'running', pid: s.pid, started: procStat(s.pid)?.[19] ?? '' });
    const opening = openDatabase(configFor(), silent);
    await new Promise((r) => setTimeout(r, 1200));
    setState({ state: 'finished', at: new Date().toISOString(), records: 0, blobs: 0 });
    await (await opening).close();
  } finally {
    end(s);
  }
});

test('a FerretDB that a live process runs on ferretdb/ without the lock (an earlier version\'s service) keeps the import from running', async () => {
  fs.mkdirSync(path.join(dir, 'ferretdb'));
  const s = await serviceWithChild();
  try {
    // The FerretDB-era versions wrote pidfiles without the parent and no service.lock.
    writeRun('mongo.pid', { pid: s.child, argv: ['sleep', '300'] });
    const opening = openDatabase(configFor(), silent);
    await expect(opening).rejects.toThrow(`FerretDB (pid ${s.child}, started by the running process ${s.pid})`);
    await expect(opening).rejects.toThrow('npm run cli -- migrate');
    expect(alive(s.child)).toBe(true);
    expect(fs.existsSync(path.join(dir, 'logs', 'mongo.log'))).toBe(false);
    expect(stateOf()).toBeUndefined();
  } finally {
    end(s);
  }
});

test('opening without the import (the CLI\'s migrate, which is the import from addresses it is given) starts nothing', async () => {
  fs.mkdirSync(path.join(dir, 'ferretdb'));
  // No FerretDB under this root: opening would fail if the import ran.
  const database = await openDatabase(configFor(dir), silent, { importFerretdb: false });
  await database.close();
  expect(stateOf()).toBeUndefined();
  expect(fs.existsSync(path.join(dir, 'logs'))).toBe(false);
});
