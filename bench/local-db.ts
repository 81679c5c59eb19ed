/**
 * The local database at scale (issues 19, 29 "Benchmarks"), on one service started as `npm start`
 * runs it, at several sizes in one run: the queried account's publish messages are inserted
 * straight into the engine in the shape the service stores (the embedded rows by this process on
 * the service's DATA_DIR, as a second process may) up to each size in turn, and at each size:
 * - over HTTP, one request at a time (paced under the key's 50 requests/s), p50/p99 of
 *   GET /api/entities/messages/{id} (random stored ids), the first list page, a search by
 *   entity and time range (random entity, random hour), and the page at offset 100,000 (when
 *   the size has one);
 * - a full CSV export: rows/s, time to the first byte, the service's RSS before and its peak
 *   sampled every 100 ms during the export (flat RSS: the peak does not grow with the size), and
 *   the service's own event-loop delay during it (how long an export step holds the event loop);
 * - batch ingest over HTTP: POST /api/entities/messages, 100 messages per request, from several
 *   devices at once (each under its key's rate limit), in messages/s acknowledged;
 * - MQTT: devices publishing at QoS 1 (each under the same limit; bench/mqtt.ts's pacing), in
 *   messages/s stored, counted in the database.
 * Ingest and MQTT write into accounts of their own, so the queried account keeps its size; the
 * table holds theirs too (reported). Ratios are against the first size, from the same run. Every
 * size line carries the load average: figures taken on a busy machine are worth less.
 *
 *   npm run bench -- local-db [--sizes 20000,200000,1000000 | --messages N | --count N]
 *     [--engine embedded|mongodb] [--samples 200] [--lookups 500] [--max-seconds 60]
 *     [--ingest-seconds 10] [--ingest-clients 8] [--mqtt-seconds 15] [--mqtt-devices 100] [--mqtt-rate 40]
 *
 * `--engine mongodb` (the legacy local FerretDB) is for a baseline at small sizes only: there a
 * list or a search reads and sorts the whole collection (seconds each at 20,000); each figure
 * stops sampling after `--max-seconds`.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import mqtt, { MqttClient } from 'mqtt';
import { loadConfig } from '../src/config';
import { topicsOf } from '../src/messaging/topics';
import { startServiceProcess, StackEnv } from '../test/support/service';
import { cliJson, fmt, httpClient, memoryOf, percentile } from './_messaging-common';
import { BASE_TIME, DEVICES_IN_HISTORY, Direct, directTo, Engine } from './_messages-direct';


function argOf(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

function sizesOf(args: string[]): number[] {
  const i = args.indexOf('--sizes');
  if (i >= 0) return args[i + 1].split(',').map(Number);
  const single = ['--messages', '--count'].map((f) => args.indexOf(f)).find((j) => j >= 0);
  return single !== undefined ? [Number(args[single + 1])] : [20_000, 200_000, 1_000_000];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
/** Every 16th inserted id is kept to look up (all of 10,000,000 would not fit this process). */
const ID_SAMPLE_EVERY = 16;

type Figures = Map<string, { value: number; text: string }>;

/** `n` requests one at a time, at most one per 25 ms (the key allows 50/s), or fewer if `maxSeconds` runs out. */
async function sampled(n: number, maxSeconds: number, request: (i: number) => Promise<number>): Promise<number[]> {
  const ms: number[] = [];
  const deadline = Date.now() + maxSeconds * 1000;
  let next = Date.now();
  for (let i = 0; i < n && Date.now() < deadline; i++) {
    await sleep(Math.max(0, next - Date.now()));
    next = Date.now() + 25;
    ms.push(await request(i));
  }
  return ms.sort((a, b) => a - b);
}

/**
 * The service's own event-loop delay (prom-client's monitor on GET /metrics, whose figures
 * cover the time since the previous scrape): the longest and the p99 wait of a 10 ms timer.
 */
async function eventLoopLag(env: StackEnv): Promise<{ maxMs: number; p99Ms: number }> {
  const text = await (await fetch(`http://127.0.0.1:${env.metricsPort}/metrics`)).text();
  const seconds = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? NaN);
  return { maxMs: seconds('nodejs_eventloop_lag_max_seconds') * 1000, p99Ms: seconds('nodejs_eventloop_lag_p99_seconds') * 1000 };
}

