/** Shared by bench/scan.ts and bench/scan-fp.ts: a clamd to scan with, and small statistics helpers. */
import net from 'node:net';
import { startClamd } from '../test/unit/scan/support/clamd';
import type { ClamdAddress } from '../src/scan/engines/clamav';

export interface BenchClamd { addr: ClamdAddress; stop(): Promise<void>; origin: string }

function reachable(addr: ClamdAddress): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createConnection(addr);
    s.setTimeout(1000, () => { s.destroy(); resolve(false); });
    s.on('error', () => resolve(false));
    s.on('connect', () => { s.destroy(); resolve(true); });
  });
}

/** Uses CLAMD_HOST/CLAMD_PORT when they answer, otherwise starts a private clamd with the project signatures. */
export async function benchClamd(): Promise<BenchClamd> {
  if (process.env.CLAMD_PORT) {
    const addr = { host: process.env.CLAMD_HOST || '127.0.0.1', port: Number(process.env.CLAMD_PORT) };
    if (await reachable(addr)) return { addr, stop: async () => undefined, origin: `existing clamd at ${addr.host}:${addr.port}` };
  }
  const c = await startClamd();
  if ('skipped' in c) throw new Error(`bench needs clamd: ${c.skipped}`);
  return { addr: { host: c.host, port: c.port }, stop: () => c.stop(), origin: `private clamd on port ${c.port} with signatures/clamav` };
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export const fmt = (n: number, d = 1): string => n.toFixed(d);
export const MB = 1024 * 1024;

/** The value after a command-line flag, else `def` (shared by the benches that take options). */
export function opt(args: string[], name: string, def: string): string {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : def;
}
