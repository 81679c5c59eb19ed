/**
 * The stack keeps its data across restarts, and a restart after SIGKILL works on the same ports
 * and DATA_DIR (no stale locks, no orphaned children holding ports), without losing what was
 * acknowledged just before the kill.
 */
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
