/**
 * The local stack: the Temporal dev server and, when installed, clamd, each started as a child
 * process with its data under dataDir; and, only when asked (the tests' MongoDB-wire stand-in,
 * DATABASE_ENGINE=mongodb without MONGODB_URI), FerretDB v1 on SQLite with a second one for stored
 * bytes. The default database, the embedded store, is no child: the service opens it itself.
 * Used by `npm start` and by the integration tests' global setup.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { ManagedChild, killStaleChild, recordedChild, STOP_GRACE_MS } from './child';
import { clamdCommand, findClamd, prepareSignatureDir, writeClamdConf } from './clamd';
import { portTaken, sleep, waitForTcp } from './net';
import type { StackLogger } from './types';

export { findFreePort, waitForTcp } from './net';
export type { StackLogger } from './types';

export type StackPart = 'mongo' | 'blobs' | 'temporal' | 'clamd';

/**
 * Niceness of the bulk parts: clamd and the blobs FerretDB. On a small machine the CPU they spend
 * on large uploads (scanning them, moving them through SQLite) went to the service (and, when
 * FerretDB was the local database, the records' FerretDB) before; at a lower priority they use
 * what is left, and other tenants' requests keep their latency.
 */
export const BULK_NICENESS = 10;

export interface LocalStackOptions {
  /** Repository root; binaries are taken from rootDir/.tools/bin (installed by `npm run setup`). */
  rootDir: string;
  /** Absolute. ferretdb/, temporal/temporal.db, clamd/, logs/<part>.log and run/<part>.pid live here. */
  dataDir: string;
  /** The FerretDB stand-in on 127.0.0.1:port. false: not started (the embedded store, or MONGODB_URI). */
  mongo?: { port: number } | false;
  /**
   * A second FerretDB on 127.0.0.1:port for the stored bytes (MONGODB_BLOB_DB), its SQLite files
   * under ferretdb-blobs/, at niceness BULK_NICENESS. false: not started.
   */
  blobs?: { port: number } | false;
  /** Temporal dev server (gRPC port, Web UI port, namespace created at start; `default` always exists). false: not started. */
  temporal?: { port: number; uiPort: number; namespace: string } | false;
  /** clamd on 127.0.0.1:port loading signatureDirs plus /var/lib/clamav. Skipped with a warning when clamd is not installed or there are no signatures. */
  clamd?: { port: number; signatureDirs: string[] } | false;
  logger: StackLogger;
  /** Called when a started child exits without stop() (already logged as an error). */
  onExit?: (part: StackPart, code: number | null, signal: NodeJS.Signals | null) => void;
  /** Per-part readiness timeouts in ms. Defaults: mongo 30 000, temporal 60 000, clamd 180 000 (official databases load slowly). */
  readyTimeoutMs?: Partial<Record<StackPart, number>>;
}

export interface LocalStack {
  /**
   * mongodb://127.0.0.1:PORT/?maxPoolSize=1. One connection per client on purpose: FerretDB v1
   * on SQLite loses concurrent updates to one document (two `$inc` from two connections can both
   * read the old value), and serialising a process's operations on one connection avoids that.
   */
  mongoUri?: string;
  /** mongodb://127.0.0.1:PORT/ of the blobs FerretDB. */
  blobsUri?: string;
  /** 127.0.0.1:PORT (gRPC frontend). */
  temporalAddress?: string;
  /** http://127.0.0.1:UIPORT */
  temporalUiUrl?: string;
  /** undefined when clamd is not installed (Debian package clamav-daemon) or has no signatures. */
  clamdAddress?: { host: string; port: number };
  /** Log file of each started part. */
  logs: Partial<Record<StackPart, string>>;
  /** SIGTERM every child, wait, SIGKILL after a grace period. Safe to call twice. */
  stop(): Promise<void>;
}

const DEFAULT_TIMEOUTS: Record<StackPart, number> = { mongo: 30_000, blobs: 30_000, temporal: 60_000, clamd: 180_000 };
const HOST = '127.0.0.1';

export class StackStartError extends Error {
  constructor(
    readonly part: StackPart,
    readonly logPath: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StackStartError';
  }
}

