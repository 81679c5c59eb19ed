/**
 * Runs a user's Python snippet in a jail (docs/contract.md §7 "Python snippet"):
 * bubblewrap gives fresh user, pid, network, ipc, uts and mount namespaces with nothing but a
 * read-only /usr and a bounded tmpfs (nothing else writable), no environment and an unprivileged
 * uid; the runner's seccomp filter keeps the snippet one process (threads only), so prlimit's
 * address space (256 MB) bounds it whole, with CPU seconds (the node timeout), open files and file size;
 * the parent kills the jail at the timeout and as soon as the output passes the plan's cap.
 * Nothing runs outside the jail: without bubblewrap or user namespaces a snippet fails.
 * How it works and what it guarantees: docs/workflows-sandbox.md.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { SnippetError } from '../errors';
import { procStat } from '../stack/child';

export const PYTHON_PATH = '/usr/bin/python3';
const BWRAP_CANDIDATES = ['/usr/bin/bwrap', '/bin/bwrap'];
const PRLIMIT_CANDIDATES = ['/usr/bin/prlimit', '/bin/prlimit'];

/** The jail's fixed limits; the timeout and the output cap come from the node and the plan. */
export const JAIL_LIMITS = {
  memoryBytes: 256 * 1024 * 1024,
  /** Processes and threads of the jail's uid (root service): bwrap, its init, Python and its threads. */
  maxProcesses: 32,
  openFiles: 64,
  /** Largest file a snippet may write in its tmpfs, and the tmpfs size. */
  fileBytes: 16 * 1024 * 1024,
  /** Characters of a traceback kept in the node's error (its end, where the cause is). */
  errorChars: 4_000,
} as const;

/**
 * When the service runs as root, each snippet runs as its own uid from this range (never a real
 * account), so one snippet's processes never count against another's process limit. A non-root
 * service runs snippets as its own uid mapped to an unprivileged one inside the jail.
 */
const JAIL_UID_BASE = 1_900_000_000;
const JAIL_UID_SPAN = 100_000;
let uidCursor = 0;

const RUNNER = readFileSync(path.join(__dirname, 'runner.py'), 'utf8');

export interface SnippetRequest {
  code: string;
  /** The JSON value bound to `input` in the snippet. */
  input?: unknown;
  /** Wall clock for the whole run; CPU seconds are bounded by it too. */
  timeoutMs: number;
  /** The plan's snippet output cap (plans.ts pythonSnippetOutputBytes): stdout, stderr and result together. */
  outputCapBytes: number;
  signal?: AbortSignal;
}

export interface SnippetOutput {
  /** The JSON value the snippet left in `result` (null when it set none). */
  result: unknown;
  stdout: string;
}

export interface JailTools { bwrap: string; prlimit: string; python: string }

/** The tools the jail needs, or a SnippetError naming what is missing. */
export function jailTools(): JailTools {
  const bwrap = BWRAP_CANDIDATES.find((p) => existsSync(p));
  const prlimit = PRLIMIT_CANDIDATES.find((p) => existsSync(p));
  const missing = [!bwrap && 'bubblewrap (bwrap)', !prlimit && 'util-linux prlimit', !existsSync(PYTHON_PATH) && `Debian python3 (${PYTHON_PATH})`].filter(Boolean);
  if (missing.length) throw new SnippetError('unavailable', `Python sandbox unavailable: ${missing.join(', ')} not installed (npm run setup)`);
  return { bwrap: bwrap as string, prlimit: prlimit as string, python: PYTHON_PATH };
}

/**
 * RLIMIT_NPROC counts every process of the real uid: it bounds a snippet only when the snippet
 * has a uid of its own (root service). Otherwise the pid namespace and the timeout bound it.
 */
function jailArgs(tools: JailTools, timeoutMs: number, ownUid: boolean): string[] {
  const cpuSeconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  return [
    `--as=${JAIL_LIMITS.memoryBytes}`, `--cpu=${cpuSeconds}`, ...(ownUid ? [`--nproc=${JAIL_LIMITS.maxProcesses}`] : []),
    `--nofile=${JAIL_LIMITS.openFiles}`, `--fsize=${JAIL_LIMITS.fileBytes}`, '--core=0', '--',
    tools.bwrap,
    '--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--clearenv',
    '--uid', '65534', '--gid', '65534', '--cap-drop', 'ALL',
    '--ro-bind', '/usr', '/usr',
    // Debian's merged /usr: the loader and python3 resolve through these.
    '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/bin', '/bin',
    '--proc', '/proc', '--dev', '/dev',
    '--size', String(JAIL_LIMITS.fileBytes), '--tmpfs', '/tmp',
    // bwrap's root and its /dev (with /dev/shm) are unbounded tmpfs: RAM a snippet could fill.
    // Made read-only once everything is mounted; the device nodes stay usable.
    '--remount-ro', '/dev', '--remount-ro', '/',
    '--chdir', '/tmp',
    // env -i drops the PWD bwrap sets for --chdir.
    '/usr/bin/env', '-i', tools.python, '-I', '-S', '-B', '-c', RUNNER,
  ];
}

