/**
 * A DATA_DIR written by the FerretDB-based versions starts on the embedded engine with all its data
 * (docs/contract.md §11 "Moving existing data"), from outside: the service runs with the local
 * FerretDB (DATABASE_ENGINE=mongodb, no MONGODB_URI), gets an account, devices, a rotated key,
 * messages, a directed message, a state table, a scan, a workflow run with an output by reference
 * and a transferred file through HTTP, stops, and starts again on the embedded engine on the same
 * DATA_DIR and ports. Every table then holds as many records as its FerretDB collection did, every
 * stored blob is there, and the API answers byte for byte as before. The same from a copy of that
 * DATA_DIR whose import is killed with SIGKILL part-way (the SENTINEL_TEST_IMPORT_HALT_AFTER test
 * hook holds it at a known point) and then restarted: nothing lost, nothing doubled.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MongoClient } from 'mongodb';
import { startLocalStack, findFreePort } from '../../../src/stack';
import { COLLECTIONS, BUCKETS, KEYED_BLOBS } from '../../../src/storage/mongo';
import { TABLE_OF } from '../../../src/storage/import-mongo';
import { HALT_AFTER_ENV, IMPORT_META_KEY } from '../../../src/storage/import-ferretdb';
import type { Json } from '../../support/env';
import { ROOT, startServiceProcess, StackEnv, StartedService } from '../../support/service';

jest.setTimeout(600_000);

/** User JSON that a re-encoding would change: `$` and `.` keys, spaces in keys, nesting, key order. */
const AWKWARD = { zeta: 1, $set: { 'a.b': [[1, { ' x ': null }]] }, alpha: 'ü', n: 1.5e300 };
const FILE = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(300_000, 'q'), Buffer.from('\n%%EOF\n')]);
const EMBEDDED = { DATABASE_ENGINE: 'embedded', MONGODB_URI: '' };

async function call(base: string, method: string, p: string, key: string, body?: unknown): Promise<{ status: number; body: Json; text: string }> {
  const res = await fetch(`${base}${p}`, {
    method, body: body === undefined ? undefined : JSON.stringify(body),
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
  });
  const text = await res.text();
  let parsed: Json;
  try { parsed = JSON.parse(text); } catch { parsed = undefined; }
  return { status: res.status, body: parsed, text };
}