export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  const { dataDir, logger } = opts;
  if (!path.isAbsolute(dataDir)) throw new Error(`dataDir must be absolute, got ${dataDir}`);
  const bin = path.join(opts.rootDir, '.tools', 'bin');
  for (const dir of ['logs', 'run']) fs.mkdirSync(path.join(dataDir, dir), { recursive: true });

  // Only the parts this call starts are looked at: another part's pidfile may name a running
  // service's child (the import of a FerretDB-era DATA_DIR starts FerretDB only), and a clean-up
  // of all four stopped every child of the service whose DATA_DIR the operator CLI opened.
  const parts = (['mongo', 'blobs', 'temporal', 'clamd'] as const).filter((p) => opts[p]);
  // A part that another live process's child runs on this DATA_DIR is that process's: starting a
  // second one would take its pidfile (and, for FerretDB, open the same SQLite files). Refused
  // before anything is touched, naming both.
  for (const part of parts) {
    const running = recordedChild(dataDir, part);
    if (running?.owner !== undefined && running.owner !== process.pid) {
      throw new StackStartError(part, path.join(dataDir, 'logs', `${part}.log`),
        `${part} cannot start: ${path.join(dataDir, 'run', `${part}.pid`)} names pid ${running.pid}, a child of the running process ${running.owner}, `
        + `on this DATA_DIR (another service's ${part}?); nothing was started or stopped. Stop that process first, or use another DATA_DIR`);
    }
  }
  // A previous run that was killed with SIGKILL may have left children holding ports and files.
  await Promise.all(parts.map((p) => killStaleChild(dataDir, p, logger)));

  // Each child's ports must be free before it starts. A child that cannot bind exits, but the
  // readiness probe asks whatever listens on the port: an outside probe's second service came up
  // `ready` on another service's Temporal, whose workflow tasks its worker then took and failed
  // ("Account not found"), and on another service's clamd.
  const wanted: Array<{ part: StackPart; port: number; setting: string; instead?: string }> = [];
  if (opts.mongo) wanted.push({ part: 'mongo', port: opts.mongo.port, setting: 'MONGO_PORT' });
  if (opts.blobs) wanted.push({ part: 'blobs', port: opts.blobs.port, setting: 'MONGO_BLOB_PORT' });
  if (opts.temporal) {
    const instead = 'TEMPORAL_ADDRESS to use that Temporal on purpose';
    wanted.push({ part: 'temporal', port: opts.temporal.port, setting: 'TEMPORAL_PORT', instead }, { part: 'temporal', port: opts.temporal.uiPort, setting: 'TEMPORAL_UI_PORT' });
  }
  if (opts.clamd && findClamd()) wanted.push({ part: 'clamd', port: opts.clamd.port, setting: 'CLAMD_PORT', instead: 'CLAMD_HOST/CLAMD_PORT to use that clamd on purpose' });
  for (const { part, port, setting, instead } of wanted) {
    if (await portTaken(HOST, port)) {
      throw new StackStartError(part, path.join(dataDir, 'logs', `${part}.log`),
        `${part} cannot start: ${HOST}:${port} is in use by another process (another service's ${part}?); set ${setting} to a free port${instead ? `, or ${instead}` : ''}`);
    }
  }

  const timeouts = { ...DEFAULT_TIMEOUTS, ...opts.readyTimeoutMs };
  const children: ManagedChild[] = [];
  const stack: LocalStack = { logs: {}, stop: async () => {} };

  const launch = (part: StackPart, command: string, args: string[], niceness?: number): ManagedChild => {
    const child = new ManagedChild({ name: part, command, args, dataDir, logger, niceness });
    children.push(child);
    stack.logs[part] = child.logPath;
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => opts.onExit?.(part, code, signal));
    return child;
  };

  const starts: Promise<void>[] = [];

  /** One FerretDB on 127.0.0.1:port with its SQLite files in dataDir/<dir>; resolves with its URI once it answers. */
  const ferretdb = (part: 'mongo' | 'blobs', port: number, dir: string, niceness?: number): Promise<string> => {
    const child = launch(part, requireBinary(bin, 'ferretdb'), [
      '-listen-addr', `${HOST}:${port}`, '-sqlite-dir', path.join(dataDir, dir), '-log-level', 'warn',
    ], niceness);
    const uri = `mongodb://${HOST}:${port}/`;
    return ready(part, child, timeouts[part], () => mongoPing(uri)).then(() => uri);
  };
  if (opts.mongo) {
    starts.push(ferretdb('mongo', opts.mongo.port, 'ferretdb').then((uri) => {
      stack.mongoUri = `${uri}?maxPoolSize=1`;
    }));
  }
  if (opts.blobs) {
    starts.push(ferretdb('blobs', opts.blobs.port, 'ferretdb-blobs', BULK_NICENESS).then((uri) => {
      stack.blobsUri = uri;
    }));
  }

  if (opts.temporal) {
    const { port, uiPort, namespace } = opts.temporal;
    const temporal = requireBinary(bin, 'temporal');
    fs.mkdirSync(path.join(dataDir, 'temporal'), { recursive: true });
    const args = [
      'server', 'start-dev',
      '--db-filename', path.join(dataDir, 'temporal', 'temporal.db'),
      '--ip', HOST, '--port', String(port), '--ui-port', String(uiPort),
      '--ui-disable-news-fetch', '--log-level', 'warn',
      // User-workflow runs carry these (temporal/engines/runs.ts) so operators can filter them in the UI.
      ...['AccountId', 'FlowId', 'FlowName', 'Trigger'].flatMap((key) => ['--search-attribute', `${key}=Keyword`]),
      // Runs carry their account as fairness key (temporal/engines/runs.ts): one account's backlog does not hold up the others'.
      '--dynamic-config-value', 'matching.enableFairness=true',
    ];
    if (namespace !== 'default') args.push('--namespace', namespace);
    const child = launch('temporal', temporal, args);
    const address = `${HOST}:${port}`;
    starts.push(ready('temporal', child, timeouts.temporal, () => temporalReady(address, [...new Set(['default', namespace])])).then(() => {
      stack.temporalAddress = address;
      stack.temporalUiUrl = `http://${HOST}:${uiPort}`;
    }));
  }

  if (opts.clamd) {
    const { port, signatureDirs } = opts.clamd;
    const clamd = findClamd();
    if (!clamd) {
      logger.warn('clamd is not installed (Debian package clamav-daemon; `npm run setup` as root installs it): scans run without the ClamAV engine');
    } else {
      const dir = path.join(dataDir, 'clamd');
      const dbDir = path.join(dir, 'db');
      const count = prepareSignatureDir(dbDir, signatureDirs);
      if (count === 0) {
        logger.warn({ signatureDirs }, 'clamd not started: no ClamAV signature files found (clamd refuses an empty database directory)');
      } else {
        const confPath = path.join(dir, 'clamd.conf');
        writeClamdConf({ confPath, port, dbDir, tmpDir: path.join(dir, 'tmp'), logFile: path.join(dir, 'clamd.log') });
        const child = launch('clamd', clamd, ['--config-file', confPath], BULK_NICENESS);
        starts.push(ready('clamd', child, timeouts.clamd, async () => {
          const reply = await clamdCommand(HOST, port, 'PING');
          if (reply !== 'PONG') throw new Error(`clamd answered ${JSON.stringify(reply)} to PING`);
        }).then(() => {
          stack.clamdAddress = { host: HOST, port };
        }));
      }
    }
  }

  let stopped: Promise<void> | undefined;
  stack.stop = () => {
    stopped ??= Promise.all(children.map((c) => c.stop(STOP_GRACE_MS))).then(() => undefined);
    return stopped;
  };

  const results = await Promise.allSettled(starts);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) {
    await stack.stop();
    throw failure.reason;
  }
  logger.info({ mongoUri: stack.mongoUri, blobsUri: stack.blobsUri, temporalAddress: stack.temporalAddress, temporalUiUrl: stack.temporalUiUrl, clamdAddress: stack.clamdAddress }, 'local stack ready');
  return stack;
}

