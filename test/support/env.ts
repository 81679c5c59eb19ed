/** What integration tests know about the running stack, and small clients for it. */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { StackEnv } from './service';
import { ROOT } from './service';

export function stack(): StackEnv {
  const file = process.env.SENTINEL_TEST_STACK;
  if (!file) throw new Error('SENTINEL_TEST_STACK is not set: run integration tests through jest (its global setup starts the stack)');
  return JSON.parse(readFileSync(file, 'utf8')) as StackEnv;
}

/** Parsed JSON of a response: tests index into it freely. */
export type Json = any;

export interface CliResult { code: number; stdout: string; stderr: string; json?: Record<string, string> }

/** Runs the operator CLI exactly as an operator would (`npm run cli -- ...`), against the test stack. */
export function cli(...args: string[]): Promise<CliResult> {
  const s = stack();
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'main.ts'), ...args], {
      cwd: ROOT, env: { ...process.env, ...s.env }, timeout: 60_000,
    }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      let json: Record<string, string> | undefined;
      try { json = JSON.parse(stdout) as Record<string, string>; } catch { json = undefined; }
      resolve({ code, stdout, stderr, json });
    });
  });
}

export async function api(method: string, p: string, opts: { key?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string | Buffer } = {}): Promise<{ status: number; body: Json; headers: Headers; text: string }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | Buffer | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${stack().baseUrl}${p}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try { parsed = JSON.parse(text); } catch { parsed = undefined; }
  return { status: res.status, body: parsed, headers: res.headers, text };
}

export async function newAccount(plan: string, name = `acct-${Date.now()}`): Promise<{ accountId: string; apiKey: string; apiKeyId: string }> {
  const r = await cli('account', 'create', '--name', name, '--plan', plan);
  if (r.code !== 0 || !r.json) throw new Error(`account create failed: ${r.stderr}`);
  return r.json as { accountId: string; apiKey: string; apiKeyId: string };
}

/**
 * Rate limits count in fixed windows aligned to the epoch (limits/service.ts). A test that needs
 * a burst to land in one window waits, when fewer than `needMs` remain in the current window,
 * until the next one begins.
 */
export async function clearOfWindowEdge(windowMs: number, needMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < needMs) await new Promise((res) => setTimeout(res, left + 50));
}