/** Keeps the end of a traceback, where the exception is, within the error budget. */
interface Outcome {
  result?: unknown;
  error?: string;
}

/**
 * The runner's record on fd 3, after its "C": `{result}` or `{error: traceback}`. Undefined when
 * nothing (or no JSON) was written; 'malformed' for JSON of another shape. The snippet runs in the
 * runner's process and can write to fd 3 as well, so this is read as untrusted input.
 */
function readOutcome(text: string): Outcome | undefined | 'malformed' {
  if (!text) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'malformed';
  const o = parsed as Record<string, unknown>;
  if (o.error !== undefined && typeof o.error !== 'string') return 'malformed';
  return { result: o.result, error: o.error as string | undefined };
}

/** The runner's "U" record: why it could not confine the snippet (it never ran). */
function unavailableReason(text: string): string {
  try {
    const why = (JSON.parse(text) as { unavailable?: unknown } | null)?.unavailable;
    if (typeof why === 'string') return why;
  } catch {
    // Fall through: the runner died while writing it.
  }
  return 'the runner could not confine the snippet';
}

function trimTraceback(text: string): string {
  const t = text.trimEnd();
  return t.length <= JAIL_LIMITS.errorChars ? t : `…${t.slice(t.length - JAIL_LIMITS.errorChars)}`;
}

/**
 * Jails running now (the outer bwrap's pid, each the leader of its own process group).
 * Killing only the outer bwrap raced the jail's start (an outside probe): the jail's init (bwrap's
 * pid 1 in the namespace, which calls setsid, so it leaves the group) outlived it as an orphan
 * when the kill came before its parent-death signal took hold, kept the pipes open and the run's
 * snippet slot was never freed. So a kill freezes the outer bwrap (it cannot fork any more),
 * kills every process below it, then it and its group.
 */
const liveJails = new Set<number>();
let exitHook = false;

/** Pids of the processes below `root` (children, their children, ...), from /proc. */
function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const stat = procStat(Number(d));
    if (!stat) continue; // it ended while we looked
    const ppid = Number(stat[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(d));
    else children.set(ppid, [Number(d)]);
  }
  const out: number[] = [];
  for (let i = 0, queue = [root]; i < queue.length; i++) {
    for (const c of children.get(queue[i]) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

function sendSignal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Gone already.
  }
}

function killJail(pid: number | undefined): void {
  if (pid === undefined) return;
  sendSignal(pid, 'SIGSTOP');
  for (const p of descendantsOf(pid)) sendSignal(p, 'SIGKILL');
  sendSignal(-pid, 'SIGKILL');
  sendSignal(pid, 'SIGKILL');
}

/** Jails no longer share the service's process group (a terminal's Ctrl-C): they end with it here. */
function trackJail(pid: number | undefined): void {
  if (pid === undefined) return;
  liveJails.add(pid);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => { for (const p of liveJails) killJail(p); });
  }
}

/** After a kill, how long the jail's pipes may stay open (a process that escaped the group kill). */
const PIPE_GRACE_MS = 2_000;

/**
 * Runs one snippet in a fresh jail. Resolves `{result, stdout}`; rejects with SnippetError:
 * `python` (the trimmed traceback), `output_limit`, `timeout`, `memory`, `killed`, `unavailable`.
 */
