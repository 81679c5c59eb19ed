/**
 * The node kinds that touch the outside, from outside against the real stack: python snippets in
 * the jail (plan output caps, an escape attempt), aws.s3 through a connector against moto, and
 * `{{ vault.NAME }}` reaching a target while staying out of the run record, the Temporal
 * history, the service log and the stored records.
 */
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { api, Json, newAccount, stack } from '../../support/env';
import { startMoto, MotoServer } from '../../support/moto';
import { filesHolding } from '../../support/db';
import { ROOT } from '../../support/service';
import { createWorkflow, node, startRun, waitForRun } from './helpers';
import { until } from '../mqtt/support';

jest.setTimeout(300_000);

const KEY_ID = `AKIAFLOW${Date.now()}`;
const SECRET = `flowSecret/${Date.now()}+xyz`;
const BUCKET = 'flow-results';

/**
 * The Temporal history of a run's workflow as `temporal workflow show` prints it for an operator,
 * with every payload's base64 `data` decoded beside it (that is what the Web UI shows).
 */
async function temporalHistory(workflowId: string): Promise<string> {
  const raw = await new Promise<string>((resolve, reject) => execFile(path.join(ROOT, '.tools', 'bin', 'temporal'), [
    'workflow', 'show', '--address', `127.0.0.1:${stack().temporalPort}`, '--workflow-id', workflowId, '--output', 'json',
  ], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => (err ? reject(err) : resolve(stdout))));
  const decoded = [...raw.matchAll(/"data": "([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1], 'base64').toString('utf8'));
  return `${raw}\n${decoded.join('\n')}`;
}

/** The store's files (records, write-ahead log, stored bytes) holding `text`: a dump of the database. */
const filesContaining = (text: string): string[] => filesHolding(Buffer.from(text, 'utf8'));
/** What the records database (or its write-ahead log) holds shows up as one of these. */
const RECORDS_FILE = /^db\/records\.sqlite/;

async function createConnector(key: string, endpoint: string): Promise<string> {
  const r = await api('POST', '/api/connectors', { key, body: { name: `s3-${endpoint}`, type: 'aws', region: 'us-east-1', endpoint, access_key_id: KEY_ID, secret_access_key: SECRET } });
  if (r.status !== 201) throw new Error(`connector answered ${r.status}: ${r.text}`);
  return r.body.id as string;
}

const runOf = async (key: string, nodes: unknown[], edges: unknown[] = [], input?: unknown): Promise<Json> => {
  const wf = await createWorkflow(key, { name: `outside ${Date.now()}`, nodes, edges });
  return waitForRun(key, await startRun(key, wf, input));
};

let moto: MotoServer;
let pro: { accountId: string; apiKey: string };
let free: { accountId: string; apiKey: string };

beforeAll(async () => {
  moto = await startMoto();
  pro = await newAccount('pro', `outside-pro-${Date.now()}`);
  free = await newAccount('free', `outside-free-${Date.now()}`);
  const s3 = new S3Client({ region: 'us-east-1', endpoint: moto.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  s3.destroy();
});

afterAll(async () => {
  await moto?.stop();
});

it('python -> aws.s3 put -> aws.s3 get: the computed value goes through the bucket into the run output; no credentials in the history', async () => {
  const connector = await createConnector(pro.apiKey, moto.endpoint);
  const run = await runOf(pro.apiKey, [
    { id: 'compute', type: 'python', config: { code: 'result = {"total": sum(input["numbers"]) * 7}\nprint("summed", len(input["numbers"]))' } },
    { id: 'store', type: 'aws.s3', config: { connector_id: connector, operation: 'put', bucket: BUCKET, key: 'runs/{{ vars.runId }}.json', body: '{{ nodes.compute.result }}' } },
    { id: 'read', type: 'aws.s3', config: { connector_id: connector, operation: 'get', bucket: BUCKET, key: 'runs/{{ vars.runId }}.json' } },
  ], [{ from: 'compute', to: 'store' }, { from: 'store', to: 'read' }], { numbers: [1, 2, 3] });
  expect(run.status).toBe('completed');
  expect(node(run, 'compute').output).toEqual({ result: { total: 42 }, stdout: 'summed 3\n' });
  expect(node(run, 'store').output).toMatchObject({ operation: 'put', bucket: BUCKET, key: `runs/${run.runId}.json` });
  expect(run.output.read).toMatchObject({ operation: 'get', key: `runs/${run.runId}.json`, encoding: 'utf8', contentType: 'application/json' });
  expect(JSON.parse(run.output.read.body)).toEqual({ total: 42 });
  // Each S3 attempt is a run-log line.
  expect(run.log.filter((l: Json) => l.node === 'store' && /aws\.s3 put attempt 1: ok/.test(l.message))).toHaveLength(1);

  const history = await temporalHistory(run.temporal.workflowId);
  expect(history).toContain('aws.s3');
  expect(history).not.toContain(KEY_ID);
  expect(history).not.toContain(SECRET);
  expect(JSON.stringify(run)).not.toContain(SECRET);
  expect(readFileSync(stack().logFile, 'utf8')).not.toContain(SECRET);
  expect(filesContaining(SECRET)).toEqual([]);
  // The check itself sees what is stored: the computed value is in the run's outputs.
  expect(filesContaining(`runs/${run.runId}.json`)).toContainEqual(expect.stringMatching(RECORDS_FILE));
});

it('a Free account\'s snippet printing 1.5 MB fails with output limit; a Pro account\'s passes', async () => {
  const nodes = [{ id: 'big', type: 'python', config: { code: 'print("x" * 1_500_000)\nresult = "done"' } }];
  const freeRun = await runOf(free.apiKey, nodes);
  expect(freeRun.status).toBe('failed');
  expect(node(freeRun, 'big').status).toBe('failed');
  expect(node(freeRun, 'big').error).toMatch(/output limit/);

  const proRun = await runOf(pro.apiKey, nodes);
  expect(proRun.status).toBe('completed');
  // Above 256 KB the output is stored bytes apart from the run record, which shows a reference to it.
  expect(node(proRun, 'big').output).toEqual({ $ref: `/api/workflows/runs/${proRun.runId}/outputs/big`, bytes: expect.any(Number) });
  const full = await api('GET', `/api/workflows/runs/${proRun.runId}/outputs/big`, { key: pro.apiKey });
  expect(full.status).toBe(200);
  expect(full.body.result).toBe('done');
  expect(full.body.stdout).toHaveLength(1_500_001);
});

/** Pids of host processes whose name (/proc/PID/comm, set by the snippet itself through prctl) is `name`. */
function processesNamed(name: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name) found.push(Number(pid));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

// Found by an outside probe: Temporal hands an activity its cancellation only in a heartbeat's
// answer, and node activities sent none, so a cancelled run's jail ran on to its node timeout.
it('cancelling a run kills its running Python jail at once, not at the node timeout', async () => {
  const name = `snip${Date.now() % 1e9}`;
  const code = `import ctypes, time\nctypes.CDLL(None).prctl(15, b"${name}", 0, 0, 0)\ntime.sleep(600)`;
  const wf = await createWorkflow(pro.apiKey, { name: `cancel jail ${name}`, nodes: [{ id: 'sleepy', type: 'python', timeout_ms: 300_000, config: { code } }], edges: [] });
  const runId = await startRun(pro.apiKey, wf);
  await until(async () => processesNamed(name).length > 0 || undefined, 60_000, 'the snippet running in its jail');
  expect((await api('POST', `/api/workflows/runs/${runId}/cancel`, { key: pro.apiKey })).status).toBe(200);
  expect((await waitForRun(pro.apiKey, runId, 60_000)).status).toBe('cancelled');
  await until(async () => processesNamed(name).length === 0 || undefined, 60_000, 'the jail gone after the cancel');
});

it('a snippet reading the service\'s DATA_DIR/secrets.json fails its node with the traceback; the service stays healthy', async () => {
  const secretsFile = path.join(stack().dataDir, 'secrets.json');
  const secrets = readFileSync(secretsFile, 'utf8');
  const run = await runOf(pro.apiKey, [{ id: 'escape', type: 'python', config: { code: `result = open(${JSON.stringify(secretsFile)}).read()` } }]);
  expect(run.status).toBe('failed');
  const error = node(run, 'escape').error as string;
  expect(error).toMatch(/Traceback[\s\S]*FileNotFoundError/);
  expect(node(run, 'escape').attempts).toBe(1);
  expect(JSON.stringify(run)).not.toContain(secrets.slice(0, 40));
  expect((await api('GET', '/healthz')).status).toBe(200);
});

it('a connector whose endpoint accepts and never answers fails the node after 3 attempts, each in the run log', async () => {
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((s) => { sockets.add(s); s.on('error', () => undefined); });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  try {
    const connector = await createConnector(pro.apiKey, `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`);
    const run = await runOf(pro.apiKey, [
      { id: 'put', type: 'aws.s3', timeout_ms: 120_000, config: { connector_id: connector, operation: 'put', bucket: BUCKET, key: 'never', body: 'x' } },
    ]);
    expect(run.status).toBe('failed');
    expect(node(run, 'put').error).toMatch(/failed after 3 attempts/);
    const attempts = run.log.filter((l: Json) => l.node === 'put' && /^aws\.s3 put attempt \d: failed/.test(l.message)).map((l: Json) => l.message.slice(0, 22));
    expect(attempts).toEqual(['aws.s3 put attempt 1: ', 'aws.s3 put attempt 2: ', 'aws.s3 put attempt 3: ']);
    expect(JSON.stringify(run)).not.toContain(SECRET);
    expect(await temporalHistory(run.temporal.workflowId)).not.toContain(SECRET);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

it('a vault value in an http header reaches the target and appears nowhere in the run record, the Temporal history, the service log or the database', async () => {
  const token = `vault-token-${Date.now()}-Zq9`;
  const put = await api('POST', '/api/vault', { key: pro.apiKey, body: { name: 'TARGET_TOKEN', value: token } });
  expect(put.status).toBe(201);
  const seen: string[] = [];
  // The target echoes the header back, so the node's output would carry the value unredacted.
  const target = http.createServer((req, res) => {
    seen.push(String(req.headers.authorization));
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ got: req.headers.authorization }));
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', () => resolve()));
  try {
    const url = `http://127.0.0.1:${(target.address() as net.AddressInfo).port}/hook`;
    const run = await runOf(pro.apiKey, [
      { id: 'call', type: 'http', config: { method: 'POST', url, headers: { authorization: 'Bearer {{ vault.TARGET_TOKEN }}' }, body: { order: '{{ input.order }}' } } },
    ], [], { order: 17 });
    expect(run.status).toBe('completed');
    expect(seen).toEqual([`Bearer ${token}`]);
    expect(run.output.call.body).toEqual({ got: 'Bearer [vault:TARGET_TOKEN]' });
    expect(JSON.stringify(run)).not.toContain(token);
    const history = await temporalHistory(run.temporal.workflowId);
    expect(history).toContain('{{ vault.TARGET_TOKEN }}');
    expect(history).not.toContain(token);
    expect(readFileSync(stack().logFile, 'utf8')).not.toContain(token);
    expect(filesContaining(token)).toEqual([]);
    expect(filesContaining('[vault:TARGET_TOKEN]')).toContainEqual(expect.stringMatching(RECORDS_FILE));
  } finally {
    await new Promise((resolve) => target.close(resolve));
  }
});
