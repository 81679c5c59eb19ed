/**
 * On the MongoDB engine's local stack (DATABASE_ENGINE=mongodb without MONGODB_URI) the stored
 * bytes live on a server of their own (the blobs FerretDB). A data directory from a version that
 * kept MONGODB_BLOB_DB in the records' FerretDB is moved over when the service connects, and
 * nothing in it is lost; the move survives being interrupted. MongoDB-only mechanisms: they run
 * against the test stack's FerretDB pair (the stand-in) and a service started on that engine.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Binary, GridFSBucket, MongoClient } from 'mongodb';
import { Config, loadConfig } from '../../../src/config';
import { connectStorage, moveDatabase } from '../../../src/storage/mongo';
import { stack } from '../../support/env';
import { startServiceProcess } from '../../support/service';

const DB = 'upgrade_test';
const BLOBS = 'upgrade_test_blobs';

function client(port: number): MongoClient {
  return new MongoClient(`mongodb://127.0.0.1:${port}/?maxPoolSize=1`);
}

/** The MongoDB engine's configuration on the test stack's FerretDB pair, as a local stack would have it. */
function mongoConfig(over: Record<string, string> = {}): Config {
  return loadConfig({ ...process.env, ...stack().env, DATABASE_ENGINE: 'mongodb', ...over });
}

async function upload(bucket: GridFSBucket, name: string, content: Buffer): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    bucket.openUploadStream(name).on('finish', () => resolve()).on('error', reject).end(content);
  });
}

async function download(bucket: GridFSBucket, name: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of bucket.openDownloadStreamByName(name)) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

