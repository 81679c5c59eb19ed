/** What every GridFS bucket of the service shares. */
import { Readable } from 'node:stream';

/** Chunk size of every bucket. */
export const GRIDFS_CHUNK_BYTES = 1024 * 1024;

/**
 * A buffer as a stream of chunk-sized slices, to pipe into a GridFS upload stream. Handed the whole
 * buffer in one write, the driver inserts all its chunks at once (60 concurrent inserts for 60 MB,
 * filling the connection pool); one chunk per write keeps one insert in flight per upload.
 */
export function chunkedSource(content: Buffer): Readable {
  return Readable.from((function* slices() {
    for (let at = 0; at < content.length; at += GRIDFS_CHUNK_BYTES) yield content.subarray(at, at + GRIDFS_CHUNK_BYTES);
  })());
}
