/**
 * `npm run bench -- scan [--regenerate]`: the whole analyze() pipeline against clamd INSTREAM alone
 * on the same generated corpus (>= 200 files, >= 200 MB, files over 25 MB, archives) in bench/out/scan-corpus.
 * Prints files/s, MB/s, per-file latency p50/p99 and peak RSS, and the pipeline/clamd ratio.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { analyze, type AnalyzeDeps } from '../src/scan/analyze';
import { loadConfig } from '../src/config';
import { EnginePool } from '../src/scan/pool';
import { clamdInstream } from '../src/scan/engines/clamav';
import { memoryFeedLookup, parsePlainHashList } from '../src/scan/engines/feeds';
import { EICAR, makeTar, makeZip } from '../test/fixtures/scripts/make-corpus';
import { benchClamd, fmt, MB, percentile } from './_scan-common';

const OUT = path.resolve(__dirname, 'out/scan-corpus');
const WORDS = 'the of and to in is for on that with as by this from at are be or it an was file scan engine service device message state report value data result'.split(' ');

function text(bytes: number, seed: number): Buffer {
  const parts: string[] = [];
  let n = 0;
  let i = seed;
  while (n < bytes) {
    const w = WORDS[(i = (i * 1103515245 + 12345) >>> 0) % WORDS.length];
    parts.push(w);
    n += w.length + 1;
    if (parts.length % 14 === 0) parts.push('\n');
  }
  return Buffer.from(parts.join(' ').slice(0, bytes));
}

function systemBinaries(max: number): string[] {
  const out: string[] = [];
  for (const dir of ['/usr/bin', '/usr/sbin']) {
    for (const f of readdirSync(dir).sort()) {
      const p = path.join(dir, f);
      try {
        const st = statSync(p);
        if (st.isFile() && st.size > 20_000 && st.size < 8 * MB) out.push(p);
      } catch { /* unreadable: skip */ }
      if (out.length >= max) return out;
    }
  }
  return out;
}

async function generate(): Promise<void> {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const w = (name: string, data: Buffer | string): void => writeFileSync(path.join(OUT, name), data);
  for (let i = 0; i < 120; i++) w(`doc-${i}.txt`, text(1000 + ((i * 7919) % 120_000), i));
  for (let i = 0; i < 20; i++) w(`page-${i}.html`, `<!doctype html><html><body>${text(5000 + i * 500, i).toString()}</body></html>`);
  for (let i = 0; i < 10; i++) w(`script-${i}.sh`, `#!/bin/sh\nset -e\n${'echo "step"\n'.repeat(50 + i)}`);
  const bins = systemBinaries(30);
  bins.forEach((p, i) => w(`bin-${i}-${path.basename(p)}`, readFileSync(p)));
  for (let i = 0; i < 15; i++) w(`blob-${i}.bin`, randomBytes(2 * MB + i * 100_000));
  for (let i = 0; i < 8; i++) {
    w(`bundle-${i}.zip`, await makeZip([
      { name: 'docs/readme.txt', data: text(20_000, i) },
      { name: `bin/${path.basename(bins[i % bins.length])}`, data: readFileSync(bins[i % bins.length]) },
      { name: 'data/blob.bin', data: randomBytes(MB), compress: false },
    ]));
  }
  for (let i = 0; i < 4; i++) {
    w(`logs-${i}.tar.gz`, zlib.gzipSync(await makeTar([{ name: 'app.log', data: text(3 * MB, i) }, { name: 'b.bin', data: randomBytes(MB) }])));
  }
  w('eicar.com', EICAR);
  w('eicar.zip', await makeZip([{ name: 'eicar.com', data: Buffer.from(EICAR) }]));
  // Large files (over the 25 MB automatic-deferral threshold).
  w('large-30mb.bin', randomBytes(30 * MB));
  w('large-40mb.log', text(40 * MB, 99));
  w('large-50mb.bin', randomBytes(50 * MB));
  w('large-archive-35mb.zip', await makeZip([{ name: 'big.bin', data: randomBytes(35 * MB), compress: false }, { name: 'notes.txt', data: text(10_000, 5) }]));
}

interface Run { latencies: number[]; totalMs: number; bytes: number; files: number; maxRssMB: number }

async function measure(files: string[], scan: (content: Buffer, name: string) => Promise<void>): Promise<Run> {
  const latencies: number[] = [];
  let bytes = 0;
  const t0 = performance.now();
  for (const f of files) {
    const content = readFileSync(f);
    bytes += content.length;
    const s = performance.now();
    await scan(content, path.basename(f));
    latencies.push(performance.now() - s);
  }
  return { latencies: latencies.sort((a, b) => a - b), totalMs: performance.now() - t0, bytes, files: files.length, maxRssMB: process.resourceUsage().maxRSS / 1024 };
}

function row(label: string, r: Run): string {
  const s = r.totalMs / 1000;
  return [label.padEnd(22), fmt(r.files / s).padStart(9), fmt(r.bytes / MB / s).padStart(9), fmt(percentile(r.latencies, 50), 2).padStart(10), fmt(percentile(r.latencies, 99), 1).padStart(10), fmt(s, 2).padStart(8)].join(' ');
}

