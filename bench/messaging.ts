/**
 * HTTP publish throughput of the messaging API against the raw insert rate of the `mongodb`
 * driver on the same database, in one run:
 *   1. HTTP: 16 devices (entity keys) publishing concurrently over keep-alive connections to
 *      POST /api/entities/message; publishes/s, p50/p99 latency, any non-200 answers.
 *   2. Raw: 16 concurrent insertOne of the same document shape into the same collection.
 *   3. Replay: the database round trips one HTTP publish makes (auth: entity key, account,
 *      entity; rate-limit counter; monthly data counter; insert), issued directly through the
 *      driver on one connection, as the service does in local mode: where the gap goes.
 *
 *   npx tsx bench/run.ts messaging [--seconds 10]
 */
import { MongoClient, ObjectId } from 'mongodb';
import { startServiceProcess } from '../test/support/service';
import { cliJson, fmt, httpClient, percentile } from './_messaging-common';

const DEVICES = 16;

function argOf(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

const sampleData = (i: number) => ({ temp: 20 + (i % 10) / 10, hum: 40 + (i % 7), seq: i, unit: 'C' });

/** Runs `worker` in `width` concurrent loops for `seconds`; returns operations done and per-op latencies. */
async function loop(width: number, seconds: number, worker: (w: number, i: number) => Promise<boolean>): Promise<{ ok: number; failed: number; lat: number[]; secs: number }> {
  const lat: number[] = [];
  let ok = 0;
  let failed = 0;
  const started = Date.now();
  const deadline = started + seconds * 1000;
  await Promise.all(Array.from({ length: width }, async (_, w) => {
    for (let i = 0; Date.now() < deadline; i++) {
      const t = process.hrtime.bigint();
      const good = await worker(w, i);
      lat.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (good) ok++;
      else failed++;
    }
  }));
  lat.sort((a, b) => a - b);
  return { ok, failed, lat, secs: (Date.now() - started) / 1000 };
}

export async function run(args: string[]): Promise<void> {
  const seconds = argOf(args, 'seconds', 10);
  const svc = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const env = svc.env;
    const acct = await cliJson(env, 'account', 'create', '--name', 'bench', '--plan', 'pro');
    const client = httpClient(env.baseUrl, DEVICES);
    const bulk = await client.request('POST', '/api/entities/bulk', acct.apiKey, { count: DEVICES, prefix: 'bench-dev' });
    const devices = (JSON.parse(bulk.body) as { results: Array<{ apiKey: string; apiKeyId: string; name: string }> }).results;
    if (devices.length !== DEVICES) throw new Error(`bulk registration failed: ${bulk.body}`);

    // Warm-up: JIT, connection set-up, first-time compiles.
    await loop(DEVICES, 1, async (w, i) => (await client.request('POST', '/api/entities/message', devices[w].apiKey, { msg_type: 'publish', data: sampleData(i) })).status === 200);
    await new Promise((r) => setTimeout(r, 1100));

    const statuses = new Map<number, number>();
    const httpRun = await loop(DEVICES, seconds, async (w, i) => {
      const r = await client.request('POST', '/api/entities/message', devices[w].apiKey, { msg_type: 'publish', data: sampleData(i), context: { tags: ['bench'] } });
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      return r.status === 200;
    });
    client.agent.destroy();

    const mongo = new MongoClient(`mongodb://127.0.0.1:${env.mongoPort}/`, { maxPoolSize: DEVICES });
    await mongo.connect();
    const db = mongo.db('sentinel');
    const messages = db.collection('messages');
    const doc = (i: number) => ({
      _id: new ObjectId().toHexString() as unknown as ObjectId, accountId: 'bench-raw', msgType: 'publish', source: `accounts/bench-raw/entities/bench-dev-1`,
      sourceName: 'bench-dev-1', destination: null, data: JSON.stringify(sampleData(i)), tags: ['bench'], timestamp: new Date(), receivedAt: new Date(),
      validation: { result: 'skipped' }, bytes: 60,
    });
    const rawRun = await loop(DEVICES, seconds, async (_w, i) => {
      await messages.insertOne(doc(i));
      return true;
    });
    await mongo.close();

    // The service's own round trips per publish, on one connection like the service in local mode.
    const one = new MongoClient(`mongodb://127.0.0.1:${env.mongoPort}/`, { maxPoolSize: 1 });
    await one.connect();
    const odb = one.db('sentinel');
    const month = new Date().toISOString().slice(0, 7);
    // Time spent awaiting each step, summed over the workers: with one connection the waits queue
    // behind each other, so the shares approximate each step's share of the connection's time.
    const stepMs: Record<string, number> = { 'auth: 3 reads': 0, 'rate-limit upsert': 0, 'data-limit upsert': 0, 'message insert': 0 };
    const timed = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
      const t = process.hrtime.bigint();
      try { return await fn(); } finally { stepMs[step] += Number(process.hrtime.bigint() - t) / 1e6; }
    };
    const replayRun = await loop(DEVICES, seconds, async (w, i) => {
      const d = devices[w];
      await timed('auth: 3 reads', async () => {
        const keyDoc = await odb.collection('entity_keys').findOne({ _id: d.apiKeyId as unknown as ObjectId });
        await odb.collection('accounts').findOne({ _id: acct.accountId as unknown as ObjectId });
        await odb.collection('entities').findOne({ _id: `${acct.accountId}/${keyDoc?.entityName as string}` as unknown as ObjectId });
      });
      const window = Math.floor(Date.now() / 1000) * 1000;
      await timed('rate-limit upsert', () => odb.collection('rate_counters').findOneAndUpdate({ _id: `replay:${d.apiKeyId}:${window}` as unknown as ObjectId }, { $inc: { 'c.req': 1 }, $setOnInsert: { expiresAt: new Date(window + 2000) } }, { upsert: true, returnDocument: 'after' }));
      await timed('data-limit upsert', () => odb.collection('usage_daily').findOneAndUpdate(
        { _id: `replay-${acct.accountId}:${month}` as unknown as ObjectId, $or: [{ messagingBytes: { $exists: false } }, { messagingBytes: { $lte: 1e12 } }] },
        { $inc: { messagingBytes: 60 }, $setOnInsert: { accountId: 'replay', period: month, kind: 'month' } }, { upsert: true, returnDocument: 'after' },
      ));
      await timed('message insert', () => odb.collection('messages').insertOne(doc(i)));
      return true;
    });
    await one.close();

    const rate = (r: { ok: number; secs: number }) => r.ok / r.secs;
    const rows: Array<[string, string, string, string, string]> = [
      ['HTTP publish (16 devices, keep-alive)', fmt(rate(httpRun), 0), fmt(percentile(httpRun.lat, 50), 2), fmt(percentile(httpRun.lat, 99), 2), `${httpRun.ok} ok, ${httpRun.failed} non-200`],
      ['raw insertOne (driver, 16 concurrent)', fmt(rate(rawRun), 0), fmt(percentile(rawRun.lat, 50), 2), fmt(percentile(rawRun.lat, 99), 2), `${rawRun.ok} inserts`],
      ['replay of one publish\'s DB round trips', fmt(rate(replayRun), 0), fmt(percentile(replayRun.lat, 50), 2), fmt(percentile(replayRun.lat, 99), 2), '3 reads + 2 counter upserts + 1 insert, 1 connection'],
    ];
    console.log(`\nmessaging publish throughput, ${seconds} s per phase, database: local FerretDB (SQLite)\n`);
    console.log('| phase | ops/s | p50 ms | p99 ms | notes |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
    console.log(`\nHTTP statuses: ${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}`);
    console.log(`HTTP / raw insert = ${fmt((100 * rate(httpRun)) / rate(rawRun), 0)}% (goal >= 50%)`);
    const total = Object.values(stepMs).reduce((a, b) => a + b, 0);
    console.log(`\nreplay: share of database time per step (serialised on one connection, as in the service's local mode)`);
    for (const [step, ms] of Object.entries(stepMs)) console.log(`  ${step.padEnd(20)} ${fmt((100 * ms) / total, 0)}%`);
    console.log(`replay / raw insert = ${fmt((100 * rate(replayRun)) / rate(rawRun), 0)}%: the share left once the database work of a publish is done without HTTP, auth code, JSON or ajv`);
  } finally {
    await svc.stop();
  }
}
