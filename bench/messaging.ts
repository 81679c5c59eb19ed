/**
 * HTTP publish throughput of the messaging API against the raw insert rate of the service's own
 * database engine (embedded by default), in one run:
 *   1. HTTP: 16 devices (entity keys) publishing concurrently over keep-alive connections to
 *      POST /api/entities/message; publishes/s, p50/p99 latency, any non-200 answers.
 *   2. Raw: 16 concurrent message inserts of the same shape through the message store, from this
 *      process (a second process on the embedded engine's DATA_DIR).
 *   3. Replay: the database work one HTTP publish does (auth: entity key, account, entity;
 *      rate-limit window; monthly data counter; insert) through the same stores: where the gap goes.
 *
 *   npx tsx bench/run.ts messaging [--seconds 10]
 */
import { ObjectId } from 'mongodb';
import { loadConfig } from '../src/config';
import type { MessageDoc } from '../src/messaging/records';
import { storesOf } from '../src/services';
import { openDatabase } from '../src/storage/engine';
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

    // A second process's view of the service's database (on the embedded engine, its DATA_DIR),
    // opened the way the service opens it, for the baseline and the replay.
    const config = loadConfig({ ...process.env, ...env.env });
    const database = await openDatabase(config);
    const stores = storesOf(database);
    const doc = (i: number): MessageDoc => ({
      _id: new ObjectId().toHexString(), accountId: 'bench-raw', msgType: 'publish', source: 'accounts/bench-raw/entities/bench-dev-1',
      sourceName: 'bench-dev-1', destination: null, data: sampleData(i), tags: ['bench'], timestamp: new Date(), receivedAt: new Date(),
      validation: { result: 'skipped' }, bytes: 60,
    });
    let rawRun: Awaited<ReturnType<typeof loop>>;
    let replayRun: Awaited<ReturnType<typeof loop>>;
    const month = new Date().toISOString().slice(0, 7);
    // Time spent awaiting each step, summed over the workers: the shares approximate each step's
    // share of the database's time.
    const stepMs: Record<string, number> = { 'auth: 3 reads': 0, 'rate-limit window': 0, 'data-limit counter': 0, 'message insert': 0 };
    try {
      rawRun = await loop(DEVICES, seconds, async (_w, i) => {
        await stores.messages.insertMessage(doc(i));
        return true;
      });

      // The service's own database work per publish, through the same stores.
      const timed = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
        const t = process.hrtime.bigint();
        try { return await fn(); } finally { stepMs[step] += Number(process.hrtime.bigint() - t) / 1e6; }
      };
      replayRun = await loop(DEVICES, seconds, async (w, i) => {
        const d = devices[w];
        await timed('auth: 3 reads', async () => {
          const key = await stores.entities.findEntityKey(d.apiKeyId);
          await stores.accounts.findAccount(acct.accountId);
          await stores.entities.findEntity(acct.accountId, key?.entityName ?? d.name);
        });
        const window = Math.floor(Date.now() / 1000) * 1000;
        await timed('rate-limit window', () => stores.counters.hitWindow(`replay:${d.apiKeyId}:${window}`, { req: 1 }, new Date(window + 2000)));
        await timed('data-limit counter', () => stores.counters.incrementUsageBounded({ _id: `replay-${acct.accountId}:${month}`, accountId: 'replay', period: month, kind: 'month' }, 'messagingBytes', 60, 1e12));
        await timed('message insert', () => stores.messages.insertMessage(doc(i)));
        return true;
      });
    } finally {
      await database.close();
    }

    const rate = (r: { ok: number; secs: number }) => r.ok / r.secs;
    const rows: Array<[string, string, string, string, string]> = [
      ['HTTP publish (16 devices, keep-alive)', fmt(rate(httpRun), 0), fmt(percentile(httpRun.lat, 50), 2), fmt(percentile(httpRun.lat, 99), 2), `${httpRun.ok} ok, ${httpRun.failed} non-200`],
      [`raw message insert (${config.databaseEngine} store, 16 concurrent)`, fmt(rate(rawRun), 0), fmt(percentile(rawRun.lat, 50), 2), fmt(percentile(rawRun.lat, 99), 2), `${rawRun.ok} inserts`],
      ['replay of one publish\'s database work', fmt(rate(replayRun), 0), fmt(percentile(replayRun.lat, 50), 2), fmt(percentile(replayRun.lat, 99), 2), '3 reads + 2 counter writes + 1 insert'],
    ];
    console.log(`\nmessaging publish throughput, ${seconds} s per phase, database: ${config.databaseEngine}\n`);
    console.log('| phase | ops/s | p50 ms | p99 ms | notes |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
    console.log(`\nHTTP statuses: ${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}`);
    console.log(`HTTP / raw insert = ${fmt((100 * rate(httpRun)) / rate(rawRun), 0)}%; each device key's rate limit (50/s) caps HTTP at ${DEVICES * 50}/s, so 429s above are the limit working`);
    const total = Object.values(stepMs).reduce((a, b) => a + b, 0);
    console.log('\nreplay: share of database time per step');
    for (const [step, ms] of Object.entries(stepMs)) console.log(`  ${step.padEnd(20)} ${fmt((100 * ms) / total, 0)}%`);
    console.log(`replay / raw insert = ${fmt((100 * rate(replayRun)) / rate(rawRun), 0)}%: the share left once the database work of a publish is done without HTTP, auth code, JSON or ajv`);
  } finally {
    await svc.stop();
  }
}
