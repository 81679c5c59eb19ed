/**
 * Issue 34 §1 and §2 from outside, on the real stack: a vault reference that arrives as data never
 * turns into the secret (run input forwarded to a device, or passed on through flow.call), and one
 * account's runaway expressions or hostile input_schema do not hold other accounts' requests.
 * The waits are bounded by what finished first, not by how fast the machine is.
 */
import { api, cli, newAccount } from '../../support/env';
import { newDevice, until } from '../mqtt/support';
import { createWorkflow, node, startRun, transform, waitForRun } from './helpers';

jest.setTimeout(300_000);

const SECRET = `leak-me-${Date.now()}-Qx7`;
let victim: { accountId: string; apiKey: string };

beforeAll(async () => {
  victim = await newAccount('pro', 'expr-victim');
  expect((await api('POST', '/api/vault', { key: victim.apiKey, body: { name: 'LEAK', value: SECRET } })).status).toBe(201);
});

async function inbox(entityKey: string): Promise<Array<{ data: Record<string, unknown> }>> {
  const r = await api('GET', '/api/entities/check_messages?limit=10', { key: entityKey });
  expect(r.status).toBe(200);
  return r.body.messages;
}

it('a run input holding {{ vault.NAME }} reaches the device as that text, directly and through flow.call', async () => {
  const entity = await cli('entity', 'create', '--account', victim.accountId, '--name', 'echo-dev');
  expect(entity.code).toBe(0);
  const echo = await createWorkflow(victim.apiKey, {
    name: 'echo', nodes: [{ id: 'send', type: 'device.send', config: { entity: 'echo-dev', data: { v: '{{ input.x }}', all: '{{ input }}' } } }], edges: [],
  });
  const relay = await createWorkflow(victim.apiKey, {
    name: 'relay', nodes: [{ id: 'call', type: 'flow.call', config: { workflow_id: echo, input: { x: '{{ input.x }}' } } }], edges: [],
  });
  for (const wf of [echo, relay]) {
    const run = await waitForRun(victim.apiKey, await startRun(victim.apiKey, wf, { x: '{{ vault.LEAK }}' }));
    expect(run.status).toBe('completed');
    expect(JSON.stringify(run)).not.toContain(SECRET);
  }
  const got = await inbox(entity.json?.apiKey as string);
  expect(got.map((m) => m.data.v)).toEqual(['{{ vault.LEAK }}', '{{ vault.LEAK }}']);
  expect(JSON.stringify(got)).not.toContain(SECRET);
});

it('a device message holding {{ vault.NAME }} that triggers an exposed workflow is echoed back as that text', async () => {
  const device = await newDevice(victim.accountId, 'talker');
  const wf = await createWorkflow(victim.apiKey, {
    name: 'echo back', exposed: true, trigger: { tags: ['echo'], match: 'any' },
    nodes: [{ id: 'reply', type: 'device.send', config: { entity: 'talker', data: { said: '{{ input.message.data.text }}' } } }], edges: [],
  });
  const sent = await api('POST', '/api/entities/message', { key: device.apiKey, body: { msg_type: 'publish', data: { text: 'hi {{ vault.LEAK }}' }, context: { tags: ['echo'] } } });
  expect(sent.status).toBe(200);
  const runs = async () => (await api('GET', `/api/workflows/${wf}/runs`, { key: victim.apiKey })).body.runs as Array<{ runId: string }>;
  const first = await until(async () => (await runs())[0], 60_000, 'a run for the publish');
  expect((await waitForRun(victim.apiKey, first.runId)).status).toBe('completed');
  const got = await inbox(device.apiKey);
  expect(got.map((m) => m.data)).toEqual([{ said: 'hi {{ vault.LEAK }}' }]);
});

it("one account's runaway expressions do not hold another account's requests or runs", async () => {
  const greedy = await newAccount('pro', 'expr-greedy');
  // A backtracking regular expression inside one $match: JSONata's own timeout cannot stop it.
  const hog = await createWorkflow(greedy.apiKey, {
    name: 'hog', nodes: [transform('spin', `$contains("${'a'.repeat(34)}!", /^(a+)+$/)`, { timeout_ms: 20_000, retry: { max_attempts: 1 } })], edges: [],
  });
  const hogs = await Promise.all([1, 2, 3].map(() => startRun(greedy.apiKey, hog)));
  const quick = await createWorkflow(victim.apiKey, { name: 'quick', nodes: [transform('one', '1 + 1')], edges: [] });
  // While the hogs spin, the other account is answered and its run completes first.
  for (let i = 0; i < 5; i++) expect((await api('GET', '/api/vault', { key: victim.apiKey })).status).toBe(200);
  const quickRun = await waitForRun(victim.apiKey, await startRun(victim.apiKey, quick));
  expect(quickRun.status).toBe('completed');
  expect(node(quickRun, 'one').output).toBe(2);
  const stillRunning = await Promise.all(hogs.map((id) => api('GET', `/api/workflows/runs/${id}`, { key: greedy.apiKey })));
  expect(stillRunning.some((r) => r.body.status === 'running' || r.body.status === 'queued')).toBe(true);

  for (const id of hogs) {
    const run = await waitForRun(greedy.apiKey, id);
    expect(run.status).toBe('failed');
    // Whichever stops it first: the expression thread's hard limit or the activity's own timeout.
    expect(run.error).toMatch(/^Node "spin" failed: (expression failed: expression ran longer than its 20000 ms budget|timed out)/);
  }
});

it('an input_schema pattern that backtracks answers its run request at once, with 422', async () => {
  const wf = await createWorkflow(victim.apiKey, {
    name: 'schema', input_schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } }, nodes: [transform('t', '1')], edges: [],
  });
  // 40 characters: with a backtracking engine this request would not answer for hours.
  const r = await api('POST', `/api/workflows/${wf}/run`, { key: victim.apiKey, body: { input: { s: `${'a'.repeat(40)}!` } } });
  expect(r.status).toBe(422);
  expect(r.body.details[0]).toMatchObject({ path: 'input.s' });
  const refused = await api('POST', '/api/workflows', { key: victim.apiKey, body: { name: 'look', input_schema: { type: 'string', pattern: '(?=a)a' }, nodes: [transform('t', '1')], edges: [] } });
  expect(refused.status).toBe(422);
  expect(refused.body.details[0]).toMatchObject({ path: 'input_schema' });
});
