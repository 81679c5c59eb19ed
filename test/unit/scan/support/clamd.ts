/**
 * Starts a private clamd for tests and benchmarks: a temp config (Foreground, TCPSocket on a free
 * port, DatabaseDirectory = a temp copy of signatures/clamav plus any official databases present
 * in /var/lib/clamav). Without clamd on PATH: throws under CI=true, else returns the reason.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CLAMD_INSTALL, requireTool } from '../../../support/tools';

export const PROJECT_SIGNATURES = path.resolve(__dirname, '../../../../signatures/clamav');

export interface LocalClamd { host: string; port: number; stop(): Promise<void>; dir: string }

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createConnection({ host: '127.0.0.1', port });
    let data = '';
    s.on('data', (d) => { data += d.toString(); });
    s.on('error', () => resolve(false));
    s.on('close', () => resolve(data.includes('PONG')));
    s.on('connect', () => s.end('zPING\0'));
  });
}

export async function startClamd(timeoutMs = 60_000): Promise<LocalClamd | { skipped: string }> {
  const bin = requireTool('clamd', CLAMD_INSTALL);
  if (!bin) return { skipped: `clamd is not on PATH (${CLAMD_INSTALL})` };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clamd-test-'));
  const db = path.join(dir, 'db');
  spawnSync('mkdir', ['-p', db]);
  for (const f of readdirSync(PROJECT_SIGNATURES)) copyFileSync(path.join(PROJECT_SIGNATURES, f), path.join(db, f));
  if (existsSync('/var/lib/clamav')) {
    for (const f of readdirSync('/var/lib/clamav').filter((n) => /\.(cvd|cld)$/.test(n))) {
      copyFileSync(path.join('/var/lib/clamav', f), path.join(db, f));
    }
  }
  const port = await freePort();
  const conf = path.join(dir, 'clamd.conf');
  writeFileSync(conf, [
    'Foreground yes', `TCPSocket ${port}`, 'TCPAddr 127.0.0.1', `DatabaseDirectory ${db}`,
    'StreamMaxLength 512M', 'MaxFileSize 512M', 'MaxScanSize 1024M', 'MaxThreads 8', 'LogVerbose no', '',
  ].join('\n'));
  const child: ChildProcess = spawn(bin, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`clamd exited (${child.exitCode}): ${stderr.slice(-500)}`);
    if (await ping(port)) {
      return {
        host: '127.0.0.1', port, dir,
        stop: async () => {
          if (child.exitCode === null) {
            child.kill('SIGTERM');
            await new Promise((r) => child.once('exit', r));
          }
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`clamd did not answer PING within ${timeoutMs} ms: ${stderr.slice(-500)}`);
}
