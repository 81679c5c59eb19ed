/**
 * Tenant isolation under large uploads (issue 19): other tenants' reads on an idle service, then
 * the same reads while one account uploads three large files at once (60, 40 and 60 MB, deferred
 * scans: each upload is stored in GridFS, then scanned by the worker), in one run on the local
 * stack. Reports p50/p99/max of each read kind, idle against loaded.
 *
 *   npm run bench -- isolation [--tenants 4] [--rate 10] [--idle-seconds 15] [--sizes 60,40,60]
 *                              [--blobs-on-records-server] [--blob-db NAME]
 *   npm run bench -- isolation --load expressions [--hogs 6] [--load-seconds 30]
 *
 * `--load expressions` (issue 34): instead of uploads, one account starts `--hogs` workflow runs
 * whose transform would take hours on a backtracking regular expression (each stopped by its
 * 60 s node timeout), and the other tenants' reads are measured for `--load-seconds` while they
 * spin; each tenant also runs a one-node workflow once before and once during the load.
 *
 * `--blobs-on-records-server` keeps the stored bytes in the records' FerretDB (the layout before
 * the blobs FerretDB); with `--blob-db sentinel` also in the records' database (the layout before
 * MONGODB_BLOB_DB): to compare layouts on the same machine in the same hour.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pickPorts, startServiceProcess } from '../test/support/service';
import { cliJson, fmt, httpClient, percentile } from './_messaging-common';

function argOf(args: string[], name: string, dflt: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Tenant { apiKey: string; entity: string }
type Kind = 'GET /api/entities/{name}' | 'GET /api/entities/messages' | 'GET /healthz';
const KINDS: Kind[] = ['GET /api/entities/{name}', 'GET /api/entities/messages', 'GET /healthz'];

/** Each tenant issues one read every 1000/rate ms, cycling through the kinds, until `stop()`. */
function readers(baseUrl: string, tenants: Tenant[], rate: number) {
  const client = httpClient(baseUrl, tenants.length * 4);
  const samples = new Map<Kind, number[]>(KINDS.map((k) => [k, []]));
  let errors = 0;
  let running = true;
  const loops = tenants.map(async (t, n) => {
    await sleep((n * 1000) / rate / tenants.length);
    for (let i = 0; running; i++) {
      const due = Date.now() + 1000 / rate;
      const kind = KINDS[i % KINDS.length];
      const p = kind === 'GET /healthz' ? '/healthz' : kind === 'GET /api/entities/messages' ? '/api/entities/messages?limit=10' : `/api/entities/${t.entity}`;
      const r = await client.request('GET', p, t.apiKey);
      if (r.status === 200) samples.get(kind)?.push(r.ms);
      else errors++;
      await sleep(Math.max(0, due - Date.now()));
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      client.agent.destroy();
      return { samples, errors };
    },
  };
}

type Answer = { status: number; scanId?: string };

/** Starts the uploading client (bench/_isolation-uploader.ts); `go()` sends every file at once. */
async function uploader(baseUrl: string, key: string, sizes: number[]): Promise<{ go(): Promise<Answer[]> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '_isolation-uploader.ts'), baseUrl, key, sizes.join(',')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const next = () => new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the uploading client exited with code ${code}`)));
  });
  if ((await next()) !== 'ready') throw new Error('the uploading client did not start');
  return {
    go: async () => {
      const answers = next();
      child.stdin.write('go\n');
      return JSON.parse(await answers) as Answer[];
    },
  };
}

const row = (kind: string, ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return `${fmt(percentile(s, 50))} / ${fmt(percentile(s, 99))} / ${fmt(s[s.length - 1])} (n=${s.length})`;
};

export async function run(args: string[]): Promise<void> {
  const tenantCount = Number(argOf(args, 'tenants', '4'));
  const rate = Number(argOf(args, 'rate', '10'));
  const idleSeconds = Number(argOf(args, 'idle-seconds', '15'));
  const sizes = argOf(args, 'sizes', '60,40,60').split(',').map(Number);
  const blobDb = argOf(args, 'blob-db', '');
  if (argOf(args, 'load', 'uploads') === 'expressions') return runExpressionLoad(tenantCount, rate, idleSeconds, Number(argOf(args, 'hogs', '6')), Number(argOf(args, 'load-seconds', '30')));
  const onRecordsServer = args.includes('--blobs-on-records-server');
  const [mongoPort] = await pickPorts(1);
  const svc = await startServiceProcess({
    extraEnv: {
      LOG_LEVEL: 'warn',
      ...(blobDb ? { MONGODB_BLOB_DB: blobDb } : {}),
      ...(onRecordsServer ? { MONGO_PORT: String(mongoPort), MONGODB_BLOB_URI: `mongodb://127.0.0.1:${mongoPort}/` } : {}),
    },
  });
  try {
    const env = svc.env;
    const tenants: Tenant[] = [];
    for (let i = 0; i < tenantCount; i++) {
      const a = await cliJson(env, 'account', 'create', '--name', `tenant-${i}`, '--plan', 'pro');
      await cliJson(env, 'entity', 'create', '--account', a.accountId, '--name', 'dev-1');
      tenants.push({ apiKey: a.apiKey, entity: 'dev-1' });
    }
    const uploaderAccount = await cliJson(env, 'account', 'create', '--name', 'uploader', '--plan', 'pro');
    const client = await uploader(env.baseUrl, uploaderAccount.apiKey, sizes);

    const idle = readers(env.baseUrl, tenants, rate);
    await sleep(idleSeconds * 1000);
    const idleResult = await idle.stop();

    const loaded = readers(env.baseUrl, tenants, rate);
    const started = Date.now();
    const answers = await client.go();
    const uploadedMs = Date.now() - started;
    if (answers.some((a) => a.status !== 202)) throw new Error(`uploads answered ${answers.map((a) => a.status).join(', ')}`);
    // Keep reading until the worker finished scanning what the uploads stored.
    const poll = httpClient(env.baseUrl, 1);
    for (;;) {
      const states = await Promise.all(answers.map((a) => poll.request('GET', `/api/scan/${a.scanId}`, uploaderAccount.apiKey)));
      if (states.every((s) => s.status === 200 && (JSON.parse(s.body) as { status: string }).status === 'complete')) break;
      if (Date.now() - started > 600_000) throw new Error('deferred scans did not complete within 10 minutes');
      await sleep(1000);
    }
    poll.agent.destroy();
    const scannedMs = Date.now() - started;
    const loadedResult = await loaded.stop();

    console.log(`\nStored bytes in ${blobDb ? `database ${blobDb}` : 'their own database'} on ${onRecordsServer ? 'the records\' FerretDB' : 'the blobs FerretDB (default)'}`);
    console.log(`${tenantCount} other tenants, ${rate} reads/s each; uploads of ${sizes.join(', ')} MB answered 202 after ${fmt(uploadedMs / 1000)} s, scans complete after ${fmt(scannedMs / 1000)} s`);
    console.log('\n| read (other tenants) | idle: p50 / p99 / max ms | during the 3 uploads and their scans: p50 / p99 / max ms |');
    console.log('|---|---|---|');
    for (const k of KINDS) console.log(`| ${k} | ${row(k, idleResult.samples.get(k) ?? [])} | ${row(k, loadedResult.samples.get(k) ?? [])} |`);
    const all = (r: typeof idleResult) => KINDS.flatMap((k) => r.samples.get(k) ?? []);
    console.log(`| all | ${row('all', all(idleResult))} | ${row('all', all(loadedResult))} |`);
    console.log(`\nnon-200 answers: idle ${idleResult.errors}, loaded ${loadedResult.errors}`);
  } finally {
    await svc.stop();
  }
}

