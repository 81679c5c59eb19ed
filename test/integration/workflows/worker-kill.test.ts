/**
 * A worker killed (SIGKILL) in the middle of a run: after a new worker starts, the run completes
 * once, and a node that had succeeded before the kill (a device.send) is not done again. Runs its
 * own stack: an api process that owns the local stack, and worker processes pointed at it.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { startServiceProcess, StartedService, storageEnvOf } from '../../support/service';
import type { Json } from '../../support/env';

jest.setTimeout(300_000);

const shared = { ENTITY_KEY_SECRET: randomBytes(32).toString('hex'), DATA_ENCRYPTION_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' };

async function call(base: string, method: string, p: string, key: string, body?: unknown) {
  const res = await fetch(`${base}${p}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json()) as Json };
}

describe('workflow run survives a killed worker', () => {
  let api: StartedService;
  const workers: StartedService[] = [];
  let server: http.Server;

  afterAll(async () => {
    for (const w of workers) await w.stop();
    await api?.stop();
    await new Promise((r) => server?.close(r));
  });

  it('completes once after the worker is killed mid-node and another worker starts', async () => {
    // The slow endpoint holds its first request until the worker is gone.
    let hits = 0;
    let firstHit: () => void = () => undefined;
    const firstHitSeen = new Promise<void>((r) => { firstHit = r; });
    server = http.createServer((_req, res) => {
      hits++;
      if (hits === 1) {
        firstHit();
        setTimeout(() => res.destroy(), 20_000);
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const slowUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/slow`;

    api = await startServiceProcess({ extraEnv: { ...shared, ROLES: 'api,mqtt' } });
    const e = api.env;
    const workerEnv = {
      ...shared, ROLES: 'worker', WEBHOOK_ALLOW_HOSTS: '127.0.0.1:*,localhost:*',
      ...storageEnvOf(e), TEMPORAL_ADDRESS: `127.0.0.1:${e.temporalPort}`,
      CLAMD_HOST: '127.0.0.1', CLAMD_PORT: String(e.clamdPort),
    };
    workers.push(await startServiceProcess({ extraEnv: workerEnv }));

    const { execFileSync } = await import('node:child_process');
    const cli = (...args: string[]) => JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { ...process.env, ...e.env, ...shared }, encoding: 'utf8' })) as Record<string, string>;
    const acct = cli('account', 'create', '--name', 'kill', '--plan', 'pro');
    const entity = cli('entity', 'create', '--account', acct.accountId, '--name', 'dev');

    const created = await call(e.baseUrl, 'POST', '/api/workflows', acct.apiKey, {
      name: 'survivor',
      nodes: [
        { id: 'notify', type: 'device.send', config: { entity: 'dev', data: { step: 'before' } } },
        { id: 'slow', type: 'http', config: { method: 'GET', url: slowUrl }, timeout_ms: 8_000, retry: { max_attempts: 3, backoff_ms: 500 } },
        { id: 'done', type: 'transform', config: { expression: 'nodes.slow.body.ok' } },
      ],
      edges: [{ from: 'notify', to: 'slow' }, { from: 'slow', to: 'done' }],
    });
    expect(created.status).toBe(201);
    const started = await call(e.baseUrl, 'POST', `/api/workflows/${created.body.id}/run`, acct.apiKey, {});
    expect(started.status).toBe(202);
    const { runId } = started.body;

    await firstHitSeen;
    process.kill(workers[0].env.pid, 'SIGKILL');
    await new Promise((r) => workers[0].child.once('exit', r));
    workers.push(await startServiceProcess({ extraEnv: workerEnv }));

    let run: Json;
    for (let i = 0; ; i++) {
      run = (await call(e.baseUrl, 'GET', `/api/workflows/runs/${runId}`, acct.apiKey)).body;
      if (run.status !== 'running') break;
      if (i > 240) throw new Error('run never finished');
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(run.status).toBe('completed');
    expect(run.output).toEqual({ done: true });
    const byId = Object.fromEntries(run.nodes.map((n: { id: string }) => [n.id, n]));
    expect(byId.notify).toMatchObject({ status: 'completed', executions: 1, attempts: 1 });
    expect(byId.slow.status).toBe('completed');
    expect(byId.slow.attempts).toBeGreaterThanOrEqual(2);

    // The message sent before the kill arrived once.
    const inbox = await call(e.baseUrl, 'GET', '/api/entities/check_messages?limit=10', entity.apiKey);
    expect(inbox.body.messages).toHaveLength(1);
    expect(inbox.body.messages[0].data).toEqual({ step: 'before' });
  });
});
