/**
 * MQTT end to end: 1,000 simulated devices connected to a real service (started like `npm start`,
 * embedded broker) publish telemetry for BENCH_MQTT_SECONDS (default 60) while a commander sends
 * directed messages over HTTP to random devices. Reports sustained messages per second stored
 * (counted in the service's database), directed-message delivery latency p50/p99 (HTTP send to MQTT
 * receipt), and the service's peak RSS (VmHWM). Then, on the same machine, a bare in-process aedes
 * with mqtt.js clients gives the raw publish-subscribe throughput as the reference, and the ratio.
 *
 * Devices respect the 50 requests per second per key limit: each publishes at QoS 1, waits for
 * the PUBACK, and paces itself to at most BENCH_MQTT_RATE (default 5) messages per second.
 */
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { Aedes } from 'aedes';
import mqtt, { MqttClient } from 'mqtt';
import { pickPorts, startServiceProcess } from '../test/support/service';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { loadSecrets } from '../src/secrets';
import { openDatabase } from '../src/storage/engine';
import { createServices } from '../src/services';
import { topicsOf } from '../src/messaging/topics';
import { directTo } from './_messages-direct';

const DEVICES = Number(process.env.BENCH_MQTT_DEVICES ?? 1000);
const SECONDS = Number(process.env.BENCH_MQTT_SECONDS ?? 60);
const RATE = Math.min(50, Number(process.env.BENCH_MQTT_RATE ?? 5));
const COMMANDS_PER_SECOND = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

function connectClient(url: string, opts: mqtt.IClientOptions): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 30_000, ...opts });
    c.once('connect', () => resolve(c));
    c.once('error', reject);
  });
}

