/**
 * Thin promise wrappers around yauzl (zip parsing is a library's job, not ours). Used by file-type
 * identification (entry names), the CVE engine (small metadata entries) and the archive engine.
 */
import yauzl from 'yauzl';
import type { Readable } from 'node:stream';

export interface ZipListing {
  names: string[];
  /** True when the archive had more entries than were listed. */
  truncated: boolean;
}

export function openZip(content: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(
      content,
      { lazyEntries: true, validateEntrySizes: true, strictFileNames: false, decodeStrings: true },
      (err, zip) => (err ? reject(err) : resolve(zip)),
    );
  });
}

/** Visits entries one by one; the visitor returns false to stop early. */
export async function forEachZipEntry(
  zip: yauzl.ZipFile,
  visit: (entry: yauzl.Entry) => Promise<boolean> | boolean,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let done = false;
    const finish = (err?: Error): void => {
      if (done) return;
      done = true;
      zip.close();
      if (err) reject(err);
      else resolve();
    };
    zip.on('error', finish);
    zip.on('end', () => finish());
    zip.on('entry', (entry: yauzl.Entry) => {
      Promise.resolve(visit(entry)).then(
        (more) => (more ? zip.readEntry() : finish()),
        (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
      );
    });
    zip.readEntry();
  });
}

export async function listZipEntries(content: Buffer, max = 5000): Promise<ZipListing | null> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(content);
  } catch {
    return null;
  }
  const names: string[] = [];
  let truncated = false;
  try {
    await forEachZipEntry(zip, (entry) => {
      if (names.length >= max) {
        truncated = true;
        return false;
      }
      names.push(entry.fileName);
      return true;
    });
  } catch {
    return names.length ? { names, truncated: true } : null;
  }
  return { names, truncated };
}

export function openEntryStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream)));
  });
}

export class ByteCapExceeded extends Error {
  constructor(readonly cap: number) {
    super(`expanded content exceeded ${cap} bytes`);
  }
}

/** Reads a stream into memory, destroying it as soon as more than `cap` bytes arrive. */
export function readCapped(stream: Readable, cap: number, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (err: Error | null, value?: Buffer): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (err) {
        stream.destroy();
        reject(err);
      } else resolve(value ?? Buffer.alloc(0));
    };
    const onAbort = (): void => settle(new Error('aborted'));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort);
    stream.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > cap) return settle(new ByteCapExceeded(cap));
      chunks.push(chunk);
    });
    stream.on('error', (err: Error) => settle(err));
    stream.on('end', () => settle(null, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total)));
  });
}

/** Reads one named entry (case-sensitive path) if present and no larger than `cap`. */
export async function readZipEntries(
  content: Buffer,
  wanted: (name: string) => boolean,
  cap: number,
  maxEntries = 50,
): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(content);
  } catch {
    return out;
  }
  try {
    await forEachZipEntry(zip, async (entry) => {
      if (!entry.fileName.endsWith('/') && wanted(entry.fileName) && !entry.isEncrypted()
        && entry.uncompressedSize <= cap) {
        try {
          out.set(entry.fileName, await readCapped(await openEntryStream(zip, entry), cap));
        } catch {
          // A damaged entry is skipped: the archive engine reports damage, not this reader.
        }
      }
      return out.size < maxEntries;
    });
  } catch {
    // Truncated central directory: keep what was read.
  }
  return out;
}
