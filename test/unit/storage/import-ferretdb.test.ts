/**
 * Opening the embedded engine on a DATA_DIR of the FerretDB-based versions (storage/import-ferretdb.ts):
 * whether the import runs, who runs it, and what happens without FerretDB. The import of real data,
 * over HTTP and through kill -9, is test/integration/storage/import-on-start.test.ts.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/log';
import { openDatabase } from '../../../src/storage/engine';
import { IMPORT_META_KEY, ImportState } from '../../../src/storage/import-ferretdb';
import { procStat } from '../../../src/stack/child';
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
