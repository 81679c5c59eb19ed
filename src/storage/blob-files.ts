/**
 * The embedded engine's stored bytes (deferred-scan uploads, transferred files and clips, node
 * outputs over 256 KB): one file per blob under DATA_DIR/db/blobs/, apart from the records'
 * database so a large upload never holds its writer. Reads and writes go through libuv's thread
 * pool (off the event loop); a blob appears whole or not at all (written to a temporary file,
 * flushed, renamed into place); deleting one unlinks its file, so nothing of it stays readable
 * under DATA_DIR. File names are the SHA-256 of the blob's key, so any key is a safe name.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface ByteRange { start: number; end: number }

/** The keys of the stored bytes, one place: the stores and the import of MongoDB data use them. */
export const BLOB_KEYS = {
  scanUpload: (uploadId: string) => `scan-upload/${uploadId}`,
  filePart: (fileId: string, part: string) => `file/${fileId}/${part}`,
  nodeOutput: (fileId: string) => `output/${fileId}`,
};

const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

export class BlobFiles {
  private readonly tmp: string;

  constructor(readonly dir: string) {
    this.tmp = path.join(dir, 'tmp');
    fs.mkdirSync(this.tmp, { recursive: true });
  }

  private fileOf(key: string): string {
    const h = createHash('sha256').update(key).digest('hex');
    return path.join(this.dir, h.slice(0, 2), h);
  }

  /**
   * Stores the bytes of `source` as `key` (replacing what was there) and returns their length.
   * A failed write leaves nothing: neither a partial blob nor its temporary file.
   */
  async write(key: string, source: Readable | Buffer): Promise<number> {
    const tmp = path.join(this.tmp, randomUUID());
    const target = this.fileOf(key);
    let bytes = 0;
    try {
      const out = fs.createWriteStream(tmp, { flags: 'wx' });
      await pipeline(Buffer.isBuffer(source) ? Readable.from([source]) : source, out);
      bytes = out.bytesWritten;
      // The data reaches the disk before the name does: a crash never leaves a short blob.
      const fd = await fs.promises.open(tmp, 'r');
      try { await fd.sync(); } finally { await fd.close(); }
      await fs.promises.mkdir(path.dirname(target), { recursive: true });
      await fs.promises.rename(tmp, target);
    } catch (err) {
      await fs.promises.rm(tmp, { force: true });
      throw err;
    }
    return bytes;
  }

  /** The blob's file opened for reading; undefined when there is none. */
  private async handleOf(key: string): Promise<fs.promises.FileHandle | undefined> {
    try {
      return await fs.promises.open(this.fileOf(key), 'r');
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async size(key: string): Promise<number | undefined> {
    try {
      return (await fs.promises.stat(this.fileOf(key))).size;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /** The bytes, or `range` of them (end inclusive), as a stream; undefined when the blob is gone. */
  async open(key: string, range?: ByteRange): Promise<Readable | undefined> {
    const handle = await this.handleOf(key);
    if (!handle) return undefined;
    // Opened here, so a delete after this point still lets this reader finish.
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  /** The whole blob in memory from `alloc`; undefined when it is gone. */
  async read(key: string, alloc: (length: number) => Buffer = (n) => Buffer.alloc(n)): Promise<Buffer | undefined> {
    const handle = await this.handleOf(key);
    if (!handle) return undefined;
    try {
      const { size } = await handle.stat();
      const content = alloc(size);
      for (let at = 0; at < size;) {
        const { bytesRead } = await handle.read(content, at, size - at, at);
        if (bytesRead === 0) throw new Error(`stored blob ${key} ended at ${at} of ${size} bytes`);
        at += bytesRead;
      }
      return content;
    } finally {
      await handle.close();
    }
  }

  /** Idempotent: a blob already gone is the desired state. */
  async delete(key: string): Promise<void> {
    await fs.promises.rm(this.fileOf(key), { force: true });
  }

  /**
   * Removes temporary files of writes that a crash interrupted: those older than `ageMs` (another
   * process on the same DATA_DIR may be writing the younger ones).
   */
  async sweepTemporary(ageMs: number, now = Date.now()): Promise<number> {
    let removed = 0;
    for (const name of await fs.promises.readdir(this.tmp)) {
      const file = path.join(this.tmp, name);
      const stat = await fs.promises.stat(file).catch(() => undefined);
      if (stat && now - stat.mtimeMs > ageMs) {
        await fs.promises.rm(file, { force: true });
        removed += 1;
      }
    }
    return removed;
  }
}
