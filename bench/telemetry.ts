/**
 * What metrics and traces cost (docs/contract.md §12; this bench's goal: at most 5% for metrics and 10% for
 * tracing): HTTP publish and payload-scan throughput of three `api` processes that share one local
 * stack and differ only in telemetry:
 *   off      METRICS_PORT=0, no OTEL_* variables;
 *   metrics  GET /metrics on, scraped every 5 s during its turns (as Prometheus would);
 *   tracing  METRICS_PORT=0, traces exported (OTLP/HTTP protobuf, the default) to a receiver in
 *            this process that reads and drops them.
 * The variants take turns, in a rotating order, for `--rounds` rounds of `--seconds` per phase, so
 * load from other work on the machine falls on all three alike; each figure is the median of its
 * rounds and the cost is reported against `off` of the same run. Besides operations per second,
 * each phase measures the CPU time the variant's process spent per operation (/proc/<pid>/stat):
 * on a machine shared with other work, throughput swings with their load, while CPU per operation
 * is what telemetry adds and what bounds throughput once the process is the bottleneck.
 *
 * Then, in this process, the CPU each piece of telemetry adds to one request, which the load of a
 * shared machine hardly moves: the HTTP middleware with everything off, with metrics on, and with
 * traces on too; and a MongoDB round trip (insert + find) on a client with command monitoring
 * (what db_operation_duration_seconds needs) against one without. With the database commands per
 * request read from the metrics variant, that gives the added CPU per publish and per scan.
 *
 *   npm run bench -- telemetry [--rounds 5] [--seconds 8]
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { MongoClient } from 'mongodb';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { loadSecrets } from '../src/secrets';
import { createServices } from '../src/services';
import { openDatabase } from '../src/storage/engine';
import { pickPorts, startServiceProcess, StartedService, storageEnvOf } from '../test/support/service';
import { fmt, httpClient } from './_messaging-common';
import { observeRequests } from '../src/telemetry/http';
import { countMessage, enableMetrics, watchDbCommands } from '../src/telemetry/metrics';
import { startTracing } from '../src/telemetry/sdk';

const DEVICES = 16;
const SCAN_CLIENTS = 8;
/** Scan writes allowed per account and minute window (FIXED_LIMITS.scanWritesPerMinute is 30), with a margin. */
const SCANS_PER_ACCOUNT_WINDOW = 28;

