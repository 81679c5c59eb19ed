/**
 * A MongoDB-era database moves into the embedded store (docs/contract.md §11): records and stored
 * bytes arrive equal, user JSON byte-equal (documents from before it was kept as text too), and an
 * import run again (as after an interruption) adds nothing twice.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { Readable } from 'node:stream';
import { EngineSpec, freshEngine, newTenant, openEngine, OpenEngine } from '../../support/engines';
import { stack } from '../../support/env';
import { ROOT } from '../../support/service';
import { importFromMongo } from '../../../src/storage/import-mongo';
import type { Database } from '../../../src/storage/engine';

const AWKWARD = { $set: 1, 'a.b': [[1, { ' x ': null }]] };

let from: { spec: EngineSpec; drop(): Promise<void> };
let to: { spec: EngineSpec; drop(): Promise<void> };
let mongo: OpenEngine;
let embedded: OpenEngine;
beforeAll(async () => {
  from = await freshEngine('mongodb', stack);
  to = await freshEngine('embedded', stack);
  mongo = await openEngine(from.spec);
  embedded = await openEngine(to.spec);
});
afterAll(async () => {
  await mongo?.close();
  await embedded?.close();
  await from?.drop();
  await to?.drop();
});

const run = () => {
  const m = mongo.database as Extract<Database, { engine: 'mongodb' }>;
  const e = embedded.database as Extract<Database, { engine: 'embedded' }>;
  return importFromMongo(m.mongo, e.embedded);
};

test('records, state and bytes arrive equal; a second run adds nothing', async () => {
  const acct = newTenant();
  const src = mongo.stores;
  await src.accounts.insertAccount({ _id: acct, name: 'n', plan: 'pro', region: 'local', entityCount: 2, createdAt: new Date(1000) });
  await src.entities.insertEntity({ _id: `${acct}/d1`, accountId: acct, name: 'd1', resourcePath: 'p', apiKeyId: 'k1', role: 'default', tags: ['t'], metadata: AWKWARD, online: false, statusTable: {}, createdAt: new Date(2000) });
  await src.messages.replaceStatusTable(acct, 'd1', AWKWARD);
  // An entity written before user JSON was stored as text: metadata and state native.
  const m = mongo.database as Extract<Database, { engine: 'mongodb' }>;
  await m.mongo.db.collection('entities').insertOne({ _id: `${acct}/old` as never, accountId: acct, name: 'old', resourcePath: 'p', apiKeyId: 'k2', role: 'default', tags: [], metadata: { floor: 2 }, online: false, statusTable: { on: true }, createdAt: new Date(3000) });
  for (let n = 0; n < 30; n++) {
    await src.messages.insertMessage({
      _id: `m${String(n).padStart(3, '0')}-${acct}`, accountId: acct, msgType: 'publish', source: 's', sourceName: 'd1', destination: null,
      data: n === 0 ? AWKWARD : { n }, tags: [], timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)), receivedAt: new Date(), validation: { result: 'skipped' }, bytes: 1,
    });
  }
  await src.messages.enqueue({ _id: `i-${acct}`, accountId: acct, dest: 'd1', queuedAt: new Date(), message: { id: 'i', msg_type: 'publish', data: AWKWARD, tags: [], source: 's', timestamp: 'x' } });
  const part = Buffer.from('0123456789'.repeat(150_000));
  await src.files.saveBlob(`f-${acct}`, 'raw', Readable.from([part]));
  const uploadId = await src.scans.saveUpload('u.bin', Buffer.from('upload bytes'));
  await src.scans.insertScan({ _id: `s-${acct}`, accountId: acct, requestId: 'r', status: 'pending', scanType: 'file' as never, filename: 'u.bin', size: 12, creditsUsed: 1, createdAt: new Date(), uploadId });
  const large = JSON.stringify({ big: 'x'.repeat(300_000) });
  await src.outputs.save(`run-${acct}`, 'n1', large);
  await src.counters.incrementUsage({ _id: `${acct}:2026-01`, accountId: acct, period: '2026-01', kind: 'month' }, 'scans', 7);

  const first = await run();
  expect(first.records.messages).toEqual({ read: 30, added: 30 });
  expect(first.records.entities).toEqual({ read: 2, added: 2 });
  expect(first.blobs).toEqual({ read: 3, added: 3 });

  const dst = embedded.stores;
  expect(await dst.accounts.findAccount(acct)).toEqual({ _id: acct, name: 'n', plan: 'pro', region: 'local', entityCount: 2, createdAt: new Date(1000) });
  expect(JSON.stringify((await dst.entities.findEntity(acct, 'd1'))?.metadata)).toBe(JSON.stringify(AWKWARD));
  expect(JSON.stringify(await dst.messages.getStatusTable(acct, 'd1'))).toBe(JSON.stringify(AWKWARD));
  expect(await dst.entities.findEntity(acct, 'old')).toMatchObject({ metadata: { floor: 2 }, statusTable: { on: true } });
  const page = await dst.messages.listPublished({ accountId: acct }, 0, 100);
  expect(page.map((x) => x._id)).toEqual((await src.messages.listPublished({ accountId: acct }, 0, 100)).map((x) => x._id));
  expect(JSON.stringify(page[page.length - 1].data)).toBe(JSON.stringify(AWKWARD));
  expect(JSON.stringify((await dst.messages.claimNext(acct, 'd1'))?.message.data)).toBe(JSON.stringify(AWKWARD));
  expect((await dst.files.readBlob(`f-${acct}`, 'raw'))?.equals(part)).toBe(true);
  const scan = await dst.scans.findScanById(`s-${acct}`);
  expect(scan?.uploadId).toBe(uploadId);
  expect((await dst.scans.readUpload(uploadId)).toString()).toBe('upload bytes');
  expect(await dst.outputs.load(`run-${acct}`, 'n1')).toBe(large);
  expect((await dst.counters.getUsage(`${acct}:2026-01`))?.scans).toBe(7);

  // Run again (an import interrupted and restarted): everything is read, nothing added twice.
  const again = await run();
  expect(again.records.messages).toEqual({ read: 30, added: 0 });
  expect(again.blobs).toEqual({ read: 3, added: 0 });
  const e = embedded.database as Extract<Database, { engine: 'embedded' }>;
  expect(e.embedded.db.prepare('SELECT count(*) AS n FROM messages').get()).toEqual({ n: 30 });
});

test('`npm run cli -- migrate` imports into the DATA_DIR of DATABASE_ENGINE=embedded, and says what it copied', async () => {
  const acct = newTenant();
  await mongo.stores.vault.put(acct, 'token', 'sealed', new Date(5));
  const spec = from.spec as Extract<EngineSpec, { engine: 'mongodb' }>;
  const dataDir = (to.spec as Extract<EngineSpec, { engine: 'embedded' }>).dataDir;
  const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'main.ts'), 'migrate', '--from', spec.uri, '--from-blobs', spec.blobUri], {
      cwd: ROOT, timeout: 120_000,
      env: { ...process.env, DATABASE_ENGINE: 'embedded', DATA_DIR: dataDir, MONGODB_DB: spec.db, MONGODB_BLOB_DB: spec.blobDb, MONGODB_URI: '', LOG_LEVEL: 'silent' },
    }, (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }));
  });
  expect(out).toMatchObject({ code: 0 });
  const result = JSON.parse(out.stdout);
  expect(result.records.vault).toEqual({ read: 1, added: 1 });
  expect(result.database).toBe(spec.db);
  // Sealed values came across as made with the source's secrets: the operator is told what to set.
  expect(result.warning).toMatch(/run this DATA_DIR's service with those two set to the source's values/);
  expect((await embedded.stores.vault.list(acct)).map((v) => v.valueSealed)).toEqual(['sealed']);

  // The database named in the URI is the one read (a probe's went unread, reported as all zeros).
  const byUri = await new Promise<{ code: number; stdout: string }>((resolve) => {
    const u = new URL(spec.uri);
    u.pathname = `/${spec.db}`;
    const b = new URL(spec.blobUri);
    b.pathname = `/${spec.blobDb}`;
    execFile(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'main.ts'), 'migrate', '--from', u.toString(), '--from-blobs', b.toString()], {
      cwd: ROOT, timeout: 120_000,
      env: { ...process.env, DATABASE_ENGINE: 'embedded', DATA_DIR: dataDir, MONGODB_DB: 'not-this-one', MONGODB_BLOB_DB: 'nor-this-one', MONGODB_URI: '', LOG_LEVEL: 'silent' },
    }, (err, stdout) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout }));
  });
  expect(byUri.code).toBe(0);
  expect(JSON.parse(byUri.stdout)).toMatchObject({ database: spec.db, records: { vault: { read: 1, added: 0 } } });
});
