import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { sleep } from './net';
import type { StackLogger } from './types';

/** Contents of dataDir/run/<name>.pid: enough to recognise our own process after a crash. */
interface PidFile {
  pid: number;
  argv: string[];
  /**
   * The process that started it. While that process lives it stays the child's parent (setpriv
   * and nice exec the command); once it is gone the child has been re-parented, and only then is
   * it a killed run's leftover. Absent in the pidfiles of earlier versions.
   */
  parent?: number;
}

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  dataDir: string;
  logger: StackLogger;
  /** Runs the command at this niceness (every thread of it: set before exec). Default: unchanged. */
  niceness?: number;
}

/** util-linux setpriv (Debian: always installed), used for --pdeathsig; without it stale-pidfile cleanup still applies. */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => fs.existsSync(p));
/** coreutils nice (Debian: always installed), used for ChildSpec.niceness. */
const NICE = ['/usr/bin/nice', '/bin/nice'].find((p) => fs.existsSync(p));

/** How long stop() waits after SIGTERM before SIGKILL. */
export const STOP_GRACE_MS = 10_000;

/**
 * One supervised child process: output appended to dataDir/logs/<name>.log, a pidfile in
 * dataDir/run/<name>.pid while it runs. Emits 'exit' (code, signal) when it ends without
 * stop() having been called.
 */
export class ManagedChild extends EventEmitter {
  readonly name: string;
  readonly logPath: string;
  readonly pidPath: string;
  readonly exited: Promise<void>;
  private readonly proc: ChildProcess;
  private stopping = false;
  private exitCode: number | null = null;
  private exitSignal: NodeJS.Signals | null = null;
  private running = true;

  constructor(spec: ChildSpec) {
    super();
    this.name = spec.name;
    this.logPath = path.join(spec.dataDir, 'logs', `${spec.name}.log`);
    this.pidPath = path.join(spec.dataDir, 'run', `${spec.name}.pid`);
    const logFd = fs.openSync(this.logPath, 'a');
    fs.writeSync(logFd, `\n--- ${new Date().toISOString()} starting: ${[spec.command, ...spec.args].join(' ')}\n`);
    // setpriv sets the parent-death signal and then execs the command, so the child keeps its
    // pid and argv (what the pidfile records) and still gets SIGTERM if we are killed with SIGKILL.
    // nice, too, execs the command: the niceness is set before the command starts any thread.
    if (spec.niceness !== undefined && !NICE) spec.logger.warn({ child: spec.name }, `${spec.name}: nice is not installed; it runs at normal priority`);
    const niced = spec.niceness !== undefined && NICE ? [NICE, '-n', String(spec.niceness), spec.command, ...spec.args] : [spec.command, ...spec.args];
    const [command, args] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'SIGTERM', '--', ...niced]] : [niced[0], niced.slice(1)];
    try {
      // A process group of its own: Ctrl-C at `npm start` signals the terminal's whole group, and
      // clamd and Temporal then exited before the service had begun its ordered stop, which read as
      // a child dying (an outside probe). The service stops its children itself; if it is killed,
      // setpriv's parent-death signal stops them.
      this.proc = spawn(command, args, { stdio: ['ignore', logFd, logFd], env: process.env, detached: true });
    } finally {
      fs.closeSync(logFd);
    }
    this.exited = new Promise((resolve) => {
      this.proc.once('exit', (code, signal) => {
        this.running = false;
        this.exitCode = code;
        this.exitSignal = signal;
        removePidFile(this.pidPath, this.proc.pid);
        if (!this.stopping) {
          spec.logger.error({ child: this.name, code, signal, log: this.logPath }, `${this.name} exited unexpectedly; see ${this.logPath}`);
          this.emit('exit', code, signal);
        }
        resolve();
      });
    });
    this.proc.once('error', (err) => {
      // spawn failures (ENOENT, EACCES) arrive here; 'exit' may not follow.
      this.running = false;
      spec.logger.error({ child: this.name, err: err.message, log: this.logPath }, `${this.name} could not be started`);
      this.exitCode = -1;
      if (!this.stopping) this.emit('exit', -1, null);
    });
    if (this.proc.pid !== undefined) {
      const pidFile: PidFile = { pid: this.proc.pid, argv: [spec.command, ...spec.args], parent: process.pid };
      fs.writeFileSync(this.pidPath, JSON.stringify(pidFile) + '\n');
    }
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Why the process is no longer running, for error messages. */
  describeExit(): string {
    return this.exitSignal ? `killed by ${this.exitSignal}` : `exit code ${this.exitCode}`;
  }

  /** SIGTERM, then SIGKILL after graceMs; resolves once the process is gone. */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    this.stopping = true;
    if (!this.running) return;
    this.proc.kill('SIGTERM');
    const escalate = setTimeout(() => {
      if (this.running) this.proc.kill('SIGKILL');
    }, graceMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(escalate);
    }
  }
}

