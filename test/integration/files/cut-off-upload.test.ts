/**
 * An upload whose client goes away mid-body (an outside tester's report): a multipart POST that
 * declares 5 MB, sends the form's fields and 1 MB of the file, and closes. The service left a 1 MB
 * temporary file under DATA_DIR/db/blobs/tmp and an open descriptor on it per such request, until
 * restart, and the request never ended. It must end at once and keep nothing: no temporary file,
 * no descriptor, no record, no scan charged; and on MongoDB no GridFS chunks.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { CommandStartedEvent, MongoClient } from 'mongodb';
import { MongoFileStore } from '../../../src/files/store/mongo';
import { streamMultipartUpload } from '../../../src/http/multipart';
import { GRIDFS_CHUNK_BYTES } from '../../../src/storage/gridfs';
import { BUCKETS, bucketsOf } from '../../../src/storage/mongo';
import { openFdsInto, sendCutOffUpload, settledWithin, until } from '../../support/cut-off-upload';
import { withStackRecords } from '../../support/db';
import { forEachEngine } from '../../support/engines';
import { api, newAccount, stack } from '../../support/env';
import { fleet } from '../messaging/helpers';

const blobsTmp = (dataDir: string) => path.join(dataDir, 'db', 'blobs', 'tmp');

/** Requests of one POST route answered so far (every status): one that never ends is never counted. */
async function answered(route: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${stack().metricsPort}/metrics`)).text();
  let n = 0;
  for (const [, labels, count] of text.matchAll(/^http_request_duration_seconds_count\{([^}]*)\} (\d+)$/gm)) {
    if (labels.includes('method="POST"') && labels.includes(`route="${route}"`)) n += Number(count);
  }
  return n;
}

const scansUsed = async (accountKey: string): Promise<number> => (await api('GET', '/api/account/usage', { key: accountKey })).body.scans_used;

describe('an upload whose client goes away mid-body', () => {
  it.each([
    ['closes', (s: Socket) => s.end()],
    ['resets', (s: Socket) => s.resetAndDestroy()],
  ])('file transfer: the client %s the connection; no temporary file or open descriptor stays, nothing is kept', async (_label, close) => {
    const f = await fleet('pro', ['a', 'b']);
    const tmp = blobsTmp(stack().dataDir);
    const before = new Set(readdirSync(tmp));
    const counted = await answered('/api/entities/files');
    const socket = await sendCutOffUpload(stack().port, '/api/entities/files', { fields: { dest: 'b' }, headers: { Authorization: `Bearer ${f.devices.a.apiKey}` } });
    // The bytes sent so far reach a temporary file, which the service holds open: the report's situation.
    let mine: string[] = [];
    expect(await until(() => (mine = readdirSync(tmp).filter((n) => !before.has(n))).length > 0, 10_000)).toBe(true);
    const left = () => mine.filter((n) => existsSync(path.join(tmp, n)));
    // Also a descriptor on a file deleted while open ("... (deleted)").
    const held = () => openFdsInto(stack().pid, tmp).filter((link) => mine.some((n) => link.startsWith(path.join(tmp, n))));
    close(socket);
    await until(() => left().length === 0 && held().length === 0, 5000);
    expect(left()).toEqual([]);
    expect(held()).toEqual([]);
    // The request ended (its answer has nobody to read it) and kept nothing: no record, no scan charged.
    expect(await until(async () => (await answered('/api/entities/files')) > counted, 5000)).toBe(true);
    expect(await withStackRecords(async ({ table }) => table('files').find('account_id = ?', [f.accountId]))).toEqual([]);
    expect(await scansUsed(f.apiKey)).toBe(0);
  });

  it('scan upload: the client closes the connection mid-file; the request ends and no scan is charged', async () => {
    const acct = await newAccount('pro');
    const counted = await answered('/api/scan');
    const socket = await sendCutOffUpload(stack().port, '/api/scan', { headers: { Authorization: `Bearer ${acct.apiKey}` } });
    // Time for the route to start reading the file (a client gone before that is covered in the unit tests).
    await new Promise((res) => setTimeout(res, 500));
    socket.end();
    expect(await until(async () => (await answered('/api/scan')) > counted, 5000)).toBe(true);
    expect(await scansUsed(acct.apiKey)).toBe(0);
  });
});

/**
 * The same cut-off upload into each engine's stored bytes (the stack runs one engine): the file part
 * is read as POST /api/entities/files reads it, and the engine's leftovers are counted, the
 * embedded engine's temporary files and GridFS's chunks.
 */
forEachEngine(({ spec, stores }) => {
  let server: http.Server;
  let handle: (req: IncomingMessage) => void = () => undefined;
  beforeAll(async () => {
    server = http.createServer((req) => handle(req));
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((res) => server.close(res));
  });

  async function leftovers(): Promise<number> {
    const s = spec();
    if (s.engine === 'embedded') return readdirSync(blobsTmp(s.dataDir)).length;
    const client = await new MongoClient(s.blobUri, { maxPoolSize: 1 }).connect();
    try {
      return await client.db(s.blobDb).collection(`${BUCKETS.fileBlobs}.chunks`).countDocuments();
    } finally {
      await client.close();
    }
  }

  test('an upload cut off mid-body leaves none of its bytes stored', async () => {
    const id = `cut-${Date.now()}`;
    const started = new Promise<{ upload: Promise<unknown> }>((resolve) => {
      handle = (req) => {
        const upload = streamMultipartUpload(req, 50 * 1024 * 1024, 'too big', ['dest'], (file) => stores().files.saveBlob(id, 'raw', file));
        upload.catch(() => undefined);
        resolve({ upload });
      };
    });
    // 1.5 MB: more than one GridFS chunk.
    const socket = await sendCutOffUpload((server.address() as AddressInfo).port, '/upload', { fields: { dest: 'b' }, fileBytes: 1536 * 1024 });
    const { upload } = await started;
    expect(await until(async () => (await leftovers()) > 0, 10_000)).toBe(true);
    socket.end();
    expect(await settledWithin(upload, 5000)).toEqual({ settled: 'rejected', err: expect.objectContaining({ status: 400, code: 'invalid_upload' }) });
    await until(async () => (await leftovers()) === 0, 5000);
    expect(await leftovers()).toBe(0);
    expect(await stores().files.blobSize(id, 'raw')).toBeUndefined();
  });
});

/**
 * A cut-off upload usually finds a GridFS chunk insert in flight (the upload waits on each one).
 * The service's blob pool has several connections (2 on the local stack, 50 otherwise), so the
 * deletion of the failed upload's chunks can run beside that insert and miss the chunk it adds.
 */
test('MongoDB with a pool of connections: an upload cut off while a chunk insert is in flight leaves no chunk', async () => {
  const client = await new MongoClient(`mongodb://127.0.0.1:${stack().mongoBlobPort}/`, { maxPoolSize: 2, monitorCommands: true }).connect();
  const db = client.db(`cut_${randomBytes(6).toString('hex')}`);
  const chunks = db.collection(`${BUCKETS.fileBlobs}.chunks`);
  try {
    const store = new MongoFileStore(db, db, bucketsOf(db).fileBlobs);
    for (let i = 0; i < 5; i++) {
      const source = new PassThrough();
      // The client goes away the moment the first chunk is sent to the server.
      const cutOff = (e: CommandStartedEvent) => {
        if (e.commandName === 'insert' && e.command.insert === chunks.collectionName) source.destroy(new Error('client went away'));
      };
      client.on('commandStarted', cutOff);
      const saving = store.saveBlob(`cut-${i}`, 'raw', source);
      source.write(Buffer.alloc(GRIDFS_CHUNK_BYTES + 1, i));
      await expect(saving).rejects.toThrow('client went away');
      client.off('commandStarted', cutOff);
    }
    // Time for an insert still in flight to land.
    await new Promise((res) => setTimeout(res, 1000));
    expect(await chunks.countDocuments()).toBe(0);
  } finally {
    await db.dropDatabase();
    await client.close();
  }
});
