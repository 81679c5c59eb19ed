/**
 * Starts the whole service from outside, as `npm start` does, on free ports in a temporary
 * DATA_DIR, and waits for its `ready` line. Used by the integration/e2e global setup and by
 * benchmarks.
 */
import { spawn, ChildProcess } from 'node:child_process';
import { mkdtempSync, createWriteStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findFreePort } from '../../src/stack/net';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface StackEnv {
  baseUrl: string;
  mqttUrl: string;
  mqttPort: number;
  port: number;
  mongoPort: number;
  temporalPort: number;
  temporalUiPort: number;
  clamdPort: number;
  dataDir: string;
  pid: number;
  logFile: string;
  /** Environment to give the CLI so it reaches this stack. */
  env: Record<string, string>;
}

export interface StartedService { env: StackEnv; child: ChildProcess; stop(): Promise<void> }

/** `reuse`: start again on the same ports and DATA_DIR as an earlier run (restart tests). */
export async function startServiceProcess(opts: { extraEnv?: Record<string, string>; timeoutMs?: number; reuse?: StackEnv } = {}): Promise<StartedService> {
  const dataDir = opts.reuse?.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'sentinel-test-'));
  const r = opts.reuse;
  const [port, mqttPort, mongoPort, temporalPort, temporalUiPort, clamdPort] = r
    ? [r.port, r.mqttPort, r.mongoPort, r.temporalPort, r.temporalUiPort, r.clamdPort]
    : await Promise.all(Array.from({ length: 6 }, () => findFreePort()));
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    PORT: String(port),
    MQTT_PORT: String(mqttPort),
    MONGO_PORT: String(mongoPort),
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(temporalUiPort),
    CLAMD_PORT: String(clamdPort),
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1,localhost',
    ...opts.extraEnv,
  };
  const logFile = path.join(dataDir, 'service.log');
  const log = createWriteStream(logFile, { flags: 'a' });
  // `node --import tsx` runs the service in this one process (the tsx CLI would add a wrapper
  // process, and a SIGKILL of the wrapper would leave the service running).
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.pipe(log);
  const timeoutMs = opts.timeoutMs ?? 120_000;
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`service not ready within ${timeoutMs} ms; see ${logFile}`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      log.write(chunk);
      buf += chunk.toString('utf8');
      if (/^ready\b/m.test(buf)) {
        clearTimeout(timer);
        resolve();
      }
      if (buf.length > 1_000_000) buf = buf.slice(-10_000);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with code ${code} before ready; see ${logFile}`));
    });
  });
  child.stdout?.removeAllListeners('data');
  child.stdout?.pipe(log);
  const stackEnv: StackEnv = {
    baseUrl: `http://127.0.0.1:${port}`, mqttUrl: `mqtt://127.0.0.1:${mqttPort}`, mqttPort, port, mongoPort, temporalPort,
    temporalUiPort, clamdPort, dataDir, pid: child.pid as number, logFile, env,
  };
  return {
    env: stackEnv,
    child,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