/** Streams the export, counting rows (lines after the header); samples the service's RSS and event-loop delay meanwhile. */
async function exportRun(env: StackEnv, key: string): Promise<{ rows: number; bytes: number; firstByteMs: number; totalMs: number; rssBeforeMb: number; rssPeakMb: number; lagMaxMs: number; lagP99Ms: number }> {
  const rssBeforeMb = (await memoryOf(env.pid)).rssMb;
  let rssPeakMb = rssBeforeMb;
  let running = true;
  const sampler = (async () => {
    while (running) {
      rssPeakMb = Math.max(rssPeakMb, (await memoryOf(env.pid)).rssMb);
      await sleep(100);
    }
  })();
  await eventLoopLag(env);
  const started = performance.now();
  const result = await new Promise<{ rows: number; bytes: number; firstByteMs: number }>((resolve, reject) => {
    http.get(`${env.baseUrl}/api/messages/export?format=csv`, { headers: { authorization: `Bearer ${key}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
      let firstByteMs = -1;
      let bytes = 0;
      let lines = 0;
      res.on('data', (c: Buffer) => {
        if (firstByteMs < 0) firstByteMs = performance.now() - started;
        bytes += c.length;
        for (let i = c.indexOf(10); i >= 0; i = c.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve({ rows: lines - 1, bytes, firstByteMs }));
      res.on('error', reject);
    }).on('error', reject);
  });
  const totalMs = performance.now() - started;
  const lag = await eventLoopLag(env);
  running = false;
  await sampler;
  return { ...result, totalMs, rssBeforeMb, rssPeakMb, lagMaxMs: lag.maxMs, lagP99Ms: lag.p99Ms };
}

interface Device { name: string; resourcePath: string; apiKey: string; apiKeyId: string }

async function registerDevices(client: ReturnType<typeof httpClient>, accountKey: string, count: number, prefix: string): Promise<Device[]> {
  const r = await client.request('POST', '/api/entities/bulk', accountKey, { count, prefix });
  const devices = (JSON.parse(r.body) as { results?: Device[] }).results ?? [];
  if (devices.length !== count) throw new Error(`bulk registration failed: ${r.status} ${r.body.slice(0, 300)}`);
  return devices;
}

/** Batches of 100 from each device at once for `seconds`, each device under 45 requests/s; acknowledged messages/s. */
async function batchIngest(env: StackEnv, devices: Device[], seconds: number): Promise<{ perSecond: number; refused: number; p99Ms: number }> {
  const client = httpClient(env.baseUrl, devices.length);
  let stored = 0;
  let refused = 0;
  const lat: number[] = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(devices.map(async (d, w) => {
    for (let seq = 0; performance.now() < deadline; seq++) {
      const due = performance.now() + 1000 / 45;
      const batch = Array.from({ length: 100 }, (_, k) => ({ msg_type: 'publish', data: { w, seq, k, temp: 20 + (k % 10) / 10 } }));
      const r = await client.request('POST', '/api/entities/messages', d.apiKey, batch);
      lat.push(r.ms);
      const results = r.status === 200 ? (JSON.parse(r.body) as { results: Array<{ code: number }> }).results : [];
      const ok = results.filter((x) => x.code === 200).length;
      stored += ok;
      refused += 100 - ok;
      await sleep(Math.max(0, due - performance.now()));
    }
  }));
  const secs = (performance.now() - started) / 1000;
  client.agent.destroy();
  return { perSecond: stored / secs, refused, p99Ms: percentile(lat.sort((a, b) => a - b), 99) };
}

function connectMqtt(url: string, opts: mqtt.IClientOptions): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 30_000, ...opts });
    c.once('connect', () => resolve(c));
    c.once('error', reject);
  });
}

/**
 * Devices publishing at QoS 1 for `seconds`, each waiting for its PUBACK and paced to `rate`
 * messages/s; the stored count taken in the database between 20% and 100% of the run (the start
 * warms up). A device whose connection was dropped stops and counts as an error.
 */
async function mqttRun(clients: Array<{ client: MqttClient; topic: string }>, seconds: number, rate: number, stored: () => Promise<number>): Promise<{ perSecond: number; acked: number; errors: number }> {
  let running = true;
  let acked = 0;
  let errors = 0;
  let dropped = 0;
  const loops = clients.map(async ({ client, topic }, i) => {
    await sleep(Math.random() * (1000 / rate));
    for (let seq = 0; running; seq++) {
      const due = performance.now() + 1000 / rate;
      // A publish on a dropped connection would wait for a reconnection that never comes.
      if (!client.connected) {
        dropped++;
        return;
      }
      try {
        await client.publishAsync(topic, JSON.stringify({ msg_type: 'publish', data: { i, seq, temp: 20 + (seq % 10) } }), { qos: 1 });
        acked++;
      } catch {
        errors++;
      }
      await sleep(Math.max(0, due - performance.now()));
    }
  });
  await sleep(seconds * 200);
  const c0 = await stored();
  const t0 = performance.now();
  await sleep(seconds * 800);
  const c1 = await stored();
  const t1 = performance.now();
  running = false;
  await Promise.all(loops);
  return { perSecond: (c1 - c0) / ((t1 - t0) / 1000), acked, errors: errors + dropped };
}

export async function run(args: string[]): Promise<void> {
  const i = args.indexOf('--engine');
  const engine = (i >= 0 ? args[i + 1] : 'embedded') as Engine;
  if (engine !== 'embedded' && engine !== 'mongodb') throw new Error(`--engine ${engine}: embedded or mongodb`);
  const sizes = sizesOf(args);
  if (sizes.some((s, k) => !Number.isInteger(s) || s < 1 || (k > 0 && s <= sizes[k - 1]))) throw new Error(`--sizes ${sizes.join(',')}: increasing whole numbers`);
  const o = {
    samples: argOf(args, 'samples', 200), lookups: argOf(args, 'lookups', 500), maxSeconds: argOf(args, 'max-seconds', 60),
    ingestSeconds: argOf(args, 'ingest-seconds', 10), ingestClients: argOf(args, 'ingest-clients', 8),
    mqttSeconds: argOf(args, 'mqtt-seconds', 15), mqttDevices: argOf(args, 'mqtt-devices', 100), mqttRate: Math.min(45, argOf(args, 'mqtt-rate', 40)),
  };
  console.log(`\n## engine: ${engine}; sizes ${sizes.join(', ')}; load average at start ${loadavg()}`);
  const svc = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn', DATABASE_ENGINE: engine }, timeoutMs: 180_000 });
  const mqttClients: MqttClient[] = [];
  let direct: Direct | undefined;
  try {
    const env = svc.env;
    const [reads, ingest, viaMqtt] = await Promise.all(['reads', 'ingest', 'mqtt'].map((n) => cliJson(env, 'account', 'create', '--name', `local-db-${n}`, '--plan', 'pro')));
    const admin = httpClient(env.baseUrl, 1);
    const ingestDevices = await registerDevices(admin, ingest.apiKey, o.ingestClients, 'ingest');
    const mqttDevices = await registerDevices(admin, viaMqtt.apiKey, o.mqttDevices, 'mqtt');
    admin.agent.destroy();
    const region = loadConfig({ ...process.env, ...env.env }).region;
    for (let k = 0; k < mqttDevices.length; k += 50) {
      mqttClients.push(...await Promise.all(mqttDevices.slice(k, k + 50).map((d) => connectMqtt(env.mqttUrl, {
        clientId: d.resourcePath, username: d.apiKeyId, password: d.apiKey,
      }))));
    }
    const publishers = mqttClients.map((client, k) => ({ client, topic: topicsOf(viaMqtt.accountId, region, mqttDevices[k].apiKeyId).publish }));
    direct = await directTo(engine, env);
    const db = direct;

    const ids: string[] = [];
    const bySize: Figures[] = [];
    for (let s = 0; s < sizes.length; s++) {
      const size = sizes[s];
      const f: Figures = new Map();
      const put = (name: string, value: number, text = fmt(value)) => { f.set(name, { value, text }); };
      const from = s === 0 ? 0 : sizes[s - 1];
      const t0 = performance.now();
      await db.insert(reads.accountId, from, size, ids, { keepEvery: ID_SAMPLE_EVERY });
      const insertSecs = (performance.now() - t0) / 1000;
      const loadBefore = loadavg();
      console.log(`\n### ${size} messages (inserted ${size - from} straight into the engine in ${fmt(insertSecs)} s, ${fmt((size - from) / insertSecs, 0)}/s); load average ${loadBefore}`);
      f.set('load average (1, 5, 15 min) before', { value: 0, text: loadBefore });
      put('raw insert into the engine (messages/s)', (size - from) / insertSecs, fmt((size - from) / insertSecs, 0));

      const client = httpClient(env.baseUrl, 1);
      const get = await sampled(o.lookups, o.maxSeconds, async () => {
        const id = ids[Math.floor(Math.random() * ids.length)];
        const r = await client.request('GET', `/api/entities/messages/${id}`, reads.apiKey);
        if (r.status !== 200 || (JSON.parse(r.body) as { id: string }).id !== id) throw new Error(`GET message ${id}: ${r.status} ${r.body.slice(0, 200)}`);
        return r.ms;
      });
      const ok = (what: string) => (r: { status: number; body: string; ms: number }) => {
        if (r.status !== 200) throw new Error(`${what}: ${r.status} ${r.body.slice(0, 200)}`);
        return r.ms;
      };
      const list = await sampled(o.samples, o.maxSeconds, async () => ok('first page')(await client.request('GET', '/api/entities/messages?limit=10', reads.apiKey)));
      const search = await sampled(o.samples, o.maxSeconds, async () => {
        const hourStart = BASE_TIME + Math.floor(Math.random() * Math.max(1, size / 3600 - 1)) * 3600_000;
        return ok('search')(await client.request('POST', '/api/entities/messages/search', reads.apiKey, {
          entity_name: `dev-${Math.floor(Math.random() * DEVICES_IN_HISTORY)}`, from: new Date(hourStart).toISOString(), to: new Date(hourStart + 3600_000).toISOString(), limit: 10,
        }));
      });
      const deep = size > 100_010
        ? await sampled(o.samples, o.maxSeconds, async () => ok('offset 100,000')(await client.request('GET', '/api/entities/messages?offset=100000&limit=10', reads.apiKey)))
        : [];
      client.agent.destroy();
      for (const [name, ms] of [['GET message by id', get], ['first list page (10)', list], ['search: entity + 1 h range (10)', search], ['list page at offset 100,000', deep]] as const) {
        if (!ms.length) continue;
        put(`${name}: p50 ms`, percentile(ms, 50), fmt(percentile(ms, 50), 2));
        put(`${name}: p99 ms`, percentile(ms, 99), `${fmt(percentile(ms, 99), 2)} (n=${ms.length})`);
      }

      const ex = await exportRun(env, reads.apiKey);
      if (ex.rows !== size) throw new Error(`export gave ${ex.rows} rows, ${size} stored`);
      put('CSV export (rows/s)', ex.rows / (ex.totalMs / 1000), fmt(ex.rows / (ex.totalMs / 1000), 0));
      put('CSV export: seconds, MB', ex.totalMs / 1000, `${fmt(ex.totalMs / 1000, 2)} s, ${fmt(ex.bytes / 1024 / 1024)} MB, first byte ${fmt(ex.firstByteMs, 0)} ms`);
      put('service RSS before export (MB)', ex.rssBeforeMb, fmt(ex.rssBeforeMb, 0));
      put('service RSS peak during export (MB)', ex.rssPeakMb, fmt(ex.rssPeakMb, 0));
      put('service event-loop delay during export: p99 / max ms', ex.lagMaxMs, `${fmt(ex.lagP99Ms, 1)} / ${fmt(ex.lagMaxMs, 1)}`);

      const ing = await batchIngest(env, ingestDevices, o.ingestSeconds);
      put(`batch ingest over HTTP, ${o.ingestClients} devices x 100/request (messages/s)`, ing.perSecond, `${fmt(ing.perSecond, 0)} (refused ${ing.refused}, request p99 ${fmt(ing.p99Ms, 0)} ms)`);
      const mq = await mqttRun(publishers, o.mqttSeconds, o.mqttRate, () => db.count(viaMqtt.accountId));
      put(`MQTT publishes stored, ${o.mqttDevices} devices at QoS 1 (messages/s)`, mq.perSecond, `${fmt(mq.perSecond, 0)} (offered ${o.mqttDevices * o.mqttRate}/s, acked ${mq.acked}, errors or dropped devices ${mq.errors})`);
      put('rows in the messages table', await db.count(), String(await db.count()));
      const mem = await memoryOf(env.pid);
      put('service VmHWM so far (MB)', mem.hwmMb, fmt(mem.hwmMb, 0));
      f.set('load average (1, 5, 15 min) after', { value: 0, text: loadavg() });
      bySize.push(f);
      for (const [name, v] of f) console.log(`  ${name}: ${v.text}`);
    }

    // Ratios of the largest size to the first that has the figure: for latencies and RSS, >1 is
    // worse; for rates, <1 is worse.
    const names = [...new Set(bySize.flatMap((f) => [...f.keys()]))];
    const last = bySize.length - 1;
    const ratioOf = (n: string) => {
      const first = bySize.find((f) => f.has(n))?.get(n)?.value;
      return first && !/load average|rows in the/.test(n) ? fmt((bySize[last].get(n)?.value ?? NaN) / first, 2) : '';
    };
    console.log(`\n| ${engine} | ${sizes.map((s) => `${s.toLocaleString('en')} messages`).join(' | ')}${last > 0 ? ` | ${sizes[last]} / ${sizes[0]}` : ''} |`);
    console.log(`|---|${sizes.map(() => '---|').join('')}${last > 0 ? '---|' : ''}`);
    for (const n of names) {
      console.log(`| ${n} | ${bySize.map((f) => f.get(n)?.text ?? '-').join(' | ')}${last > 0 ? ` | ${ratioOf(n)}` : ''} |`);
    }
  } finally {
    await Promise.all(mqttClients.map((c) => c.endAsync(true)));
    await direct?.close();
    await svc.stop();
  }
}