async function ok(base: string, method: string, p: string, key: string, body?: unknown, status = 200): Promise<Json> {
  const r = await call(base, method, p, key, body);
  if (r.status !== status) throw new Error(`${method} ${p} answered ${r.status}: ${r.text}`);
  return r.body;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** What the FerretDB-era service held, as its API answered and as its collections counted. */
interface Era {
  env: StackEnv;
  accountKey: string;
  d1: string;
  d2: string;
  oldD2: string;
  fileId: string;
  directedId: string;
  /** Path (and the key that reads it) → the response text. */
  answers: Array<{ path: string; key: string; text: string }>;
  counts: Record<string, number>;
  blobs: number;
}

let era: Era;
let copyDir: string;

/** Record counts per embedded table and blob count of the FerretDB files of a stopped service's DATA_DIR. */
async function ferretdbCounts(dataDir: string): Promise<{ counts: Record<string, number>; blobs: number }> {
  const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const stack = await startLocalStack({ rootDir: ROOT, dataDir, mongo: { port: await findFreePort() }, blobs: { port: await findFreePort() }, logger: silent });
  const records = new MongoClient(stack.mongoUri as string);
  const blobs = new MongoClient(stack.blobsUri as string);
  try {
    const counts: Record<string, number> = {};
    for (const [key, name] of Object.entries(COLLECTIONS) as Array<[keyof typeof COLLECTIONS, string]>) {
      counts[TABLE_OF[key]] = await records.db('sentinel').collection(name).countDocuments();
    }
    const b = blobs.db('sentinel_blobs');
    let n = await b.collection(`${KEYED_BLOBS.scanUploads}_files`).countDocuments();
    for (const bucket of Object.values(BUCKETS)) n += await b.collection(`${bucket}.files`).countDocuments();
    return { counts, blobs: n };
  } finally {
    await records.close();
    await blobs.close();
    await stack.stop();
  }
}

function embeddedCounts(dataDir: string): { counts: Record<string, number>; blobs: number; state: Json } {
  const db = new Database(path.join(dataDir, 'db', 'records.sqlite'), { readonly: true });
  try {
    const counts: Record<string, number> = {};
    for (const table of Object.values(TABLE_OF)) counts[table] = (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(IMPORT_META_KEY) as { value: string } | undefined;
    const blobDir = path.join(dataDir, 'db', 'blobs');
    const blobs = fs.readdirSync(blobDir).filter((d) => d !== 'tmp').reduce((n, d) => n + fs.readdirSync(path.join(blobDir, d)).length, 0);
    return { counts, blobs, state: row && JSON.parse(row.value) };
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  const s = await startServiceProcess({ extraEnv: { DATABASE_ENGINE: 'mongodb', MONGODB_URI: '' } });
  const base = s.env.baseUrl;
  try {
    const acct = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'account', 'create', '--name', 'before', '--plan', 'pro'], {
      cwd: ROOT, env: { ...process.env, ...s.env.env }, encoding: 'utf8',
    })) as { apiKey: string };
    const key = acct.apiKey;
    const bulk = await ok(base, 'POST', '/api/entities/bulk', key, { entities: [{ name: 'd1', tags: ['t'] }, { name: 'd2' }], metadata: AWKWARD });
    const d1 = bulk.results[0].apiKey as string;
    const oldD2 = bulk.results[1].apiKey as string;
    const d2 = (await ok(base, 'POST', '/api/entities/d2/keys/rotate', key)).apiKey as string;
    const messageIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const data = i === 0 ? AWKWARD : { i };
      messageIds.push((await ok(base, 'POST', '/api/entities/message', d1, { msg_type: 'publish', data, context: { tags: ['m'] }, timestamp: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() })).content);
    }
    const directedId = (await ok(base, 'POST', '/api/entities/message', d1, { msg_type: 'publish', data: { cmd: 'on' }, dest: 'd2' })).content as string;
    await ok(base, 'PATCH', '/api/entities/status-table', d1, AWKWARD);
    const scan = await ok(base, 'POST', '/api/scan/payload', key, { payload: 'hello from before', label: 'notes.md' });
    const profile = await ok(base, 'POST', '/api/account/profiles', key, { name: 'quiet', suppressedEngines: ['yara'] }, 201);
    const wf = (await ok(base, 'POST', '/api/workflows', key, { name: 'big', nodes: [{ id: 'big', type: 'transform', config: { expression: '$pad("", 300000, "x")' } }], edges: [] }, 201)).id as string;
    const runId = (await ok(base, 'POST', `/api/workflows/${wf}/run`, key, {}, 202)).runId as string;
    const ran = await until('the workflow run', async () => {
      const run = await ok(base, 'GET', `/api/workflows/runs/${runId}`, key);
      return run.status === 'running' || run.status === 'queued' ? undefined : run.status as string;
    });
    expect(ran).toBe('completed');
    const form = new FormData();
    form.append('dest', 'd2');
    form.append('file', new Blob([FILE]), 'report.pdf');
    const sent = await fetch(`${base}/api/entities/files`, { method: 'POST', headers: { authorization: `Bearer ${d1}` }, body: form });
    expect(sent.status).toBe(202);
    const fileId = ((await sent.json()) as { id: string }).id;
    const transferred = await until('the file transfer', async () => {
      const f = await ok(base, 'GET', `/api/entities/files/${fileId}`, d1);
      return f.status === 'scanning' ? undefined : f.status as string;
    });
    expect(transferred).toBe('delivered');

    const reads: Array<[string, string]> = [
      ['/api/entities', key], ['/api/entities/d1', key], ['/api/entities/d1/status-table', key], ['/api/entities/me', d2],
      ['/api/entities/messages?limit=100', key], ...messageIds.map((id): [string, string] => [`/api/entities/messages/${id}`, key]),
      ['/api/account/history', key], [`/api/account/history/${scan.scanId}`, key], [`/api/account/profiles/${profile.id}`, key], ['/api/roles', key],
      ['/api/workflows', key], [`/api/workflows/${wf}`, key], [`/api/workflows/${wf}/runs`, key], [`/api/workflows/runs/${runId}`, key],
      [`/api/workflows/runs/${runId}/outputs/big`, key], [`/api/entities/files/${fileId}`, d1],
    ];
    const answers: Era['answers'] = [];
    for (const [p, k] of reads) {
      const r = await call(base, 'GET', p, k);
      expect({ path: p, status: r.status }).toEqual({ path: p, status: 200 });
      answers.push({ path: p, key: k, text: r.text });
    }
    expect(JSON.stringify((await ok(base, 'GET', `/api/entities/messages/${messageIds[0]}`, key)).data)).toBe(JSON.stringify(AWKWARD));
    await s.stop({ keepData: true });
    const { counts, blobs } = await ferretdbCounts(s.env.dataDir);
    era = { env: s.env, accountKey: key, d1, d2, oldD2, fileId, directedId, answers, counts, blobs };
  } catch (err) {
    await s.stop();
    throw err;
  }
  // The second case imports a copy of the same FerretDB-era DATA_DIR.
  copyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sentinel-import-copy-'));
  fs.cpSync(era.env.dataDir, copyDir, { recursive: true });
});

