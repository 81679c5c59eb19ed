/** The file-transfer store's contract, records and stored bytes, on both engines (docs/contract.md §11). */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Binary, MongoClient, ObjectId } from 'mongodb';
import { forEachEngine, newTenant } from '../../../support/engines';
import type { FileRecord } from '../../../../src/files/records';

const file = (accountId: string, n: number, over: Partial<FileRecord> = {}): FileRecord => ({
  _id: `f${n}-${accountId}`, accountId, source: 'cam', dest: 'hub', kind: 'file', filename: 'x.bin', size: 3, sha256: 'h', contentType: 'application/octet-stream',
  tags: [], meta: '{"$k":[1]}', status: 'delivered', scanId: 's', requestId: 'r', createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
  expiresAt: new Date(Date.UTC(2026, 0, 2, 0, 0, n)), ...over,
});

const drain = async (r: Readable | undefined): Promise<string | undefined> => {
  if (!r) return undefined;
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
};

forEachEngine(({ spec, stores }) => {
  test('records: tenant-scoped find, inbox oldest first, gallery newest first by sender, expiry', async () => {
    const acct = newTenant();
    for (const n of [2, 1, 3]) await stores().files.insert(file(acct, n));
    await stores().files.insert(file(acct, 4, { status: 'scanning' }));
    for (const n of [5, 6, 7]) await stores().files.insert(file(acct, n, { kind: 'clip', dest: undefined, source: n === 6 ? 'other' : 'cam' }));
    expect(await stores().files.find(newTenant(), file(acct, 1)._id)).toBeNull();
    expect((await stores().files.find(acct, file(acct, 1)._id))?.meta).toBe('{"$k":[1]}');
    expect((await stores().files.inbox(acct, 'hub', 10)).map((f) => f._id)).toEqual([1, 2, 3].map((n) => file(acct, n)._id));
    expect((await stores().files.clips(acct, { offset: 0, limit: 10 })).map((f) => f._id)).toEqual([7, 6, 5].map((n) => file(acct, n)._id));
    expect((await stores().files.clips(acct, { source: 'cam', offset: 1, limit: 10 })).map((f) => f._id)).toEqual([file(acct, 5)._id]);
    const expired = await stores().files.expiredIds(new Date(Date.UTC(2026, 0, 2, 0, 0, 2)), 100);
    expect(expired).toEqual(expect.arrayContaining([file(acct, 1)._id, file(acct, 2)._id]));
    expect(expired).not.toContain(file(acct, 3)._id);
    await stores().files.remove(file(acct, 1)._id);
    expect(await stores().files.findById(file(acct, 1)._id)).toBeNull();
  });

  test('a transition happens once: of two concurrent downloads exactly one moves the file', async () => {
    const acct = newTenant();
    await stores().files.insert(file(acct, 1));
    const at = new Date(9);
    const moved = await Promise.all([1, 2].map(() => stores().files.transition(file(acct, 1)._id, 'delivered', { status: 'downloaded', downloadedAt: at })));
    expect(moved.sort()).toEqual([false, true]);
    expect(await stores().files.findById(file(acct, 1)._id)).toMatchObject({ status: 'downloaded', downloadedAt: at });
    await stores().files.insert(file(acct, 2, { status: 'scanning' }));
    await stores().files.setVerdict(file(acct, 2)._id, { score: 1, threatLevel: 'low', primaryThreat: 'none' }, 'image/png');
    expect(await stores().files.findById(file(acct, 2)._id)).toMatchObject({ contentType: 'image/png', verdict: { score: 1 } });
  });

  test('download claims: one holder among concurrent claimers; renewed, released, taken over once expired', async () => {
    const id = `claim-${newTenant()}`;
    const now = new Date(Date.UTC(2026, 0, 1));
    const later = (s: number) => new Date(now.getTime() + s * 1000);
    const got = await Promise.all(Array.from({ length: 10 }, (_, i) => stores().files.claimDownload(id, `t${i}`, later(30), now)));
    expect(got.filter(Boolean)).toHaveLength(1);
    const holder = `t${got.indexOf(true)}`;
    await stores().files.releaseDownloadClaim(id, 'not-the-holder');
    expect(await stores().files.claimDownload(id, 'x', later(30), later(10))).toBe(false);
    await stores().files.renewDownloadClaim(id, holder, later(60));
    expect(await stores().files.claimDownload(id, 'x', later(90), later(45))).toBe(false);
    expect(await stores().files.claimDownload(id, 'late', later(120), later(61))).toBe(true);
    await stores().files.releaseDownloadClaim(id, 'late');
    expect(await stores().files.claimDownload(id, 'next', later(200), later(62))).toBe(true);
    await stores().files.remove(id);
    expect(await stores().files.claimDownload(id, 'after-remove', later(300), later(63))).toBe(true);
  });

  test('bytes: saved from a stream, sized, read whole and by range, replaced, deleted idempotently', async () => {
    const id = `blob-${newTenant()}`;
    const content = Buffer.from('0123456789'.repeat(300_000)); // 3 MB: several GridFS chunks
    expect(await stores().files.saveBlob(id, 'raw', Readable.from([content.subarray(0, 1_000_000), content.subarray(1_000_000)]))).toBe(content.length);
    expect(await stores().files.blobSize(id, 'raw')).toBe(content.length);
    expect((await stores().files.readBlob(id, 'raw'))?.equals(content)).toBe(true);
    expect(await drain(await stores().files.openBlob(id, 'raw', { start: 1_048_570, end: 1_048_580 }))).toBe(content.subarray(1_048_570, 1_048_581).toString());
    expect(await stores().files.saveBlob(id, 'raw', Readable.from([Buffer.from('new')]))).toBe(3);
    expect(await drain(await stores().files.openBlob(id, 'raw'))).toBe('new');
    expect(await stores().files.blobSize(id, 'video')).toBeUndefined();
    await stores().files.deleteBlob(id, 'raw');
    await stores().files.deleteBlob(id, 'raw');
    expect(await stores().files.openBlob(id, 'raw')).toBeUndefined();
    expect(await stores().files.readBlob(id, 'raw')).toBeUndefined();
  });

  // Found by an outside probe: a process killed mid-upload left its bytes (GridFS chunks without a
  // files document; on the embedded store a temporary file) for good.
  test('bytes a killed write left behind are swept once a day old; stored blobs and young writes stay', async () => {
    const id = `keep-${newTenant()}`;
    await stores().files.saveBlob(id, 'raw', Readable.from([Buffer.from('kept')]));
    const now = Date.now();
    const s = spec();
    if (s.engine === 'embedded') {
      const tmp = path.join(s.dataDir, 'db', 'blobs', 'tmp');
      fs.writeFileSync(path.join(tmp, 'killed-old'), 'x');
      fs.utimesSync(path.join(tmp, 'killed-old'), new Date(now - 2 * 86_400_000), new Date(now - 2 * 86_400_000));
      fs.writeFileSync(path.join(tmp, 'writing-now'), 'x');
      expect(await stores().files.sweepLeftoverBytes(new Date(now - 86_400_000))).toBe(1);
      expect(fs.readdirSync(tmp)).toContain('writing-now');
      expect(fs.readdirSync(tmp)).not.toContain('killed-old');
      fs.rmSync(path.join(tmp, 'writing-now'));
    } else {
      const client = await new MongoClient(s.blobUri).connect();
      try {
        const chunks = client.db(s.blobDb).collection('file_blobs.chunks');
        const old = ObjectId.createFromTime(Math.floor((now - 2 * 86_400_000) / 1000));
        const young = new ObjectId();
        await chunks.insertMany([0, 1, 2].map((n) => ({ files_id: old, n, data: new Binary(Buffer.alloc(10, n)) })));
        await chunks.insertOne({ files_id: young, n: 0, data: new Binary(Buffer.alloc(10)) });
        expect(await stores().files.sweepLeftoverBytes(new Date(now - 86_400_000))).toBe(3);
        expect(await chunks.countDocuments({ files_id: old })).toBe(0);
        expect(await chunks.countDocuments({ files_id: young })).toBe(1);
        await chunks.deleteMany({ files_id: young });
      } finally {
        await client.close();
      }
    }
    expect(await drain(await stores().files.openBlob(id, 'raw'))).toBe('kept');
  });

  test('a stream that fails leaves no bytes behind', async () => {
    const id = `blob-${newTenant()}`;
    const failing = new Readable({ read() { this.push(Buffer.alloc(1000, 1)); this.destroy(new Error('client went away')); } });
    await expect(stores().files.saveBlob(id, 'raw', failing)).rejects.toThrow('client went away');
    expect(await stores().files.blobSize(id, 'raw')).toBeUndefined();
  });
});
