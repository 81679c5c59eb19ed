/**
 * The run queue survives kill -9 of the whole service: with runs running and queued on a Free
 * account (2 slots), the process is killed and started again on the same data; every admitted
 * run reaches a final status once, none lost, none run twice.
 */
import type { Json } from '../../support/env';
import { startServiceProcess, StartedService } from '../../support/service';

jest.setTimeout(300_000);

async function call(s: StartedService, method: string, p: string, key: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${s.env.baseUrl}${p}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

it('queued and running runs all complete exactly once after kill -9 and a restart', async () => {
  const first = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  let second: StartedService | undefined;
  try {
    const { execFileSync } = await import('node:child_process');
    const { apiKey } = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'account', 'create', '--name', 'restart', '--plan', 'free'], {
      env: { ...process.env, ...first.env.env }, encoding: 'utf8',
    })) as { apiKey: string };
    const wf = await call(first, 'POST', '/api/workflows', apiKey, { name: 'slow', nodes: [{ id: 'wait', type: 'delay', config: { ms: 4_000 } }], edges: [] });
    expect(wf.status).toBe(201);
    const runs: Json[] = [];
    for (let i = 0; i < 5; i++) runs.push((await call(first, 'POST', `/api/workflows/${wf.body.id}/run`, apiKey, { input: i })).body);
    expect(runs.map((r) => r.status)).toEqual(['running', 'running', 'queued', 'queued', 'queued']);

    process.kill(first.env.pid, 'SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    second = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' }, reuse: first.env });

    const until = Date.now() + 180_000;
    const final: Json[] = [];
    for (const r of runs) {
      for (;;) {
        const got = await call(second, 'GET', `/api/workflows/runs/${r.runId}`, apiKey);
        if (!['queued', 'running'].includes(got.body.status)) { final.push(got.body); break; }
        if (Date.now() > until) throw new Error(`run ${r.runId} still ${got.body.status}`);
        await new Promise((res) => setTimeout(res, 500));
      }
    }
    expect(final.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
    for (const r of final) expect(r.nodes[0]).toMatchObject({ id: 'wait', status: 'completed', executions: 1 });
    const usage = await call(second, 'GET', '/api/account/usage', apiKey);
    expect(usage.body.workflows).toMatchObject({ running: 0, queued: 0, runs_this_month: 5 });
  } finally {
    if (second) await second.stop();
    else if (first.child.exitCode === null) await first.stop();
  }
});
