/**
 * `_id`-keyed blobs (storage/keyed-blobs.ts, the MongoDB engine's deferred-scan uploads) on a
 * MongoDB-wire server, the test stack's stand-in (a database of this file's own): bytes come back
 * equal across chunk boundaries, each chunk is its own `<id>:<n>` document, and a delete leaves
 * nothing. The embedded engine keeps these bytes as files (storage/blob-files.ts).
 */
import { randomBytes } from 'node:crypto';
import { GRIDFS_CHUNK_BYTES } from '../../../src/storage/gridfs';
import { KeyedBlobs } from '../../../src/storage/keyed-blobs';
import { withDb } from '../../support/mongo';

const DB = 'keyed_blobs_test';

it('stores, reads back and deletes blobs of 0, 1 and several chunks', async () => {
  await withDb(async (db) => {
    const blobs = new KeyedBlobs(db, 'things');
    for (const size of [0, 10, GRIDFS_CHUNK_BYTES, 2 * GRIDFS_CHUNK_BYTES + 12345]) {
      const content = randomBytes(size);
      const id = await blobs.save(`f-${size}`, content);
      const chunkIds = (await db.collection('things_chunks').find({ _id: { $regex: `^${id}:` } as never }).toArray()).map((c) => c._id);
      expect(chunkIds.sort()).toEqual(Array.from({ length: Math.ceil(size / GRIDFS_CHUNK_BYTES) }, (_, n) => `${id}:${n}`).sort());
      expect(await db.collection('things_files').findOne({ _id: id as never })).toMatchObject({ filename: `f-${size}`, length: size });

      const shared = await blobs.read(id, (n) => Buffer.from(new SharedArrayBuffer(n)));
      expect(shared?.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(shared?.equals(content)).toBe(true);

      await blobs.delete(id);
      await blobs.delete(id); // a retried delete is a no-op
      expect(await blobs.read(id)).toBeUndefined();
      expect(await db.collection('things_files').countDocuments({ _id: id as never })).toBe(0);
      expect(await db.collection('things_chunks').countDocuments({ _id: { $regex: `^${id}:` } as never })).toBe(0);
    }
  }, DB);
});

it('refuses to hand back a blob that lost a chunk', async () => {
  await withDb(async (db) => {
    const blobs = new KeyedBlobs(db, 'things');
    const id = await blobs.save('broken', randomBytes(GRIDFS_CHUNK_BYTES + 1));
    await db.collection('things_chunks').deleteOne({ _id: `${id}:1` as never });
    await expect(blobs.read(id)).rejects.toThrow(/lacks chunk 1 of 2/);
    await blobs.delete(id);
    expect(await db.collection('things_files').countDocuments({ _id: id as never })).toBe(0);
  }, DB);
});