function requireBinary(bin: string, name: string): string {
  const p = path.join(bin, name);
  try {
    fs.accessSync(p, fs.constants.X_OK);
  } catch {
    throw new Error(`${p} is missing: run \`npm run setup\` first (or set the external address so the local ${name} is not needed)`);
  }
  return p;
}

/** Retries probe until it succeeds; fails early when the child dies, naming its log file. */
async function ready(part: StackPart, child: ManagedChild, timeoutMs: number, probe: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!child.isRunning) {
      throw new StackStartError(part, child.logPath, `${part} exited during start-up (${child.describeExit()}); read ${child.logPath}:\n${tail(child.logPath)}`);
    }
    try {
      await probe();
      return;
    } catch (err) {
      lastError = err;
    }
    await sleep(200);
  }
  const reason = lastError instanceof Error ? lastError.message : String(lastError);
  throw new StackStartError(part, child.logPath, `${part} not ready after ${timeoutMs} ms (${reason}); read ${child.logPath}:\n${tail(child.logPath)}`, { cause: lastError });
}

function tail(file: string, lines = 15): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function mongoPing(uri: string): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 1000, connectTimeoutMS: 1000 });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close();
  }
}

async function temporalReady(address: string, namespaces: string[]): Promise<void> {
  const [host, port] = address.split(':');
  await waitForTcp(host, Number(port), 1000);
  const { Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    await connection.workflowService.getSystemInfo({});
    for (const namespace of namespaces) await connection.workflowService.describeNamespace({ namespace });
  } finally {
    await connection.close();
  }
}
