/**
 * Runs Debian's ffmpeg/ffprobe on untrusted media: no shell (argument vector only), no stdin
 * (`-nostdin`, stdin closed), only the `file` protocol (no network, no pipes to other programs),
 * an address-space and CPU limit set by prlimit before the tool starts, and a wall-clock limit
 * after which it is killed. The tool runs in the clip's private directory.
 */
import { spawn } from 'node:child_process';
import { FIXED_LIMITS } from '../accounts/plans';
import { ClipRejected } from './frames';

const OUTPUT_CAP = 1024 * 1024;

export type MediaTool = 'ffmpeg' | 'ffprobe';

/** The full argument vector, hardening options first. Exported for the unit test of the rules. */
export function toolArgs(tool: MediaTool, args: readonly string[]): string[] {
  const limits = [`--as=${FIXED_LIMITS.clipToolMemoryBytes}`, `--cpu=${FIXED_LIMITS.clipToolSeconds}`, '--nofile=64', '--'];
  const common = ['-hide_banner', '-loglevel', 'error', '-protocol_whitelist', 'file'];
  const own = tool === 'ffmpeg' ? ['-nostdin', '-y', ...common] : ['-v', 'error', '-protocol_whitelist', 'file'];
  return [...limits, tool, ...own, ...args];
}

/** Resolves with stdout; a tool that fails, or runs past the time limit (killed), is a ClipRejected. */
export function runTool(tool: MediaTool, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('prlimit', toolArgs(tool, args), { cwd, shell: false, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (c: Buffer) => { if (stdout.length < OUTPUT_CAP) stdout += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => { if (stderr.length < OUTPUT_CAP) stderr += c.toString('utf8'); });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, FIXED_LIMITS.clipToolSeconds * 1000);
    child.on('error', (err) => {
      clearTimeout(timer);
      // The tool (or prlimit) is missing: an operator problem, not the clip's; the activity retries.
      reject(new Error(`${tool} could not start: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) return reject(new ClipRejected(`${tool} ran longer than ${FIXED_LIMITS.clipToolSeconds} s and was stopped`));
      if (code === 0) return resolve(stdout);
      const detail = stderr.trim().split('\n').slice(-3).join('; ').slice(0, 300);
      reject(new ClipRejected(`${tool} could not process the clip (${signal ?? `exit ${code}`})${detail ? `: ${detail}` : ''}`));
    });
  });
}
