/**
 * Starts the whole service from outside, as `npm start` does, on free ports in a temporary
 * DATA_DIR, and waits for its `ready` line. Used by the integration/e2e global setup and by
 * benchmarks.
 */
import { spawn, ChildProcess } from 'node:child_process';
import { mkdtempSync, createWriteStream, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface StackEnv {
  baseUrl: string;
  mqttUrl: string;
  mqttPort: number;
  port: number;
  /** Which engine the service keeps its records in (embedded, the default, unless the test asked otherwise). */
  databaseEngine: 'embedded' | 'mongodb';
  /**
   * The MongoDB-wire server: the service's own local FerretDB when it runs DATABASE_ENGINE=mongodb;
   * for the shared test stack, the stand-in that global-setup starts beside the embedded service.
   */
  mongoPort: number;
  /** Its blobs server (MONGODB_BLOB_DB's). */
  mongoBlobPort: number;
  temporalPort: number;
  temporalUiPort: number;
  clamdPort: number;
  /** GET /metrics (METRICS_PORT). */
  metricsPort: number;
  dataDir: string;
  pid: number;
  logFile: string;
  /** Environment to give the CLI so it reaches this stack. */
  env: Record<string, string>;
}

/**
 * Environment for a process that shares another service process's records: the same DATA_DIR on
 * the embedded store (docs/contract.md §11 "Several processes on one machine"), its FerretDB otherwise.
 */
export const storageEnvOf = (e: StackEnv): Record<string, string> => (e.databaseEngine === 'embedded' ? { DATA_DIR: e.dataDir } : {
  DATABASE_ENGINE: 'mongodb',
  MONGODB_URI: `mongodb://127.0.0.1:${e.mongoPort}/`,
  MONGODB_BLOB_URI: `mongodb://127.0.0.1:${e.mongoBlobPort}/`,
});

export interface StartedService {
  env: StackEnv;
  child: ChildProcess;
  /**
   * Stops the service (its stack stops with it) and deletes its DATA_DIR, unless `keepData` (a
   * restart on the same directory follows, or the test reads it afterwards) or KEEP_TEST_DATA=1
   * (to read the logs of a run).
   */
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

/**
 * Ports for a test stack. An OS-chosen free port comes from the ephemeral range, where the many
 * outbound connections of parallel suites (Temporal, MongoDB, MQTT clients) can take it again
 * between the check and the service's listen: that ended a CI run with EADDRINUSE. These come
 * from below the ephemeral range (Linux: 32768+), are checked free on every interface, and are
 * never handed out twice by this process.
 */
const handedOut = new Set<number>();
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => server.close(() => resolve(true)));
  });
}
export async function pickPorts(count: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port) || !(await bindable(port))) continue;
    handedOut.add(port);
    out.push(port);
  }
  return out;
}

/** `reuse`: start again on the same ports and DATA_DIR as an earlier run (restart tests). */
export async function startServiceProcess(opts: { extraEnv?: Record<string, string>; timeoutMs?: number; reuse?: StackEnv } = {}): Promise<StartedService> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      // Another process took one of the picked ports before the service bound it: pick again.
      const output = (err as { output?: string }).output ?? '';
      const clash = !opts.reuse && !opts.extraEnv?.PORT && /EADDRINUSE/.test(output);
      if (!clash || attempt >= 3) throw err;
    }
  }
}

async function startOnce(opts: { extraEnv?: Record<string, string>; timeoutMs?: number; reuse?: StackEnv }): Promise<StartedService> {
  const dataDir = opts.reuse?.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'sentinel-test-'));
  const r = opts.reuse;
  const [port, mqttPort, mongoPort, temporalPort, temporalUiPort, clamdPort, mongoBlobPort, metricsPort] = r
    ? [r.port, r.mqttPort, r.mongoPort, r.temporalPort, r.temporalUiPort, r.clamdPort, r.mongoBlobPort, r.metricsPort]
    : await pickPorts(8);
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    PORT: String(port),
    MQTT_PORT: String(mqttPort),
    MONGO_PORT: String(mongoPort),
    MONGO_BLOB_PORT: String(mongoBlobPort),
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(temporalUiPort),
    CLAMD_PORT: String(clamdPort),
    METRICS_PORT: String(metricsPort),
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1:*,localhost:*',
    // A dead S3 endpoint fails its 3 attempts in seconds instead of the contract's 3 x 30 s read timeout (docs/contract.md §7).
    S3_CONNECT_TIMEOUT_MS: '3000',
    S3_READ_TIMEOUT_MS: '5000',
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
  let errText = '';
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
    child.stderr?.on('data', (chunk: Buffer) => {
      errText = (errText + chunk.toString('utf8')).slice(-20_000);
    });
    // 'close' comes after the output streams ended, so errText holds the last words.
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`service exited with code ${code} before ready; see ${logFile}`), { output: buf.slice(-20_000) + errText }));
    });
  });
  child.stdout?.removeAllListeners('data');
  child.stdout?.pipe(log);
  const stackEnv: StackEnv = {
    // The child's environment is this process's plus `env` (a bench run as DATABASE_ENGINE=mongodb).
    databaseEngine: (env.DATABASE_ENGINE ?? process.env.DATABASE_ENGINE) === 'mongodb' || (env.MONGODB_URI ?? process.env.MONGODB_URI) !== undefined ? 'mongodb' : 'embedded',
    baseUrl: `http://127.0.0.1:${port}`, mqttUrl: `mqtt://127.0.0.1:${mqttPort}`, mqttPort, port, mongoPort, mongoBlobPort, temporalPort,
    temporalUiPort, clamdPort, metricsPort: Number(env.METRICS_PORT), dataDir, pid: child.pid as number, logFile, env,
  };
  return {
    env: stackEnv,
    child,
    stop: async (o = {}) => {
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      if (!o.keepData && process.env.KEEP_TEST_DATA !== '1') rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
