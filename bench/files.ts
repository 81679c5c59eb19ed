/**
 * File transfer: upload-to-delivered latency (POST /api/entities/files, polled until `delivered`)
 * for 1 MB and 50 MB files against POST /api/scan of the same bytes (synchronous at 1 MB; 50 MB
 * is over the 25 MB automatic-deferral threshold, so it is polled until complete), and clip
 * transcoding time per 100 frames (ClipMaker in-process: frame checks, ffmpeg, ffprobe, poster).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import yazl from 'yazl';
import { ClipMaker } from '../src/files/clip';
import { startServiceProcess, StackEnv } from '../test/support/service';
import { cliJson, fmt } from './_messaging-common';

const ROUNDS = Number(process.env.BENCH_FILES_ROUNDS ?? 3);
const MB = 1024 * 1024;

/** Clean text (random bytes would look like packed data to the engines). */
function cleanText(bytes: number, salt: string): Buffer {
  const line = (i: number) => `${salt} line ${i}: the quarterly report figures were reconciled and filed.\n`;
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const l = line(i);
    parts.push(l);
    size += l.length;
  }
  return Buffer.from(parts.join('')).subarray(0, bytes);
}

async function poll(check: () => Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function transferMs(env: StackEnv, senderKey: string, content: Buffer): Promise<number> {
  const form = new FormData();
  form.append('dest', 'receiver');
  form.append('file', new Blob([content]), 'report.txt');
  const t0 = performance.now();
  const res = await fetch(`${env.baseUrl}/api/entities/files`, { method: 'POST', headers: { authorization: `Bearer ${senderKey}` }, body: form });
  const { id } = (await res.json()) as { id: string };
  if (res.status !== 202) throw new Error(`upload answered ${res.status}`);
  let status = '';
  await poll(async () => {
    const r = await fetch(`${env.baseUrl}/api/entities/files/${id}`, { headers: { authorization: `Bearer ${senderKey}` } });
    status = ((await r.json()) as { status: string }).status;
    return status !== 'scanning';
  });
  if (status !== 'delivered') throw new Error(`file ended ${status}`);
  return performance.now() - t0;
}

async function scanMs(env: StackEnv, accountKey: string, content: Buffer): Promise<number> {
  const form = new FormData();
  form.append('file', new Blob([content]), 'report.txt');
  const t0 = performance.now();
  const res = await fetch(`${env.baseUrl}/api/scan`, { method: 'POST', headers: { authorization: `Bearer ${accountKey}` }, body: form });
  const body = (await res.json()) as { scanId: string };
  if (res.status === 202) {
    await poll(async () => {
      const r = await fetch(`${env.baseUrl}/api/scan/${body.scanId}`, { headers: { authorization: `Bearer ${accountKey}` } });
      return ((await r.json()) as { status: string }).status === 'complete';
    });
  } else if (res.status !== 200) throw new Error(`scan answered ${res.status}`);
  return performance.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function burstZip(frames: number, size: string): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-frames-'));
  try {
    await promisify(execFile)('ffmpeg', ['-nostdin', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=size=${size}:rate=10`, '-frames:v', String(frames), '-q:v', '5', path.join(dir, 'f%05d.jpg')]);
    const zip = new yazl.ZipFile();
    for (const name of (await readdir(dir)).sort()) zip.addBuffer(await readFile(path.join(dir, name)), name);
    zip.end();
    const chunks: Buffer[] = [];
    for await (const c of zip.outputStream) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const service = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const acct = await cliJson(service.env, 'account', 'create', '--name', 'bench-files', '--plan', 'pro');
    const sender = await cliJson(service.env, 'entity', 'create', '--account', acct.accountId, '--name', 'sender');
    await cliJson(service.env, 'entity', 'create', '--account', acct.accountId, '--name', 'receiver');
    console.log(`${'size'.padEnd(8)} ${'transfer p50 (ms)'.padStart(18)} ${'POST /api/scan p50 (ms)'.padStart(24)} ${'ratio'.padStart(7)}`);
    for (const mb of [1, 50]) {
      const transfers: number[] = [];
      const scans: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        // Fresh bytes each round so no result is reused.
        transfers.push(await transferMs(service.env, sender.apiKey, cleanText(mb * MB, `t${mb}-${i}`)));
        scans.push(await scanMs(service.env, acct.apiKey, cleanText(mb * MB, `s${mb}-${i}`)));
      }
      const t = median(transfers);
      const s = median(scans);
      console.log(`${`${mb} MB`.padEnd(8)} ${fmt(t, 0).padStart(18)} ${fmt(s, 0).padStart(24)} ${fmt(t / s, 2).padStart(7)}`);
    }
  } finally {
    await service.stop();
  }

  const maker = new ClipMaker({ concurrency: 1 });
  for (const size of ['640x480', '1280x720']) {
    const zip = await burstZip(100, size);
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      const made = await maker.make(zip, 'jpeg_burst', 10);
      times.push(performance.now() - t0);
      await made.dispose();
    }
    console.log(`clip transcode, 100 frames ${size}: p50 ${fmt(median(times), 0)} ms (checks + ffmpeg + ffprobe + poster)`);
  }
}