/** One-node run of a tenant, from POST to its final status (ms). */
async function oneNodeRun(client: ReturnType<typeof httpClient>, key: string, workflowId: string): Promise<number> {
  const started = Date.now();
  const r = await client.request('POST', `/api/workflows/${workflowId}/run`, key, { input: {} });
  if (r.status !== 202) throw new Error(`run answered ${r.status}: ${r.body}`);
  const { runId } = JSON.parse(r.body) as { runId: string };
  for (;;) {
    const s = await client.request('GET', `/api/workflows/runs/${runId}`, key);
    const status = (JSON.parse(s.body) as { status: string }).status;
    if (status === 'completed') return Date.now() - started;
    if (status !== 'running' && status !== 'queued') throw new Error(`one-node run ended ${status}`);
    await sleep(50);
  }
}

async function runExpressionLoad(tenantCount: number, rate: number, idleSeconds: number, hogs: number, loadSeconds: number): Promise<void> {
  const svc = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const env = svc.env;
    const client = httpClient(env.baseUrl, 8);
    const create = async (key: string, def: unknown): Promise<string> => {
      const r = await client.request('POST', '/api/workflows', key, def);
      if (r.status !== 201) throw new Error(`create workflow answered ${r.status}: ${r.body}`);
      return (JSON.parse(r.body) as { id: string }).id;
    };
    const tenants: Array<Tenant & { flow: string }> = [];
    for (let i = 0; i < tenantCount; i++) {
      const a = await cliJson(env, 'account', 'create', '--name', `tenant-${i}`, '--plan', 'pro');
      await cliJson(env, 'entity', 'create', '--account', a.accountId, '--name', 'dev-1');
      tenants.push({ apiKey: a.apiKey, entity: 'dev-1', flow: await create(a.apiKey, { name: 'one', nodes: [{ id: 'one', type: 'transform', config: { expression: '1 + 1' } }], edges: [] }) });
    }
    const greedy = await cliJson(env, 'account', 'create', '--name', 'greedy', '--plan', 'pro');
    const hog = await create(greedy.apiKey, {
      name: 'hog', edges: [],
      nodes: [{ id: 'spin', type: 'transform', timeout_ms: 60_000, retry: { max_attempts: 1 }, config: { expression: `$contains("${'a'.repeat(40)}!", /^(a+)+$/)` } }],
    });

    const idle = readers(env.baseUrl, tenants, rate);
    await sleep(idleSeconds * 1000);
    const idleRuns = await Promise.all(tenants.map((t) => oneNodeRun(client, t.apiKey, t.flow)));
    const idleResult = await idle.stop();

    const loaded = readers(env.baseUrl, tenants, rate);
    for (let i = 0; i < hogs; i++) {
      const r = await client.request('POST', `/api/workflows/${hog}/run`, greedy.apiKey, { input: {} });
      if (r.status !== 202) throw new Error(`hog run answered ${r.status}: ${r.body}`);
    }
    await sleep(2_000);
    const loadedRuns = await Promise.all(tenants.map((t) => oneNodeRun(client, t.apiKey, t.flow)));
    await sleep(Math.max(0, loadSeconds * 1000 - 2_000));
    const loadedResult = await loaded.stop();
    client.agent.destroy();

    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    console.log(`\n${tenantCount} other tenants, ${rate} reads/s each; one account runs ${hogs} transforms that would backtrack for hours (each stopped at 60 s); loaded window ${loadSeconds} s`);
    console.log('\n| read (other tenants) | idle: p50 / p99 / max ms | while the expressions spin: p50 / p99 / max ms |');
    console.log('|---|---|---|');
    for (const k of KINDS) console.log(`| ${k} | ${row(k, idleResult.samples.get(k) ?? [])} | ${row(k, loadedResult.samples.get(k) ?? [])} |`);
    const all = (r: typeof idleResult) => KINDS.flatMap((k) => r.samples.get(k) ?? []);
    console.log(`| all | ${row('all', all(idleResult))} | ${row('all', all(loadedResult))} |`);
    console.log(`| one-node run, POST to completed | ${fmt(percentile(sorted(idleRuns), 50))} / max ${fmt(Math.max(...idleRuns))} | ${fmt(percentile(sorted(loadedRuns), 50))} / max ${fmt(Math.max(...loadedRuns))} |`);
    console.log(`\nnon-200 answers: idle ${idleResult.errors}, loaded ${loadedResult.errors}`);
  } finally {
    await svc.stop();
  }
}