/** One measured phase in its own process, so each peak RSS is that phase's alone. */
async function phase(kind: 'clamd' | 'pipeline', files: string[]): Promise<Run & { verdicts: Record<string, number>; notOk: Record<string, number>; threads: number }> {
  const addr = { host: process.env.CLAMD_HOST ?? '127.0.0.1', port: Number(process.env.CLAMD_PORT) };
  // The pipeline as the service runs it: CPU-bound engines on the engine pool (SCAN_THREADS).
  const config = loadConfig();
  const pool = kind === 'pipeline' && config.scanThreads > 0 ? new EnginePool({ threads: config.scanThreads, minBytes: config.scanThreadMinBytes, deps: {} }) : undefined;
  await pool?.warm();
  const deps: AnalyzeDeps = { clamd: addr, feedLookup: memoryFeedLookup(parsePlainHashList('', 'bench')), pool };
  const verdicts: Record<string, number> = {};
  const notOk: Record<string, number> = {};
  if (kind === 'pipeline') await analyze({ content: Buffer.from('warm up'), name: 'w.txt', scanType: 'file' }, deps);
  const r = await measure(files, kind === 'clamd'
    ? async (c) => { await clamdInstream(addr, c); }
    : async (content, name) => {
      const a = await analyze({ content, name, scanType: 'file' }, deps);
      verdicts[a.safetyScore.threatLevel] = (verdicts[a.safetyScore.threatLevel] ?? 0) + 1;
      for (const e of Object.values(a.engines)) if (e.status !== 'ok') notOk[`${e.engine}:${e.status}`] = (notOk[`${e.engine}:${e.status}`] ?? 0) + 1;
    });
  await pool?.close();
  return { ...r, verdicts, notOk, threads: pool?.threads ?? 0 };
}

function runPhase(kind: string, env: NodeJS.ProcessEnv): Promise<Run & { verdicts: Record<string, number>; notOk: Record<string, number>; threads: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, __filename, '--phase', kind], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('PHASE '));
      if (code !== 0 || !line) reject(new Error(`phase ${kind} failed (${code}): ${out.slice(-500)}`));
      else resolve(JSON.parse(line.slice(6)));
    });
  });
}

const corpusFiles = (): string[] => readdirSync(OUT).map((f) => path.join(OUT, f)).filter((f) => statSync(f).isFile()).sort();

export async function run(args: string[]): Promise<void> {
  if (args.includes('--regenerate') || !existsSync(path.join(OUT, 'large-50mb.bin'))) await generate();
  const files = corpusFiles();
  const sizes = files.map((f) => statSync(f).size);
  const total = sizes.reduce((a, b) => a + b, 0);
  console.log(`corpus: ${files.length} files, ${fmt(total / MB)} MB, ${sizes.filter((s) => s > 25 * MB).length} over 25 MB, ${files.filter((f) => /\.(zip|tar\.gz)$/.test(f)).length} archives, largest ${fmt(Math.max(...sizes) / MB)} MB (${OUT})`);
  const clamd = await benchClamd();
  console.log(`clamd: ${clamd.origin}`);
  try {
    const env = { ...process.env, CLAMD_HOST: clamd.addr.host, CLAMD_PORT: String(clamd.addr.port) };
    const clamOnly = await runPhase('clamd', env);
    const pipeline = await runPhase('pipeline', env);
    console.log('');
    console.log(`${'run'.padEnd(22)} ${'files/s'.padStart(9)} ${'MB/s'.padStart(9)} ${'p50 ms'.padStart(10)} ${'p99 ms'.padStart(10)} ${'total s'.padStart(8)} ${'peak RSS MB'.padStart(12)}`);
    console.log(`${row('clamd INSTREAM alone', clamOnly)} ${fmt(clamOnly.maxRssMB).padStart(12)}`);
    console.log(`${row(`pipeline, ${pipeline.threads} threads`, pipeline)} ${fmt(pipeline.maxRssMB).padStart(12)}`);
    console.log('');
    console.log(`ratio pipeline/clamd (total time): ${fmt(pipeline.totalMs / clamOnly.totalMs, 2)}x  (goal <= 2x)`);
    console.log(`peak RSS: pipeline ${fmt(pipeline.maxRssMB)} MB vs the same process reading files for clamd ${fmt(clamOnly.maxRssMB)} MB; largest file ${fmt(Math.max(...sizes) / MB)} MB`);
    console.log(`verdicts: ${JSON.stringify(pipeline.verdicts)}${Object.keys(pipeline.notOk).length ? `; engines not ok: ${JSON.stringify(pipeline.notOk)}` : ''}`);
  } finally {
    await clamd.stop();
  }
}

if (require.main === module && process.argv[2] === '--phase') {
  phase(process.argv[3] as 'clamd' | 'pipeline', corpusFiles()).then(
    (r) => { console.log(`PHASE ${JSON.stringify({ ...r, latencies: r.latencies })}`); process.exit(0); },
    (err: unknown) => { console.error(err); process.exit(1); },
  );
}
