/**
 * Several processes on one DATA_DIR (docs/contract.md §11): a second full start on the stack's
 * DATA_DIR refuses, naming the running service's pid, and the running one keeps serving; a
 * `ROLES=api` process beside it serves the same accounts, and exactly-once delivery, state merges,
 * counters and the per-key rate limit hold across the two processes.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { api, clearOfWindowEdge, Json, newAccount, stack } from '../../support/env';
import { pickPorts, ROOT, startServiceProcess, StartedService } from '../../support/service';
import { fleet, publish } from '../messaging/helpers';

jest.setTimeout(300_000);

let beside: StartedService;

beforeAll(async () => {
  const e = stack();
  beside = await startServiceProcess({
    extraEnv: {
      // The keys come from DATA_DIR/secrets.json, as for the service; clamd from the service's lock file.
      ROLES: 'api', DATA_DIR: e.dataDir, TEMPORAL_ADDRESS: `127.0.0.1:${e.temporalPort}`, METRICS_PORT: '0',
    },
  });
});
afterAll(async () => {
  await beside?.stop();
});

/** `api` against the process beside the stack's service. */
async function besideApi(method: string, p: string, key: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${beside.env.baseUrl}${p}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

test('a second full start on a DATA_DIR in use refuses with the running pid, and the running service keeps serving', async () => {
  const e = stack();
  const [port, mqttPort, temporalPort, uiPort] = await pickPorts(4);
  const second = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: e.dataDir, PORT: String(port), MQTT_PORT: String(mqttPort), TEMPORAL_PORT: String(temporalPort), TEMPORAL_UI_PORT: String(uiPort), METRICS_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  second.stdout?.on('data', (c: Buffer) => { out += c.toString(); });
  second.stderr?.on('data', (c: Buffer) => { out += c.toString(); });
  const code = await new Promise<number | null>((resolve) => second.once('close', resolve));
  expect(code).toBe(1);
  expect(out).toContain(`in use by the running service (pid ${e.pid}`);
  expect(out).not.toMatch(/^ready\b/m);
  const h = await api('GET', '/healthz');
  expect(h.status).toBe(200);
  expect(h.body.status).toBe('ok');
});

test('1,000 directed messages polled by 20 pollers over both processes are delivered exactly once', async () => {
  const f = await fleet('pro', ['sender', 'hub']);
  const sent = new Set<string>();
  for (let i = 0; i < 10; i++) {
    const batch = Array.from({ length: 100 }, (_, j) => ({ msg_type: 'publish', data: { n: i * 100 + j }, dest: 'hub' }));
    const r = await api('POST', '/api/entities/messages', { key: f.devices.sender.apiKey, body: batch });
    expect(r.status).toBe(200);
    for (const item of r.body.results as Json[]) {
      expect(item.code).toBe(200);
      sent.add(String(item.content));
    }
  }
  expect(sent.size).toBe(1000);
  const received: number[] = [];
  const poll = async (which: number) => {
    for (;;) {
      const path_ = '/api/entities/check_messages?limit=7';
      const r = which % 2 === 0
        ? await api('GET', path_, { key: f.devices.hub.apiKey })
        : await besideApi('GET', path_, f.devices.hub.apiKey);
      if (r.status === 429) continue;
      expect(r.status).toBe(200);
      if (r.body.messages === null) return;
      for (const m of r.body.messages as Json[]) received.push(m.data.n as number);
    }
  };
  await Promise.all(Array.from({ length: 20 }, (_, i) => poll(i)));
  expect(received).toHaveLength(1000);
  expect(new Set(received).size).toBe(1000);
});

test('40 concurrent state merges over both processes keep all 40 keys', async () => {
  const f = await fleet('pro', ['dev']);
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0
    ? api('PATCH', '/api/entities/status-table', { key: f.devices.dev.apiKey, body: { [`k${i}`]: i } })
    : besideApi('PATCH', '/api/entities/status-table', f.devices.dev.apiKey, { [`k${i}`]: i }))));
  expect(results.map((r) => r.status)).toEqual(Array(40).fill(200));
  const table = (await api('GET', '/api/entities/status-table', { key: f.devices.dev.apiKey })).body.statusTable as Record<string, number>;
  expect(Object.keys(table).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `k${i}`).sort());
});

test('20 scans over both processes count exactly 20', async () => {
  const f = await newAccount('pro');
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0
    ? api('POST', '/api/scan/payload', { key: f.apiKey, body: { payload: `hello ${i}` } })
    : besideApi('POST', '/api/scan/payload', f.apiKey, { payload: `hello ${i}` }))));
  expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
  const usage = await besideApi('GET', '/api/account/usage', f.apiKey);
  expect(usage.status).toBe(200);
  expect(usage.body.scans_used).toBe(20);
});

test('the per-key rate limit holds across both processes', async () => {
  const f = await fleet('pro', ['dev']);
  await clearOfWindowEdge(1000, 700);
  const startedAt = Date.now();
  const burst = await Promise.all(Array.from({ length: 120 }, (_, i) => (i % 2 === 0
    ? publish(f.devices.dev.apiKey, { msg_type: 'heartbeat' })
    : besideApi('POST', '/api/entities/message', f.devices.dev.apiKey, { msg_type: 'heartbeat' }))));
  const windows = Math.floor(Date.now() / 1000) - Math.floor(startedAt / 1000) + 1;
  const ok = burst.filter((r) => r.status === 200).length;
  expect(burst.filter((r) => r.status === 429).length).toBeGreaterThan(0);
  expect(ok).toBeLessThanOrEqual(50 * windows);
});
