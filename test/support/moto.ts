/**
 * A real S3-compatible server for the aws.s3 tests: moto_server from the venv `npm run setup`
 * installs into .tools/moto, on a free loopback port. Missing moto fails the test (never skips).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pickPorts, ROOT } from './service';

export const MOTO_SERVER = path.join(ROOT, '.tools', 'moto', 'bin', 'moto_server');

export interface MotoServer { endpoint: string; port: number; stop(): Promise<void> }

export async function startMoto(): Promise<MotoServer> {
  if (!existsSync(MOTO_SERVER)) throw new Error(`${MOTO_SERVER} is missing: run npm run setup (installs moto[server] into .tools/moto)`);
  const [port] = await pickPorts(1);
  const child = spawn(MOTO_SERVER, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => { stderr = (stderr + c.toString('utf8')).slice(-4_000); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const endpoint = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${endpoint}/moto-api/`)).ok) return { endpoint, port, stop };
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`moto_server did not answer on ${endpoint} within 30 s: ${stderr}`);
}