function argOf(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** CPU time (user + system) a process has used, in ms (clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  // Fields after the command name (which may hold spaces) start at the state, field 3: utime is 14, stime 15.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Phase { perSecond: number; cpuMsPerOp: number; failed: number }

/** `width` loops for `seconds` against the process `pid`; successful operations per second, its CPU ms per operation, failures. */
async function throughput(pid: number, width: number, seconds: number, op: (w: number, i: number) => Promise<boolean>): Promise<Phase> {
  let ok = 0;
  let failed = 0;
  const cpuBefore = cpuMsOf(pid);
  const started = Date.now();
  const deadline = started + seconds * 1000;
  await Promise.all(Array.from({ length: width }, async (_, w) => {
    for (let i = 0; Date.now() < deadline; i++) {
      if (await op(w, i)) ok++;
      else failed++;
    }
  }));
  return { perSecond: ok / ((Date.now() - started) / 1000), cpuMsPerOp: (cpuMsOf(pid) - cpuBefore) / Math.max(1, ok), failed };
}

/** Accounts for payload scans, each used at most SCANS_PER_ACCOUNT_WINDOW times per minute window. */
class ScanKeys {
  private window = -1;
  private used = new Map<string, number>();
  private next = 0;
  constructor(private readonly keys: string[]) {}
  take(): string | undefined {
    const w = Math.floor(Date.now() / 60_000);
    if (w !== this.window) {
      this.window = w;
      this.used.clear();
    }
    for (let tries = 0; tries < this.keys.length; tries++) {
      const key = this.keys[this.next++ % this.keys.length];
      const n = this.used.get(key) ?? 0;
      if (n < SCANS_PER_ACCOUNT_WINDOW) {
        this.used.set(key, n + 1);
        return key;
      }
    }
    return undefined;
  }
}

/**
 * CPU µs per call of each of `fns`, median of 7 blocks of `n` calls, the functions taking turns
 * block by block after a warm-up; `settle` runs inside each block's measurement (a span flush).
 */
async function cpuMicros(n: number, fns: Array<() => Promise<unknown>>, settle: () => Promise<unknown> = async () => undefined): Promise<number[]> {
  for (const fn of fns) for (let i = 0; i < n; i++) await fn();
  const blocks: number[][] = fns.map(() => []);
  for (let b = 0; b < 7; b++) {
    for (const [k, fn] of fns.entries()) {
      const t = process.cpuUsage();
      for (let i = 0; i < n; i++) await fn();
      await settle();
      const d = process.cpuUsage(t);
      blocks[k].push((d.user + d.system) / n);
    }
  }
  return blocks.map(median);
}

/**
 * The telemetry of one request measured in this process: the middleware around an empty handler
 * with everything off, then with metrics, then with traces as well (exported to `receiverUrl`;
 * the switches are one-way, as in the service); and a MongoDB insert + find with and without
 * command monitoring.
 */
async function inProcessCosts(mongoUri: string, receiverUrl: string) {
  const middleware = observeRequests<{ requestId?: string }>({ match: () => ({ path: [] }) });
  const request = () => {
    const ctx = { method: 'POST', path: '/api/entities/message', status: 200, headers: {}, state: { requestId: 'bench' }, _matchedRoute: '/api/entities/message' };
    return middleware(ctx as unknown as Parameters<typeof middleware>[0], () => countMessage('http', { msg_type: 'publish' }, async () => undefined));
  };
  // Blocks of 2,000: the batch processor queues at most 2,048 spans, and each block's spans are
  // exported (flushed) inside its measurement.
  const [off] = await cpuMicros(2_000, [request]);
  enableMetrics();
  const [metered] = await cpuMicros(2_000, [request]);
  // The exporter reads its endpoint from the standard variable, as in the service.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiverUrl;
  const tracing = startTracing({ kind: 'otlp', protocol: 'http/protobuf' }, 'bench', createLogger('warn'));
  const [both] = await cpuMicros(2_000, [request], () => tracing.spanProcessor.forceFlush());
  await tracing.shutdown();

  const plain = new MongoClient(mongoUri, { maxPoolSize: 1 });
  const monitored = new MongoClient(mongoUri, { maxPoolSize: 1, monitorCommands: true });
  watchDbCommands(monitored, 'records');
  await plain.connect();
  await monitored.connect();
  const roundTrip = (c: MongoClient) => async () => {
    const col = c.db('sentinel_bench').collection<{ _id: string; n: number; tags: string[] }>('telemetry');
    const _id = randomBytes(8).toString('hex');
    await col.insertOne({ _id, n: 1, tags: ['a', 'b'] });
    await col.findOne({ _id });
  };
  const [dbPlain, dbMonitored] = await cpuMicros(300, [roundTrip(plain), roundTrip(monitored)]);
  await monitored.db('sentinel_bench').dropDatabase();
  await plain.close();
  await monitored.close();
  return { off, metered, both, dbPlain, dbMonitored, dbPerCommand: (dbMonitored - dbPlain) / 2 };
}

export async function run(args: string[]): Promise<void> {
  const rounds = argOf(args, 'rounds', 5);
  const seconds = argOf(args, 'seconds', 8);
  const accounts = argOf(args, 'accounts', 300);

  // The receiver of the tracing variant: reads each export and answers 200, as a collector would.
  let spanBytes = 0;
  const receiver = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => { spanBytes += c.length; });
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const shared = { ENTITY_KEY_SECRET: randomBytes(32).toString('hex'), DATA_ENCRYPTION_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' };
  const base = await startServiceProcess({ extraEnv: { ...shared, METRICS_PORT: '0' } });
  const started: StartedService[] = [];
  try {
    const e = base.env;
    const apiEnv = {
      ...shared, ROLES: 'api', ...storageEnvOf(e), TEMPORAL_ADDRESS: `127.0.0.1:${e.temporalPort}`, CLAMD_HOST: '127.0.0.1', CLAMD_PORT: String(e.clamdPort),
    };
    const [metricsPort] = await pickPorts(1);
    const variants: Array<{ name: 'off' | 'metrics' | 'tracing'; env: Record<string, string> }> = [
      { name: 'off', env: { METRICS_PORT: '0' } },
      { name: 'metrics', env: { METRICS_PORT: String(metricsPort) } },
      { name: 'tracing', env: { METRICS_PORT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl } },
    ];
    const procs = new Map<string, StartedService>();
    for (const v of variants) {
      const p = await startServiceProcess({ extraEnv: { ...apiEnv, ...v.env } });
      started.push(p);
      procs.set(v.name, p);
    }

    // Devices and scan accounts, made through the service objects on the shared database.
    const config = loadConfig({ ...process.env, ...e.env, ...shared });
    const storage = await openDatabase(config);
    const services = createServices({ config, logger: createLogger('silent'), storage, secrets: loadSecrets(config) });
    const owner = await services.accounts.createAccount({ name: 'bench-telemetry', plan: 'pro' });
    const scanKeys: string[] = [];
    for (let i = 0; i < accounts; i++) scanKeys.push((await services.accounts.createAccount({ name: `bench-scan-${i}`, plan: 'pro' })).apiKey);
    await storage.close();
    const firstClient = httpClient(base.env.baseUrl, 1);
    const bulk = await firstClient.request('POST', '/api/entities/bulk', owner.apiKey, { count: DEVICES, prefix: 'bench-dev' });
    firstClient.agent.destroy();
    const devices = (JSON.parse(bulk.body) as { results: Array<{ apiKey: string }> }).results;
    if (devices.length !== DEVICES) throw new Error(`bulk registration failed: ${bulk.body}`);
    const keys = new ScanKeys(scanKeys);

    type Tally = { publish: Phase[]; scan: Phase[]; failed: number };
    const results = new Map<string, Tally>(variants.map((v) => [v.name, { publish: [], scan: [], failed: 0 }]));
    const phase = async (variant: string, warm: boolean) => {
      const p = procs.get(variant) as StartedService;
      const client = httpClient(p.env.baseUrl, DEVICES);
      // The metrics variant is scraped as Prometheus would, every 5 s, while it works.
      const scraper = variant === 'metrics'
        ? setInterval(() => { void fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()).catch(() => undefined); }, 5_000)
        : undefined;
      try {
        const secs = warm ? 1 : seconds;
        const publish = await throughput(p.env.pid, DEVICES, secs, async (w, i) =>
          (await client.request('POST', '/api/entities/message', devices[w].apiKey, { msg_type: 'publish', data: { temp: 20 + (i % 10) / 10, seq: i } })).status === 200);
        // Publishes count in 1 s windows per key: the scan phase starts in a fresh one.
        await new Promise((r) => setTimeout(r, 1_100));
        const scan = await throughput(p.env.pid, SCAN_CLIENTS, secs, async (_w, i) => {
          const key = keys.take();
          if (!key) return false;
          return (await client.request('POST', '/api/scan/payload', key, { payload: `order ${i}: ship 3 boxes to the north depot before friday` })).status === 200;
        });
        if (!warm) {
          const r = results.get(variant) as Tally;
          r.publish.push(publish);
          r.scan.push(scan);
          r.failed += publish.failed + scan.failed;
        }
      } finally {
        clearInterval(scraper);
        client.agent.destroy();
      }
    };

    for (const v of variants) await phase(v.name, true);
    for (let round = 0; round < rounds; round++) {
      const order = variants.map((_, i) => variants[(i + round) % variants.length].name);
      for (const name of order) await phase(name, false);
      console.log(`round ${round + 1}/${rounds}: ${order.map((n) => {
        const r = results.get(n) as Tally;
        return `${n} ${fmt(r.publish[round].perSecond, 0)} publish/s (${fmt(r.publish[round].cpuMsPerOp, 2)} CPU ms each) ${fmt(r.scan[round].perSecond, 1)} scan/s (${fmt(r.scan[round].cpuMsPerOp, 1)})`;
      }).join(' | ')}`);
    }

    const med = (name: string, which: 'publish' | 'scan', field: keyof Omit<Phase, 'failed'>) => median((results.get(name) as Tally)[which].map((ph) => ph[field]));
    console.log(`\n${rounds} rounds of ${seconds} s per phase; ${DEVICES} devices publishing, ${SCAN_CLIENTS} clients scanning payloads; medians, and against off`);
    console.log('| telemetry | publish/s | vs off | CPU ms per publish | vs off | payload scans/s | vs off | CPU ms per scan | vs off | non-200 |');
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const v of variants) {
      const cells = (['publish', 'scan'] as const).flatMap((which) => {
        const rate = med(v.name, which, 'perSecond');
        const cpu = med(v.name, which, 'cpuMsPerOp');
        return [fmt(rate, 1), `${fmt(rate / med('off', which, 'perSecond'), 3)}x`, fmt(cpu, 2), `${fmt(cpu / med('off', which, 'cpuMsPerOp'), 3)}x`];
      });
      console.log(`| ${v.name} | ${cells.join(' | ')} | ${(results.get(v.name) as Tally).failed} |`);
    }
    console.log(`spans exported by the tracing variant: ${fmt(spanBytes / 1024, 0)} KB`);

    // Database commands per request, from the metrics variant's own series.
    const exposition = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const total = (re: RegExp) => [...exposition.matchAll(re)].reduce((sum, m) => sum + Number(m[1]), 0);
    const dbPerRequest = total(/^db_operation_duration_seconds_count\{[^}]*\} (\d+)/gm) / total(/^http_requests_total\{[^}]*\} (\d+)/gm);
    const costs = await inProcessCosts(`mongodb://127.0.0.1:${e.mongoPort}/`, receiverUrl);
    const cpuOff = { publish: med('off', 'publish', 'cpuMsPerOp') * 1000, scan: med('off', 'scan', 'cpuMsPerOp') * 1000 };
    console.log('\nIn this process, CPU µs per call (median of 7 blocks):');
    console.log(`  HTTP middleware + message count: off ${fmt(costs.off, 2)}, metrics on ${fmt(costs.metered, 2)}, traces on too ${fmt(costs.both, 2)}`);
    console.log(`  MongoDB insert + find: plain ${fmt(costs.dbPlain, 1)}, with command monitoring and the histogram ${fmt(costs.dbMonitored, 1)} (per command ${fmt(costs.dbPerCommand, 2)} more)`);
    console.log(`  database commands per request (metrics variant): ${fmt(dbPerRequest, 1)}`);
    const metricsAdds = costs.metered - costs.off + dbPerRequest * costs.dbPerCommand;
    const tracesAdd = costs.both - costs.metered;
    console.log('| telemetry | added CPU µs per request | share of a publish (off) | share of a payload scan (off) |');
    console.log('|---|---|---|---|');
    console.log(`| metrics | ${fmt(metricsAdds, 1)} | ${fmt((100 * metricsAdds) / cpuOff.publish, 2)}% | ${fmt((100 * metricsAdds) / cpuOff.scan, 2)}% |`);
    console.log(`| tracing (server span + export) | ${fmt(tracesAdd, 1)} | ${fmt((100 * tracesAdd) / cpuOff.publish, 2)}% | ${fmt((100 * tracesAdd) / cpuOff.scan, 2)}% |`);
  } finally {
    for (const p of started.reverse()) await p.stop();
    await base.stop();
    receiver.close();
  }
}
