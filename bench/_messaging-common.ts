/** Shared by the messaging benchmarks: a CLI call against a started service, an HTTP keep-alive client, percentiles. */
import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import type { StackEnv } from '../test/support/service';
import { ROOT } from '../test/support/service';

export function cliJson(env: StackEnv, ...args: string[]): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd: ROOT, env: { ...process.env, ...env.env } }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`cli ${args.join(' ')} failed: ${stderr}`));
      resolve(JSON.parse(stdout) as Record<string, string>);
    });
  });
}

export interface HttpResult { status: number; body: string; ms: number }

/** One keep-alive agent: requests reuse sockets, as a device library would. */
export function httpClient(baseUrl: string, maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const base = new URL(baseUrl);
  return {
    agent,
    request(method: string, p: string, key: string, body?: unknown): Promise<HttpResult> {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const started = process.hrtime.bigint();
      return new Promise((resolve, reject) => {
        const req = http.request({
          host: base.hostname, port: base.port, method, path: p, agent,
          headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}) },
        }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: Number(process.hrtime.bigint() - started) / 1e6 }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const fmt = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** Peak resident set (VmHWM) and current RSS of a process, in MB, from /proc. */
export async function memoryOf(pid: number): Promise<{ hwmMb: number; rssMb: number }> {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { hwmMb: kb('VmHWM') / 1024, rssMb: kb('VmRSS') / 1024 };
}