describe('the blobs server of the local stack', () => {
  const main = client(stack().mongoPort);
  const blobs = client(stack().mongoBlobPort);

  beforeAll(async () => {
    await main.connect();
    await blobs.connect();
  });

  afterAll(async () => {
    await main.db(BLOBS).dropDatabase();
    await blobs.db(BLOBS).dropDatabase();
    await main.db('move_src').dropDatabase();
    await blobs.db('move_dst').dropDatabase();
    await main.close();
    await blobs.close();
  });

  it('is a separate server: what the service stores as bytes is there, not beside the records', async () => {
    const config = mongoConfig();
    const storage = await connectStorage(config);
    try {
      const name = `separate-${Date.now()}`;
      await upload(storage.buckets.fileBlobs, name, Buffer.from('bytes'));
      expect(await blobs.db(config.mongodbBlobDb).collection('file_blobs.files').countDocuments({ filename: name })).toBe(1);
      expect(await main.db(config.mongodbBlobDb).collection('file_blobs.files').countDocuments({ filename: name })).toBe(0);
      for (const f of await storage.buckets.fileBlobs.find({ filename: name }).toArray()) await storage.buckets.fileBlobs.delete(f._id);
    } finally {
      await storage.close();
    }
  });

  it('moves a database written by the older layout on connect, byte for byte', async () => {
    const old = main.db(BLOBS);
    const file = randomBytes(3 * 1024 * 1024 + 17);
    await upload(new GridFSBucket(old, { bucketName: 'file_blobs' }), 'f1', file);
    await old.collection('scan_uploads_files').insertOne({ _id: 'u1' as never, length: 5, chunks: 1 });
    await old.collection('scan_uploads_chunks').insertOne({ _id: 'u1:0' as never, data: new Binary(Buffer.from('hello')) });

    const config = mongoConfig({ MONGODB_DB: DB, MONGODB_BLOB_DB: BLOBS });
    const storage = await connectStorage(config);
    try {
      expect(await download(storage.buckets.fileBlobs, 'f1')).toEqual(file);
      expect(await storage.blobDb.collection('scan_uploads_chunks').findOne({ _id: 'u1:0' as never })).toMatchObject({ data: new Binary(Buffer.from('hello')) });
    } finally {
      await storage.close();
    }
    expect(await old.listCollections().toArray()).toEqual([]);
    expect((await blobs.db(BLOBS).listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort())
      .toEqual(['file_blobs.chunks', 'file_blobs.files', 'scan_uploads_chunks', 'scan_uploads_files']);
  });

  it('finishes a move that was interrupted part-way, without losing or doubling a document', async () => {
    const from = main.db('move_src');
    const to = blobs.db('move_dst');
    const docs = Array.from({ length: 20 }, (_, i) => ({ _id: `d${i}` as never, data: new Binary(randomBytes(1000)) }));
    await from.collection('c').insertMany(docs);
    // An earlier run copied the first 7 and died before dropping the source.
    await to.collection('c').insertMany(docs.slice(0, 7));
    expect(await moveDatabase(from, to)).toBe(20);
    const moved = await to.collection('c').find({}).sort({ _id: 1 }).toArray();
    expect(moved).toHaveLength(20);
    expect(moved).toEqual([...docs].sort((a, b) => String(a._id).localeCompare(String(b._id))));
    expect(await from.listCollections().toArray()).toEqual([]);
    // Nothing left to move: a second run is a no-op.
    expect(await moveDatabase(from, to)).toBe(0);
  });
});

describe('/healthz and the blobs server', () => {
  it('names the blobs FerretDB, and answers 503 naming it once it is gone', async () => {
    const svc = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn', DATABASE_ENGINE: 'mongodb' } });
    try {
      const health = async () => {
        const res = await fetch(`${svc.env.baseUrl}/healthz`);
        return { status: res.status, body: (await res.json()) as { parts: Record<string, { ok: boolean; detail?: string }> } };
      };
      const up = await health();
      expect(up.status).toBe(200);
      expect(up.body.parts.blobs).toEqual({ ok: true });
      const { pid } = JSON.parse(readFileSync(path.join(svc.env.dataDir, 'run', 'blobs.pid'), 'utf8')) as { pid: number };
      process.kill(pid, 'SIGKILL');
      let down = await health();
      for (let i = 0; i < 50 && down.status === 200; i++) {
        await new Promise((res) => setTimeout(res, 100));
        down = await health();
      }
      expect(down.status).toBe(503);
      expect(down.body.parts.blobs.ok).toBe(false);
      expect(down.body.parts.blobs.detail).toMatch(/blobs FerretDB/);
      expect(down.body.parts.mongodb).toEqual({ ok: true });
    } finally {
      await svc.stop();
    }
  });

  it('answers 503 in bounded time when Temporal stops answering, and 200 once it answers again', async () => {
    const svc = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
    const { pid } = JSON.parse(readFileSync(path.join(svc.env.dataDir, 'run', 'temporal.pid'), 'utf8')) as { pid: number };
    try {
      const health = async () => {
        const res = await fetch(`${svc.env.baseUrl}/healthz`, { signal: AbortSignal.timeout(60_000) });
        return { status: res.status, body: (await res.json()) as { parts: Record<string, { ok: boolean; detail?: string }> } };
      };
      const healthy = async () => {
        let h = await health();
        for (let i = 0; i < 50 && h.status !== 200; i++) {
          await new Promise((res) => setTimeout(res, 200));
          h = await health();
        }
        return h.status;
      };
      expect(await healthy()).toBe(200);
      // Frozen, not gone: its connections stay open and a call to it never returns by itself.
      process.kill(pid, 'SIGSTOP');
      // kill() returns before a busy machine has stopped the process; an answer it sent before
      // stopping can still arrive, so the check is asked a few times (each answer is bounded).
      let down = await health();
      for (let i = 0; i < 5 && down.status === 200; i++) {
        await new Promise((res) => setTimeout(res, 200));
        down = await health();
      }
      expect(down.status).toBe(503);
      expect(down.body.parts.temporal).toEqual({ ok: false, detail: 'no answer within 5 s' });
      process.kill(pid, 'SIGCONT');
      expect(await healthy()).toBe(200);
    } finally {
      try { process.kill(pid, 'SIGCONT'); } catch { /* already gone */ }
      await svc.stop();
    }
  });
});