export function runPythonSnippet(req: SnippetRequest): Promise<SnippetOutput> {
  const tools = jailTools();
  const ownUid = process.getuid?.() === 0;
  const spawnAs = ownUid ? { uid: JAIL_UID_BASE + (uidCursor++ % JAIL_UID_SPAN), gid: JAIL_UID_BASE } : {};
  const request = JSON.stringify({ code: req.code, input: req.input ?? null });
  return new Promise<SnippetOutput>((resolve, reject) => {
    if (req.signal?.aborted) return reject(new SnippetError('killed', 'Python snippet cancelled'));
    const child = spawn(tools.prlimit, jailArgs(tools, req.timeoutMs, ownUid), {
      env: {}, cwd: '/', stdio: ['pipe', 'pipe', 'pipe', 'pipe'], detached: true, ...spawnAs,
    });
    trackJail(child.pid);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const resultChunks: Buffer[] = [];
    let total = 0;
    let failure: SnippetError | undefined;
    const stop = (err: SnippetError) => {
      if (failure) return;
      failure = err;
      // The whole group: bwrap, and the jail's init even before its parent-death signal is set;
      // killing the init ends the pid namespace.
      killJail(child.pid);
    };
    // Settled on 'close' (every pipe shut). A process that escaped the kill would hold a pipe,
    // and with it the run's slot, forever: after a kill and the exit, the pipes are closed here.
    child.once('exit', () => {
      if (!failure) return;
      setTimeout(() => {
        for (const s of [child.stdin, child.stdout, child.stderr, child.stdio[3]]) s?.destroy();
      }, PIPE_GRACE_MS).unref();
    });
    const collect = (stream: Readable, into: Buffer[]) => stream.on('data', (chunk: Buffer) => {
      if (failure) return;
      total += chunk.length;
      if (total > req.outputCapBytes) {
        stop(new SnippetError('output_limit', `Python snippet output limit of ${req.outputCapBytes} bytes exceeded (stdout, stderr and result count together)`));
        return;
      }
      into.push(chunk);
    });
    collect(child.stdout, stdout);
    collect(child.stderr, stderr);
    collect(child.stdio[3] as Readable, resultChunks);

    const timer = setTimeout(() => stop(new SnippetError('timeout', `Python snippet timed out after ${req.timeoutMs} ms`)), req.timeoutMs);
    const onAbort = () => stop(new SnippetError('killed', 'Python snippet cancelled'));
    req.signal?.addEventListener('abort', onAbort, { once: true });

    // The jail may end before it reads all of stdin (a limit hit at start-up); its exit says why.
    (child.stdin as Writable).on('error', () => undefined);
    child.stdin.end(request);

    child.once('error', (err) => {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      reject(new SnippetError('unavailable', `Python sandbox unavailable: ${err.message}`));
    });
    const settle = (code: number | null, signal: NodeJS.Signals | null): void => {
      req.signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      const errText = Buffer.concat(stderr).toString('utf8');
      // The runner's first byte on fd 3 (runner.py): "C" = confined, the snippet ran; "U" = not.
      const channel = Buffer.concat(resultChunks).toString('utf8');
      if (channel.startsWith('U')) {
        return reject(new SnippetError('unavailable', `Python sandbox unavailable: ${unavailableReason(channel.slice(1))}`));
      }
      const resultText = channel.startsWith('C') ? channel.slice(1) : '';
      // bwrap reports its child's death by signal N as exit code 128 + N (SIGXCPU = 24: the CPU limit).
      if (code === 128 + 24) {
        return reject(new SnippetError('timeout', `Python snippet used its CPU time of ${Math.ceil(req.timeoutMs / 1000)} s`));
      }
      const outcome = readOutcome(resultText);
      if (outcome === 'malformed') {
        return reject(new SnippetError('python', 'Python snippet wrote a malformed record to the runner\'s result channel (fd 3)'));
      }
      if (outcome?.error !== undefined) {
        const kind = /^MemoryError\b/m.test(outcome.error) ? 'memory' : 'python';
        const hint = kind === 'memory' ? ` (the jail allows ${JAIL_LIMITS.memoryBytes / (1024 * 1024)} MB)` : '';
        return reject(new SnippetError(kind, `${trimTraceback(outcome.error) || 'Python snippet reported an error without text'}${hint}`));
      }
      if (outcome && code === 0) {
        return resolve({ result: outcome.result ?? null, stdout: Buffer.concat(stdout).toString('utf8') });
      }
      // bwrap's own failures (no user namespaces, a refused mount) come before Python ever starts.
      if (/^bwrap: /m.test(errText) && !channel) {
        return reject(new SnippetError('unavailable', `Python sandbox unavailable: ${trimTraceback(errText)}`));
      }
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const detail = errText.trim() ? `: ${trimTraceback(errText)}` : '';
      reject(new SnippetError(/MemoryError/.test(errText) ? 'memory' : 'killed', `Python snippet ${how} before returning a result${detail}`));
    };
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (child.pid !== undefined) liveJails.delete(child.pid);
      // Nothing the snippet wrote may throw here: this runs on the worker's event loop, and an
      // uncaught throw would end the whole service process.
      try {
        settle(code, signal);
      } catch (err) {
        reject(new SnippetError('killed', `Python snippet's output could not be read: ${(err as Error).message}`));
      }
    });
  });
}
