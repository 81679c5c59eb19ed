/**
 * Bytes kept as chunk documents found by `_id` alone: a header `<id>` in `<name>_files` and chunks
 * `<id>:<n>` in `<name>_chunks`. GridFS finds a file's chunks by `files_id`; FerretDB v1 uses no
 * index but `_id`, so every GridFS download and delete decoded every chunk of every file in the
 * bucket (three pending 60 MB uploads: 160 MB of JSON read per download and again per delete).
 * Here each chunk is one indexed lookup. Used where a blob is written whole and read whole (scan
 * uploads); ranges and streams stay on GridFS.
 */
import { Binary, Collection, Db, ObjectId } from 'mongodb';
import { GRIDFS_CHUNK_BYTES } from './gridfs';

interface HeaderDoc { _id: string; filename: string; length: number; chunks: number; uploadDate: Date }
interface ChunkDoc { _id: string; data: Binary }

const chunkId = (id: string, n: number) => `${id}:${n}`;

export class KeyedBlobs {
  private readonly headers: Collection<HeaderDoc>;
  private readonly chunks: Collection<ChunkDoc>;

  constructor(db: Db, name: string) {
    this.headers = db.collection<HeaderDoc>(`${name}_files`);
    this.chunks = db.collection<ChunkDoc>(`${name}_chunks`);
  }

  /**
   * Stores `content` and returns its id. Chunks go one insert at a time (one write in flight per
   * blob) and the header last, so a blob with a header is whole; a failed save removes its chunks.
   */
  async save(filename: string, content: Buffer): Promise<string> {
    const id = new ObjectId().toHexString();
    const count = Math.ceil(content.length / GRIDFS_CHUNK_BYTES);
    let written = 0;
    try {
      for (; written < count; written++) {
        const at = written * GRIDFS_CHUNK_BYTES;
        await this.chunks.insertOne({ _id: chunkId(id, written), data: new Binary(content.subarray(at, at + GRIDFS_CHUNK_BYTES)) });
      }
      await this.headers.insertOne({ _id: id, filename, length: content.length, chunks: count, uploadDate: new Date() });
    } catch (err) {
      // The failed insert may have landed (a timeout after the write): remove it too.
      await this.deleteChunks(id, Math.min(written + 1, count)).catch(() => undefined);
      throw err;
    }
    return id;
  }

  /** The whole blob in memory from `alloc` (filled chunk by chunk); undefined when it is gone. */
  async read(id: string, alloc: (length: number) => Buffer = (n) => Buffer.alloc(n)): Promise<Buffer | undefined> {
    const header = await this.headers.findOne({ _id: id });
    if (!header) return undefined;
    const content = alloc(header.length);
    let at = 0;
    for (let n = 0; n < header.chunks; n++) {
      const chunk = await this.chunks.findOne({ _id: chunkId(id, n) });
      if (!chunk) throw new Error(`stored blob ${id} lacks chunk ${n} of ${header.chunks}`);
      const bytes = chunk.data.read(0, chunk.data.length());
      if (at + bytes.length > header.length) throw new Error(`stored blob ${id} is longer than its ${header.length} bytes`);
      content.set(bytes, at);
      at += bytes.length;
    }
    if (at !== header.length) throw new Error(`stored blob ${id} has ${at} of its ${header.length} bytes`);
    return content;
  }

  /** Idempotent: chunks first, the header last, so an interrupted delete is finished by a retry. */
  async delete(id: string): Promise<void> {
    const header = await this.headers.findOne({ _id: id });
    if (!header) return;
    await this.deleteChunks(id, header.chunks);
    await this.headers.deleteOne({ _id: id });
  }

  private async deleteChunks(id: string, count: number): Promise<void> {
    for (let n = 0; n < count; n++) await this.chunks.deleteOne({ _id: chunkId(id, n) });
  }
}
