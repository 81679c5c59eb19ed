/**
 * Who runs the local stack of a DATA_DIR (docs/contract.md §11 "Several processes on one
 * machine"). The process that starts local-stack children (Temporal, clamd, the legacy FerretDB)
 * holds DATA_DIR/run/service.lock, a JSON file naming its pid, its command line and the addresses
 * of what it started. A second full start on the same DATA_DIR finds a live holder and refuses,
 * naming its pid, before it touches any pidfile (the start-up clean-up of a killed run's children
 * would otherwise stop the running service's). A process that only shares the stack (ROLES=api
 * with TEMPORAL_ADDRESS) reads the holder's clamd address from the file instead of starting one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { processArgv, readJsonFile, runsRecorded } from './child';

export interface StackHolder {
  pid: number;
  argv: string[];
  startedAt: string;
  /** Filled in once the stack is up. */
  temporalAddress?: string;
  clamd?: { host: string; port: number };
  /**
   * The FerretDB stand-in it keeps its records in (DATABASE_ENGINE=mongodb without MONGODB_URI,
   * on DATA_DIR/ferretdb/), so the refusal of an import there can say how to reach that data.
   */
  mongoUri?: string;
  /** Its FerretDB for stored bytes (DATA_DIR/ferretdb-blobs/). */
  blobsUri?: string;
}

export interface HeldLock {
  /** Records what the stack started, for processes that share it. */
  publish(parts: Pick<StackHolder, 'temporalAddress' | 'clamd' | 'mongoUri' | 'blobsUri'>): void;
  /** Removes the file if it is still this process's. */
  release(): void;
}

const lockPath = (dataDir: string) => path.join(dataDir, 'run', 'service.lock');

const readHolder = (file: string): StackHolder | undefined => readJsonFile<StackHolder>(file);

/** The live holder of DATA_DIR's stack, if any. */
export function stackHolder(dataDir: string): StackHolder | undefined {
  const holder = readHolder(lockPath(dataDir));
  // A holder counts while its pid still runs the command it recorded (not a reused pid).
  return holder && runsRecorded(holder) ? holder : undefined;
}

/**
 * Takes the DATA_DIR's lock, or answers the live holder. The file is created exclusively; a file
 * left by a dead holder is moved aside by one rename (of two processes racing for it, one moves it,
 * the other's rename fails) and the exclusive create is tried again.
 */
export function takeStackLock(dataDir: string): { held: HeldLock } | { holder: StackHolder } {
  const file = lockPath(dataDir);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.accessSync(path.dirname(file), fs.constants.W_OK);
  } catch (err) {
    // mkdir's own words (ENOENT on a read-only disk, ENOTDIR under a file) do not say what to change.
    throw new Error(`DATA_DIR ${dataDir} cannot be used (${(err as Error).message}): set DATA_DIR to a directory this user can create and write`, { cause: err });
  }
  const mine: StackHolder = { pid: process.pid, argv: processArgv(process.pid) ?? process.argv, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(mine), { flag: 'wx', mode: 0o600 });
      return { held: heldLock(file, mine) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(file);
    if (holder && runsRecorded(holder)) return { holder };
    // A holder still writing its file reads as unparsable for a moment: only a dead or unreadable one is moved.
    try {
      fs.renameSync(file, `${file}.stale-${process.pid}-${attempt}`);
      fs.rmSync(`${file}.stale-${process.pid}-${attempt}`, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  const holder = readHolder(file);
  if (holder) return { holder };
  throw new Error(`could not take ${file}: another process keeps replacing it`);
}

function heldLock(file: string, mine: StackHolder): HeldLock {
  const ours = () => readHolder(file)?.pid === mine.pid;
  return {
    publish(parts) {
      if (!ours()) return;
      const tmp = `${file}.${mine.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify({ ...mine, ...parts }), { mode: 0o600 });
      fs.renameSync(tmp, file);
    },
    release() {
      if (ours()) fs.rmSync(file, { force: true });
    },
  };
}

/** The refusal of a second full start, naming the running service and how to start beside it. */
export function inUseMessage(dataDir: string, holder: StackHolder): string {
  const beside = holder.temporalAddress ? ` TEMPORAL_ADDRESS=${holder.temporalAddress}` : ' TEMPORAL_ADDRESS=<its Temporal address>';
  return `DATA_DIR ${dataDir} is in use by the running service (pid ${holder.pid}, started ${holder.startedAt}); `
    + `stop it first, or start a second process beside it with ROLES=api PORT=<another port> METRICS_PORT=<another port>${beside}`;
}
