/**
 * The stack keeps its data across restarts, and a restart after SIGKILL works on the same ports
 * and DATA_DIR (no stale locks, no orphaned children holding ports), without losing what was
 * acknowledged just before the kill.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { procStat, readJsonFile } from '../../src/stack/child';
import { startServiceProcess, StartedService } from '../support/service';

jest.setTimeout(180_000);

async function createAccount(s: StartedService): Promise<{ apiKey: string }> {
  const { execFileSync } = await import('node:child_process');
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'account', 'create', '--name', 'durable', '--plan', 'starter'], {
    env: { ...process.env, ...s.env.env }, encoding: 'utf8',
  });
  return JSON.parse(out) as { apiKey: string };
}

async function usage(s: StartedService, key: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${s.env.baseUrl}/api/account/usage`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

it('keeps accounts across a clean restart and comes back after kill -9 on the same ports', async () => {
  const first = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  const { apiKey } = await createAccount(first);
  expect((await usage(first, apiKey)).body.plan_tier).toBe('starter');
  await first.stop({ keepData: true });

  const second = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' }, reuse: first.env });
  expect((await usage(second, apiKey)).status).toBe(200);
  // Acknowledged just before the kill: it must survive it (FerretDB syncs its log only at
  // checkpoints, see docs/local-stack.md, "Durability"; a killed process loses nothing written).
  const late = await createAccount(second);
  process.kill(second.env.pid, 'SIGKILL');
  await new Promise((r) => second.child.once('exit', r));

  const third = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' }, reuse: first.env });
  try {
    const u = await usage(third, apiKey);
    expect(u.status).toBe(200);
    expect(u.body.plan_tier).toBe('starter');
    expect((await usage(third, late.apiKey)).status).toBe(200);
    const health = await fetch(`${third.env.baseUrl}/healthz`);
    expect(health.status).toBe(200);
  } finally {
    await third.stop();
  }
});

it('kill -9 during 1,000 publishes loses no acknowledged message', async () => {
  const first = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  const { apiKey } = await createAccount(first);
  const call = async (s: StartedService, method: string, p: string, key: string, body?: unknown) => {
    const res = await fetch(`${s.env.baseUrl}${p}`, {
      method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const bulk = await call(first, 'POST', '/api/entities/bulk', apiKey, { entities: [{ name: 'sensor' }] });
  const deviceKey = (bulk.body.results as Array<{ apiKey: string }>)[0].apiKey;

  // Ten batches of 100, four in flight; the kill lands after the fourth acknowledgement, while
  // others are being written.
  const acknowledged: string[] = [];
  let acks = 0;
  let killed = false;
  const exited = new Promise((r) => first.child.once('exit', r));
  const send = async (b: number) => {
    const batch = Array.from({ length: 100 }, (_, i) => ({ msg_type: 'publish', data: { n: b * 100 + i } }));
    const r = await call(first, 'POST', '/api/entities/messages', deviceKey, batch).catch(() => undefined);
    if (!r || r.status !== 200) return;
    for (const item of r.body.results as Array<{ code: number; content: string }>) if (item.code === 200) acknowledged.push(item.content);
    if (++acks === 4 && !killed) {
      killed = true;
      process.kill(first.env.pid, 'SIGKILL');
    }
  };
  let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < 10 && !killed) await send(next++);
  }));
  await exited;
  expect(killed).toBe(true);
  expect(acknowledged.length).toBeGreaterThanOrEqual(400);

  const again = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' }, reuse: first.env });
  try {
    // The history, listed a page at a time (a GET per id would meet the account's rate limit).
    const stored = new Set<string>();
    for (let offset = 0; ; offset += 100) {
      const page = await call(again, 'GET', `/api/entities/messages?limit=100&offset=${offset}`, apiKey);
      expect(page.status).toBe(200);
      const items = page.body.messages as Array<{ id: string }>;
      for (const m of items) stored.add(m.id);
      if (items.length < 100) break;
    }
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
  } finally {
    await again.stop();
  }
});

/** The pids of the children a service's pidfiles record (DATA_DIR/run/<part>.pid), by part. */
function childPids(s: StartedService): Record<string, number> {
  const run = path.join(s.env.dataDir, 'run');
  return Object.fromEntries(readdirSync(run).filter((n) => n.endsWith('.pid'))
    .map((n) => [n.slice(0, -4), readJsonFile<{ pid: number }>(path.join(run, n))?.pid])
    .filter((e): e is [string, number] => typeof e[1] === 'number'));
}

// Found by an outside probe: clamd (or a FerretDB, or Temporal) killed after start left the
// service up: scanning without ClamAV, delivering unscanned transfers, or answering only 5xx,
// for good. Now the service stops whole, with status 1 and a line saying which part died.
it('a local-stack child that dies after start stops the whole service with status 1, naming it', async () => {
  const s = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const temporal = childPids(s).temporal;
    const exited = new Promise<number | null>((resolve) => s.child.once('exit', (code) => resolve(code)));
    process.kill(temporal, 'SIGKILL');
    expect(await exited).toBe(1);
    expect(readFileSync(s.env.logFile, 'utf8')).toContain('temporal of the local stack exited unexpectedly (SIGKILL); stopping the service');
    // Everything else it started was stopped with it.
    expect(childPids(s)).toEqual({});
  } finally {
    await s.stop();
  }
});

// Found by an outside probe: Ctrl-C at `npm start` signals the terminal's whole process group, the
// children exited first, and every interactive stop ended as "clamd exited unexpectedly", status 1.
it('children run in process groups of their own, and a stop signalled to every process at once is a clean stop', async () => {
  const s = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const pids = Object.values(childPids(s));
    expect(pids.length).toBeGreaterThanOrEqual(2);
    const pgrp = (pid: number) => Number(procStat(pid)?.[2]);
    for (const pid of pids) expect(pgrp(pid)).not.toBe(pgrp(s.env.pid));
    // As a supervisor that signals the whole control group does: the children too, at once.
    const exited = new Promise<number | null>((resolve) => s.child.once('exit', (code) => resolve(code)));
    for (const pid of pids) process.kill(pid, 'SIGTERM');
    process.kill(s.env.pid, 'SIGTERM');
    expect(await exited).toBe(0);
    expect(readFileSync(s.env.logFile, 'utf8')).not.toContain('stopping the service');
  } finally {
    await s.stop();
  }
});