function vmHwmKb(pid: number): number {
  const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/**
 * Bare aedes, in this process: P publishers at QoS 1 (each with up to 32 unacknowledged, like the
 * devices above but unpaced) into one subscriber on `bench/#` at QoS 0, for `seconds`.
 */
async function rawAedes(seconds: number, publishers: number): Promise<number> {
  // A high concurrency keeps mqemitter from queueing (its queue drains recursively and can overflow the stack).
  const broker = await Aedes.createBroker({ concurrency: 100_000 });
  const server = net.createServer(broker.handle);
  const [port] = await pickPorts(1);
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const url = `mqtt://127.0.0.1:${port}`;
  const sub = await connectClient(url, { clientId: 'sub' });
  let received = 0;
  sub.on('message', () => { received++; });
  await sub.subscribeAsync('bench/#', { qos: 0 });
  const pubs = await Promise.all(Array.from({ length: publishers }, (_, i) => connectClient(url, { clientId: `pub-${i}` })));
  const payload = JSON.stringify({ msg_type: 'publish', data: { temp: 21.5, seq: 0 } });
  let running = true;
  const loops = pubs.map((p, i) => Promise.all(Array.from({ length: 32 }, async () => {
    while (running) await p.publishAsync(`bench/${i}`, payload, { qos: 1 });
  })));
  await sleep(1_000); // warm-up
  const r0 = received;
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const rate = (received - r0) / ((performance.now() - t0) / 1000);
  running = false;
  await Promise.all(loops);
  await Promise.all([...pubs, sub].map((c) => c.endAsync(true)));
  await new Promise<void>((r) => broker.close(() => r()));
  server.close();
  return rate;
}

export async function run(): Promise<void> {
  const service = await startServiceProcess({ extraEnv: { LOG_LEVEL: 'warn' }, timeoutMs: 180_000 });
  const clients: MqttClient[] = [];
  try {
    const config = loadConfig({ ...process.env, ...service.env.env });
    const storage = await openDatabase(config);
    const services = createServices({ config, logger: createLogger('silent'), storage, secrets: loadSecrets(config) });
    const { accountId } = await services.accounts.createAccount({ name: 'bench-mqtt', plan: 'pro' });
    const account = await services.accounts.getAccount(accountId);
    const t0 = performance.now();
    const devices: Array<{ name: string; resourcePath: string; apiKeyId: string; apiKey: string }> = [];
    for (let i = 0; i < DEVICES; i++) devices.push(await services.entities.createEntity(accountId, { name: `dev-${i}` }));
    const commander = await services.entities.createEntity(accountId, { name: 'commander' });
    await storage.close();
    console.log(`created ${DEVICES} entities in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const url = service.env.mqttUrl;
    const latencies: number[] = [];
    const t1 = performance.now();
    for (let i = 0; i < DEVICES; i += 100) {
      clients.push(...(await Promise.all(devices.slice(i, i + 100).map((d) => connectClient(url, { clientId: d.resourcePath, username: d.apiKeyId, password: d.apiKey })))));
    }
    await Promise.all(clients.map(async (c, i) => {
      const t = topicsOf(accountId, account.region, devices[i].apiKeyId);
      c.on('message', (_topic, payload) => {
        const m = JSON.parse(payload.toString('utf8')) as { msg_type: string; data: { sentAt?: number } };
        if (m.msg_type === 'publish' && typeof m.data.sentAt === 'number') latencies.push(Date.now() - m.data.sentAt);
      });
      await c.subscribeAsync(t.messages, { qos: 1 });
    }));
    console.log(`connected and subscribed ${DEVICES} devices in ${((performance.now() - t1) / 1000).toFixed(1)} s`);

    const direct = await directTo(service.env.databaseEngine, service.env);
    const stored = () => direct.count(accountId, 'commander');

    let running = true;
    let published = 0;
    let errors = 0;
    const start = Date.now();
    const loops = clients.map(async (c, i) => {
      const topic = topicsOf(accountId, account.region, devices[i].apiKeyId).publish;
      let seq = 0;
      // Spread the devices' first publishes over one period.
      await sleep(Math.random() * (1000 / RATE));
      while (running) {
        const due = Date.now() + 1000 / RATE;
        try {
          await c.publishAsync(topic, JSON.stringify({ msg_type: 'publish', data: { temp: 20 + (seq % 10), seq: seq++ } }), { qos: 1 });
          published++;
        } catch {
          errors++;
        }
        const wait = due - Date.now();
        if (wait > 0) await sleep(wait);
      }
    });
    let commands = 0;
    const commanderLoop = (async () => {
      while (running) {
        const dest = `dev-${Math.floor(Math.random() * DEVICES)}`;
        const r = await fetch(`${service.env.baseUrl}/api/entities/message`, {
          method: 'POST', headers: { authorization: `Bearer ${commander.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ msg_type: 'publish', dest, data: { cmd: 'ping', sentAt: Date.now() } }),
        });
        await r.arrayBuffer();
        if (r.status === 200) commands++;
        await sleep(1000 / COMMANDS_PER_SECOND);
      }
    })();

    // Sustained rate: stored messages between 10% and 100% of the run (the first part warms up).
    await sleep(SECONDS * 100);
    const c0 = await stored();
    const w0 = Date.now();
    await sleep(SECONDS * 900 - (Date.now() - start - SECONDS * 100));
    const c1 = await stored();
    const w1 = Date.now();
    running = false;
    await Promise.all(loops);
    await commanderLoop;
    await sleep(2_000);
    const sustained = (c1 - c0) / ((w1 - w0) / 1000);
    const rss = vmHwmKb(service.env.pid);
    await direct.close();
    await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
    await service.stop();

    const aedesRate = await rawAedes(Math.min(15, Math.max(5, SECONDS / 4)), 50);
    latencies.sort((a, b) => a - b);
    const rows: Array<[string, string]> = [
      ['devices', String(DEVICES)],
      ['seconds', String(SECONDS)],
      ['offered rate per device (msg/s, QoS 1)', String(RATE)],
      ['publishes acknowledged', String(published)],
      ['publish errors', String(errors)],
      ['sustained stored (msg/s, counted in the database)', sustained.toFixed(1)],
      ['directed messages sent / delivered', `${commands} / ${latencies.length}`],
      ['delivery latency p50 (ms)', pct(latencies, 50).toFixed(1)],
      ['delivery latency p99 (ms)', pct(latencies, 99).toFixed(1)],
      ['service peak RSS VmHWM (MB)', (rss / 1024).toFixed(1)],
      ['raw aedes pub/sub (msg/s, 50 pubs QoS 1)', aedesRate.toFixed(0)],
      ['service / raw aedes', (sustained / aedesRate).toFixed(4)],
    ];
    for (const [k, v] of rows) console.log(`${k.padEnd(44)} ${v}`);
  } finally {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    await service.stop();
  }
}
