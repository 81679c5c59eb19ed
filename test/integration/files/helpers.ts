/** Shared by the file-transfer integration tests: uploads, polling, the stored bytes, test media. */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import yazl from 'yazl';
import { BLOB_PARTS } from '../../../src/files/service';
import type { BlobPart } from '../../../src/files/records';
import type { Stores } from '../../../src/services';
import { filesHolding, withStackRecords } from '../../support/db';
import { api, Json, stack } from '../../support/env';

const run = promisify(execFile);

export async function sendFile(key: string, content: Buffer, filename: string, fields: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([content]), filename);
  const res = await fetch(`${stack().baseUrl}/api/entities/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const text = await res.text();
  let body: Json;
  try { body = JSON.parse(text); } catch { body = { raw: text }; }
  return { status: res.status, body };
}

/** Polls the sender's status view until the file leaves `scanning` (bounded). */
export async function settled(key: string, id: string, timeoutMs = 90_000): Promise<Json> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await api('GET', `/api/entities/files/${id}`, { key });
    if (r.status !== 200) throw new Error(`status of ${id}: ${r.status} ${r.text}`);
    if (r.body.status !== 'scanning') return r.body;
    if (Date.now() > until) throw new Error(`file ${id} still scanning after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 300));
  }
}

/** The parts of a file whose bytes are still stored (each part is its own stored blob). */
async function storedParts(stores: Stores, id: string): Promise<BlobPart[]> {
  const left: BlobPart[] = [];
  for (const part of BLOB_PARTS) if ((await stores.files.blobSize(id, part)) !== undefined) left.push(part);
  return left;
}

/** Bytes are deleted right after the status changes: waits (bounded) until none are left; returns the parts still stored. */
export function partsLeftAfterCleanup(id: string, timeoutMs = 15_000): Promise<BlobPart[]> {
  return withStackRecords(async ({ stores }) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const left = await storedParts(stores, id);
      if (left.length === 0 || Date.now() > until) return left;
      await new Promise((res) => setTimeout(res, 200));
    }
  });
}

/**
 * A refused upload's bytes are removed as the refusal unwinds: waits (bounded) until no file under
 * the stack's DATA_DIR/db holds `needle`; returns those that still do.
 */
export async function filesHoldingAfterCleanup(needle: Buffer, timeoutMs = 15_000): Promise<string[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    let hits: string[] | undefined;
    try {
      hits = filesHolding(needle);
    } catch (err) {
      // A temporary blob file went away between listing and reading: look again.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const late = Date.now() > until;
    if (hits && (hits.length === 0 || late)) return hits;
    if (late) throw new Error(`files under DATA_DIR/db kept vanishing while read, for ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

export function zipOf(entries: Array<[string, Buffer]>, compress = true): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const z = new yazl.ZipFile();
    for (const [name, data] of entries) z.addBuffer(data, name, { compress });
    z.end();
    const chunks: Buffer[] = [];
    z.outputStream.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
  });
}

/** JPEG frames of ffmpeg's test pattern, in frame order. */
export async function jpegFrames(count: number, width: number, height: number): Promise<Buffer[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'files-test-frames-'));
  try {
    await run('ffmpeg', ['-nostdin', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=10`, '-frames:v', String(count), '-q:v', '8', path.join(dir, 'f%05d.jpg')]);
    const names = (await readdir(dir)).sort();
    return Promise.all(names.map((n) => readFile(path.join(dir, n))));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function gifClip(frames: number): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'files-test-gif-'));
  try {
    const out = path.join(dir, 'c.gif');
    await run('ffmpeg', ['-nostdin', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-frames:v', String(frames), out]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function ffprobe(file: string): Promise<Json> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=codec_name,pix_fmt,nb_read_frames,width,height', '-of', 'json', file]);
  return JSON.parse(stdout);
}

/** ffmpeg/ffprobe processes the service started on clips (they run in its sentinel-clip-* directories). */
export async function clipToolsRunning(): Promise<string[]> {
  const { stdout } = await run('ps', ['-eo', 'pid,args']);
  return stdout.split('\n').filter((l) => /ff(mpeg|probe)/.test(l) && l.includes('sentinel-clip-'));
}
