/**
 * Synchronous scan throughput over HTTP: 8 concurrent clients uploading small files to a real
 * service (started like `npm start`), p50/p99 latency, and the ratio of HTTP time to engine time
 * (the scanTimeMs each result reports). Scan writes are limited to 30 per minute per account, so
 * the load is spread over enough accounts that the limiter never answers 429.
 */
import { startServiceProcess } from '../test/support/service';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { loadSecrets } from '../src/secrets';
import { openDatabase } from '../src/storage/engine';
import { createServices } from '../src/services';

const CLIENTS = 8;
const REQUESTS = Number(process.env.BENCH_SCAN_API_REQUESTS ?? 600);

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function sampleFile(i: number): { name: string; data: Buffer } {
  const kinds = [
    () => ({ name: `notes-${i}.txt`, data: Buffer.from(`Meeting notes ${i}\n${'The quarterly numbers look fine. '.repeat(40)}`) }),
    () => ({ name: `script-${i}.sh`, data: Buffer.from(`#!/bin/sh\necho build ${i}\nmake -j4 all\n`) }),
    () => ({ name: `page-${i}.html`, data: Buffer.from(`<html><body><h1>Report ${i}</h1><p>${'text '.repeat(200)}</p></body></html>`) }),
    () => ({ name: `data-${i}.json`, data: Buffer.from(JSON.stringify({ id: i, values: Array.from({ length: 200 }, (_, k) => k * i) })) }),
  ];
  return kinds[i % kinds.length]();
}

export async function run(): Promise<void> {
  const service = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const config = loadConfig({ ...process.env, ...service.env.env });
    const storage = await openDatabase(config);
    const services = createServices({ config, logger: createLogger('silent'), storage, secrets: loadSecrets(config) });
    const accounts = Math.ceil(REQUESTS / 28);
    const keys: string[] = [];
    for (let i = 0; i < accounts; i++) keys.push((await services.accounts.createAccount({ name: `bench-${i}`, plan: 'pro' })).apiKey);
    await storage.close();

    const latencies: number[] = [];
    const engineMs: number[] = [];
    let next = 0;
    let errors = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      for (;;) {
        const i = next++;
        if (i >= REQUESTS) return;
        const f = sampleFile(i);
        const form = new FormData();
        form.append('file', new Blob([f.data]), f.name);
        const t0 = performance.now();
        const res = await fetch(`${service.env.baseUrl}/api/scan`, { method: 'POST', headers: { authorization: `Bearer ${keys[i % keys.length]}` }, body: form });
        const body = (await res.json()) as { scanTimeMs?: number };
        const ms = performance.now() - t0;
        if (res.status !== 200) { errors++; continue; }
        latencies.push(ms);
        engineMs.push(body.scanTimeMs ?? 0);
      }
    }));
    const wall = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / Math.max(1, a.length);
    const rows = [
      ['requests', String(REQUESTS)], ['errors', String(errors)], ['clients', String(CLIENTS)],
      ['throughput (scans/s)', (latencies.length / wall).toFixed(1)],
      ['latency p50 (ms)', pct(latencies, 50).toFixed(1)], ['latency p99 (ms)', pct(latencies, 99).toFixed(1)],
      ['mean HTTP latency (ms)', mean(latencies).toFixed(2)], ['mean engine time scanTimeMs (ms)', mean(engineMs).toFixed(2)],
      ['HTTP time / engine time', (mean(latencies) / Math.max(0.01, mean(engineMs))).toFixed(2)],
      // With 8 requests in flight on one event loop, latency includes queueing behind the others;
      // the server's own cost per scan is wall time divided by scans.
      ['server time per scan (ms)', ((wall * 1000) / Math.max(1, latencies.length)).toFixed(2)],
    ];
    for (const [k, v] of rows) console.log(`${k.padEnd(34)} ${v}`);
  } finally {
    await service.stop();
  }
}