afterAll(() => {
  for (const d of [era?.env.dataDir, copyDir]) if (d && process.env.KEEP_TEST_DATA !== '1') fs.rmSync(d, { recursive: true, force: true });
});

/** The embedded service on `dataDir` holds what the FerretDB-era one did, each record once. */
async function expectEverythingOnce(s: StartedService): Promise<void> {
  const base = s.env.baseUrl;
  const now = embeddedCounts(s.env.dataDir);
  expect(now.state).toMatchObject({ state: 'finished' });
  expect(now.counts).toEqual(era.counts);
  expect(now.blobs).toBe(era.blobs);
  expect(era.counts.messages).toBeGreaterThanOrEqual(7);
  expect(era.blobs).toBeGreaterThanOrEqual(2);
  for (const a of era.answers) expect({ path: a.path, text: (await call(base, 'GET', a.path, a.key)).text }).toEqual({ path: a.path, text: a.text });
  // The directed message is delivered once, the rotated-out key stays refused, the file's bytes are whole.
  const polled = await ok(base, 'GET', '/api/entities/check_messages', era.d2);
  expect(polled.messages.map((m: Json) => m.id)).toEqual([era.directedId]);
  expect((await ok(base, 'GET', '/api/entities/check_messages', era.d2)).messages).toBeNull();
  expect((await call(base, 'GET', '/api/entities/me', era.oldD2)).status).toBe(401);
  const file = await fetch(`${base}/api/entities/files/download/${era.fileId}`, { headers: { authorization: `Bearer ${era.d2}` } });
  expect(file.status).toBe(200);
  expect(createHash('sha256').update(Buffer.from(await file.arrayBuffer())).digest('hex')).toBe(createHash('sha256').update(FILE).digest('hex'));
  // Something new is stored beside the imported data.
  expect((await call(base, 'POST', '/api/entities/message', era.d1, { msg_type: 'publish', data: { after: true } })).status).toBe(200);
}

const importLines = (logFile: string): string[] => fs.readFileSync(logFile, 'utf8').split('\n').filter((l) => l.includes("imported the earlier version's data"));

test('the first start on the embedded engine imports everything, once, and keeps the old directories', async () => {
  const s = await startServiceProcess({ reuse: era.env, extraEnv: EMBEDDED });
  try {
    await expectEverythingOnce(s);
    expect(importLines(s.env.logFile)).toHaveLength(1);
    expect(importLines(s.env.logFile)[0]).toContain('ferretdb and ferretdb-blobs are left in DATA_DIR as they were');
    for (const d of ['ferretdb', 'ferretdb-blobs']) expect(fs.readdirSync(path.join(s.env.dataDir, d)).length).toBeGreaterThan(0);
  } finally {
    await s.stop({ keepData: true });
  }
});

test('an import killed with SIGKILL part-way finishes at the next start, nothing lost or doubled', async () => {
  const env = { ...process.env, ...era.env.env, ...EMBEDDED, DATA_DIR: copyDir, [HALT_AFTER_ENV]: '3' };
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'main.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, signal) => r(signal)));
  try {
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => { out += c.toString('utf8'); });
    await until('the import to halt', async () => {
      if (child.exitCode !== null) throw new Error(`the service exited before the import halted:\n${out.slice(-5000)}`);
      return /import halted after \d+ records/.test(out) ? true : undefined;
    });
    const part = embeddedCounts(copyDir);
    const copied = Object.values(part.counts).reduce((a, b) => a + b, 0);
    expect(part.state).toMatchObject({ state: 'running', pid: child.pid });
    expect(copied).toBeGreaterThanOrEqual(3);
    expect(copied).toBeLessThan(Object.values(era.counts).reduce((a, b) => a + b, 0));
  } finally {
    child.kill('SIGKILL');
  }
  expect(await exited).toBe('SIGKILL');

  const s = await startServiceProcess({ reuse: { ...era.env, dataDir: copyDir, logFile: path.join(copyDir, 'service.log') }, extraEnv: EMBEDDED });
  try {
    await expectEverythingOnce(s);
  } finally {
    await s.stop({ keepData: true });
  }
});
