import { chunkedSource, GRIDFS_CHUNK_BYTES } from '../../../src/storage/gridfs';

describe('chunkedSource', () => {
  it('hands a buffer over one GridFS chunk per write, the last one short, bytes unchanged', async () => {
    const content = Buffer.alloc(2 * GRIDFS_CHUNK_BYTES + 123);
    for (let i = 0; i < content.length; i++) content[i] = (i * 31) % 251;
    const slices: Buffer[] = [];
    for await (const slice of chunkedSource(content)) slices.push(slice as Buffer);
    expect(slices.map((s) => s.length)).toEqual([GRIDFS_CHUNK_BYTES, GRIDFS_CHUNK_BYTES, 123]);
    expect(Buffer.concat(slices).equals(content)).toBe(true);
  });

  it('gives an empty buffer as no writes at all', async () => {
    const slices: unknown[] = [];
    for await (const slice of chunkedSource(Buffer.alloc(0))) slices.push(slice);
    expect(slices).toEqual([]);
  });
});