function removePidFile(pidPath: string, pid: number | undefined): void {
  try {
    const current = JSON.parse(fs.readFileSync(pidPath, 'utf8')) as PidFile;
    if (current.pid === pid) fs.rmSync(pidPath, { force: true });
  } catch {
    // already gone or unreadable: nothing to clean
  }
}

/** argv of a live process, or undefined when it does not exist (Linux /proc). */
export function processArgv(pid: number): string[] | undefined {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const argv = raw.split('\0');
    if (argv[argv.length - 1] === '') argv.pop();
    return argv;
  } catch {
    return undefined;
  }
}

/**
 * The fields of /proc/<pid>/stat after the command name (which is in parentheses and may hold
 * spaces): [0] state, [1] parent pid, ... [19] start time; undefined when there is no such process.
 */
export function procStat(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function sameArgv(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** A pidfile's process that is still running the command it records. */
export interface RecordedChild {
  pid: number;
  /**
   * The live process it belongs to (its parent, which started it); undefined when that process is
   * gone: a killed run's leftover.
   */
  owner?: number;
}

/** A JSON file's content (a pidfile, the DATA_DIR lock); undefined when absent or unreadable. */
export function readJsonFile<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/**
 * Whether another live process is the one a file recorded: its pid still runs the recorded
 * argv. A zombie or a reused pid has a different (or empty) cmdline, so it no longer counts.
 */
export function runsRecorded(recorded: { pid: number; argv: string[] }): boolean {
  if (!Number.isInteger(recorded.pid) || recorded.pid <= 1 || recorded.pid === process.pid || !Array.isArray(recorded.argv)) return false;
  const argv = processArgv(recorded.pid);
  return argv !== undefined && sameArgv(argv, recorded.argv);
}

/**
 * Who owns a recorded child: its parent, while that is still the process that started it. An
 * earlier version's pidfile does not say who started it: there a parent other than init counts
 * as the owner (an orphan goes to init, or to a subreaper, which this cannot tell from a running
 * service: such a leftover is then left running, and the start that needs its port says the
 * port is taken, which stops nothing).
 */
function ownerOf(recorded: PidFile): number | undefined {
  const parent = Number(procStat(recorded.pid)?.[1]);
  if (!Number.isInteger(parent) || parent < 1) return undefined;
  // A service that is itself pid 1 (a container's entry point) records 1 and owns its children.
  if (recorded.parent !== undefined) return parent === recorded.parent ? parent : undefined;
  return parent > 1 ? parent : undefined;
}

/** The process dataDir/run/<name>.pid names, when it is still running the recorded command. */
export function recordedChild(dataDir: string, name: string): RecordedChild | undefined {
  const recorded = readJsonFile<PidFile>(path.join(dataDir, 'run', `${name}.pid`));
  if (!recorded || !runsRecorded(recorded)) return undefined;
  return { pid: recorded.pid, owner: ownerOf(recorded) };
}

/**
 * A previous run killed with SIGKILL leaves its children running and holding ports. If the
 * pidfile names a live process that still runs the recorded command and whose starter is gone,
 * end it (SIGTERM, then SIGKILL) before starting a new one. A pid reused by an unrelated process
 * is left alone, and so is a child of a live process, this one's or another's: an operator CLI
 * on a running service's DATA_DIR stopped all of that service's children before this checked.
 */
export async function killStaleChild(dataDir: string, name: string, logger: StackLogger, graceMs = 5_000): Promise<boolean> {
  const pidPath = path.join(dataDir, 'run', `${name}.pid`);
  const recorded = readJsonFile<PidFile>(pidPath);
  if (!recorded) return false;
  let killed = false;
  const stillOurs = () => runsRecorded(recorded);
  if (stillOurs()) {
    const owner = ownerOf(recorded);
    // A child this process started is no previous run's: it and its pidfile stay (the import of
    // a FerretDB-era DATA_DIR starts a stack of its own beside the service's Temporal). Another
    // live process's child is that process's to stop; its pidfile stays too.
    if (owner !== undefined) {
      if (owner !== process.pid) logger.warn({ child: name, pid: recorded.pid, owner }, `${name}: pid ${recorded.pid} belongs to the running process ${owner}; left running`);
      return false;
    }
    logger.warn({ child: name, pid: recorded.pid }, `${name}: a previous run's process (pid ${recorded.pid}) is still running; stopping it`);
    signal(recorded.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (stillOurs() && Date.now() < deadline) await sleep(50);
    if (stillOurs()) {
      signal(recorded.pid, 'SIGKILL');
      while (stillOurs()) await sleep(20);
    }
    killed = true;
  }
  fs.rmSync(pidPath, { force: true });
  return killed;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // exited in the meantime
  }
}
