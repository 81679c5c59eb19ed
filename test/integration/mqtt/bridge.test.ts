/**
 * External-broker mode against Mosquitto (Debian's package): two service instances on one
 * DATA_DIR (the embedded store, shared across processes), each with a bridge consuming `$share/sentinel/+/+/+/publish`, process 10,000 device
 * publishes exactly once in total. mosquitto-go-auth is not packaged in Debian, so Mosquitto here
 * authenticates from a password file and ACL file generated for the test (the same rules the
 * /api/mqtt/* endpoints answer; those endpoints are exercised directly, as go-auth would call them).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MqttClient } from 'mqtt';
import { waitForTcp } from '../../../src/stack';
import { messageOf, StoredMessage } from '../../../src/messaging/store/codec';
import { withStackRecords } from '../../support/db';
import { pickPorts, StackEnv, startServiceProcess, StartedService, storageEnvOf } from '../../support/service';
import { requireTool } from '../../support/tools';
import { Json } from '../../support/env';
import { connect, Device, inbox, Topics, until } from './support';

// Under CI=true a missing Mosquitto fails this file here, naming it; elsewhere it is skipped.
const MOSQUITTO = requireTool('mosquitto', 'Debian package mosquitto');
const MOSQUITTO_PASSWD = requireTool('mosquitto_passwd', 'Debian package mosquitto');
const maybe = MOSQUITTO && MOSQUITTO_PASSWD ? describe : describe.skip;

const DEVICES = 40;
// 1,000 in total. Fewer than the 50 per second per key limit, so no pacing is needed; throughput
// under load is bench/ territory, this test is about each publish being stored exactly once.
const PER_DEVICE = 25;

maybe('external broker (Mosquitto) with two bridged service instances', () => {
  jest.setTimeout(300_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sentinel-mosquitto-'));
  const bridgeUser = 'sentinel-bridge';
  const bridgePassword = randomBytes(16).toString('hex');
  const authSecret = randomBytes(16).toString('hex');
  const secrets = { ENTITY_KEY_SECRET: randomBytes(32).toString('hex'), DATA_ENCRYPTION_KEY: randomBytes(32).toString('hex') };
  let mosquitto: ChildProcess;
  let mqttPort: number;
  let s1: StartedService;
  let s2: StartedService;
  let accountKey: string;
  let accountId: string;
  const devices: Array<Device & { topics: Topics }> = [];
  const clients: MqttClient[] = [];

  const writeAuthFiles = () => {
    const pw = path.join(dir, 'passwd');
    execFileSync(MOSQUITTO_PASSWD!, ['-b', '-c', pw, bridgeUser, bridgePassword]);
    const acl = [`user ${bridgeUser}`, 'topic readwrite #', 'topic read $SYS/#', ''];
    for (const d of devices) {
      execFileSync(MOSQUITTO_PASSWD!, ['-b', pw, d.apiKeyId, d.apiKey]);
      acl.push(`user ${d.apiKeyId}`, `topic write ${d.topics.publish}`, `topic read ${d.topics.messages}`, `topic read ${d.topics.state}`, '');
    }
    writeFileSync(path.join(dir, 'acl'), acl.join('\n'));
  };

  const api = async (base: string, method: string, p: string, opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const res = await fetch(`${base}${p}`, {
      method, headers: { ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}), ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
    });
    const text = await res.text();
    let body: Json;
    try { body = JSON.parse(text); } catch { body = text; }
    return { status: res.status, body };
  };

  beforeAll(async () => {
    [mqttPort] = await pickPorts(1);
    writeAuthFiles();
    writeFileSync(path.join(dir, 'mosquitto.conf'), [
      `listener ${mqttPort} 127.0.0.1`,
      // Started as root, mosquitto would switch to the `mosquitto` user, which cannot read this private directory.
      `user ${os.userInfo().username}`,
      'allow_anonymous false',
      `password_file ${path.join(dir, 'passwd')}`,
      `acl_file ${path.join(dir, 'acl')}`,
      'persistence false',
      'max_queued_messages 0',
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      '',
    ].join('\n'));
    mosquitto = spawn(MOSQUITTO!, ['-c', path.join(dir, 'mosquitto.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    await waitForTcp('127.0.0.1', mqttPort, 30_000);

    const mqttEnv = {
      MQTT_URL: `mqtt://127.0.0.1:${mqttPort}`, MQTT_BRIDGE_USERNAME: bridgeUser, MQTT_BRIDGE_PASSWORD: bridgePassword,
      MQTT_AUTH_SECRET: authSecret, LOG_LEVEL: 'info',
    };
    s1 = await startServiceProcess({ extraEnv: { ...mqttEnv, ...secrets } });
    s2 = await startServiceProcess({
      extraEnv: {
        ...mqttEnv, ...secrets, ROLES: 'mqtt',
        ...storageEnvOf(s1.env), TEMPORAL_ADDRESS: `127.0.0.1:${s1.env.temporalPort}`,
      },
    });

    const cliEnv = { ...process.env, ...s1.env.env, ...secrets };
    const run = (...args: string[]) => JSON.parse(execFileSync(process.execPath, [path.join(__dirname, '..', '..', '..', 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(__dirname, '..', '..', '..', 'src', 'cli', 'main.ts'), ...args], { env: cliEnv }).toString()) as Record<string, string>;
    const acct = run('account', 'create', '--name', 'bridge-test', '--plan', 'pro');
    accountKey = acct.apiKey;
    accountId = acct.accountId;
    const bulk = await api(s1.env.baseUrl, 'POST', '/api/entities/bulk', { key: accountKey, body: { count: DEVICES + 1, prefix: 'bdev' } });
    expect(bulk.body.created).toBe(DEVICES + 1);
    for (const r of bulk.body.results as Json[]) {
      const me = await api(s1.env.baseUrl, 'GET', '/api/entities/me', { key: r.apiKey });
      devices.push({ name: r.name, resourcePath: r.resourcePath, apiKeyId: r.apiKeyId, apiKey: r.apiKey, topics: me.body.mqtt.topics });
    }
    writeAuthFiles();
    mosquitto.kill('SIGHUP'); // reload the password and ACL files
    // Reloaded once the last device's credentials are accepted.
    const last = devices[devices.length - 1];
    await until(async () => {
      const c = await connect(`mqtt://127.0.0.1:${mqttPort}`, last).catch(() => undefined);
      await c?.endAsync(true);
      return c ? true : undefined;
    }, 30_000, 'Mosquitto to reload its password file');
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    await Promise.all([s1?.stop(), s2?.stop()]);
    mosquitto?.kill('SIGTERM');
  });

  test('the broker authentication and ACL endpoints answer as EMQX and mosquitto-go-auth expect', async () => {
    const d = devices[0];
    const base = s1.env.baseUrl;
    const h = { authorization: `Bearer ${authSecret}` };
    expect((await api(base, 'POST', '/api/mqtt/auth', { body: { clientid: d.resourcePath, username: d.apiKeyId, password: d.apiKey } })).status).toBe(401);
    const ok = await api(base, 'POST', '/api/mqtt/auth', { headers: h, body: { clientid: d.resourcePath, username: d.apiKeyId, password: d.apiKey } });
    expect(ok).toEqual({ status: 200, body: { result: 'allow', ok: true, error: '', is_superuser: false } });
    // go-auth cannot send headers: the secret rides in the query string of the configured URI.
    const bad = await api(base, 'POST', `/api/mqtt/auth?secret=${authSecret}`, { body: { clientid: d.resourcePath, username: d.apiKeyId, password: devices[1].apiKey } });
    expect(bad.body).toMatchObject({ result: 'deny', ok: false });
    const bridge = await api(base, 'POST', '/api/mqtt/auth', { headers: h, body: { clientid: 'x', username: bridgeUser, password: bridgePassword } });
    expect(bridge.body).toMatchObject({ result: 'allow', is_superuser: true });

    const acl = (body: Record<string, unknown>) => api(base, 'POST', '/api/mqtt/acl', { headers: h, body });
    expect((await acl({ clientid: d.resourcePath, username: d.apiKeyId, topic: d.topics.publish, action: 'publish' })).body.result).toBe('allow');
    expect((await acl({ clientid: d.resourcePath, username: d.apiKeyId, topic: d.topics.publish, acc: 2 })).body.ok).toBe(true);
    expect((await acl({ clientid: d.resourcePath, username: d.apiKeyId, topic: devices[1].topics.publish, acc: 2 })).body.ok).toBe(false);
    expect((await acl({ clientid: d.resourcePath, username: d.apiKeyId, topic: devices[1].topics.messages, action: 'subscribe' })).body.result).toBe('deny');
    expect((await acl({ clientid: d.resourcePath, username: d.apiKeyId, topic: d.topics.state, acc: 4 })).body.ok).toBe(true);
    expect((await acl({ clientid: d.resourcePath, username: d.apiKeyId, topic: `${accountId}/#`, acc: 4 })).body.ok).toBe(false);
    expect((await acl({ clientid: devices[1].resourcePath, username: d.apiKeyId, topic: d.topics.state, acc: 4 })).body.ok).toBe(false);
    expect((await acl({ clientid: 'x', username: bridgeUser, topic: '$share/sentinel/+/+/+/publish', acc: 4 })).body.ok).toBe(true);
    const sup = await api(base, 'POST', `/api/mqtt/superuser?secret=${authSecret}`, { body: { username: d.apiKeyId } });
    expect(sup.body.ok).toBe(false);
  });

  test('a directed message waits until the broker reports the subscription, then goes out through the broker once; errors come back too', async () => {
    const d = devices[DEVICES];
    const sender = devices[0];
    const c = await connect(`mqtt://127.0.0.1:${mqttPort}`, d);
    clients.push(c);
    const box = inbox(c);
    await c.subscribeAsync([d.topics.messages, d.topics.state], { qos: 1 });
    const sent = await api(s1.env.baseUrl, 'POST', '/api/entities/message', { key: sender.apiKey, body: { msg_type: 'publish', dest: d.name, data: { via: 'bridge' } } });
    expect(sent.status).toBe(200);
    // What mosquitto-go-auth sends when the device subscribes (acc 4 = subscribe); either bridge may deliver.
    const acl = await api(s1.env.baseUrl, 'POST', `/api/mqtt/acl?secret=${authSecret}`, { body: { clientid: d.resourcePath, username: d.apiKeyId, topic: d.topics.messages, acc: 4 } });
    expect(acl.body.ok).toBe(true);
    const got = await box.next((m) => m.id === sent.body.content, 30_000);
    expect(got.body).toMatchObject({ msg_type: 'publish', data: { via: 'bridge' }, source: sender.resourcePath });
    const polled = await api(s1.env.baseUrl, 'GET', '/api/entities/check_messages', { key: d.apiKey });
    expect(polled.body.messages).toBeNull();

    await c.publishAsync(d.topics.publish, JSON.stringify({ msg_type: 'nope' }), { qos: 1 });
    const err = await box.next((m) => m.msg_type === 'error', 30_000);
    expect(err.body.data).toMatchObject({ code: 'unsupported_msg_type', status: 400 });

    await c.publishAsync(d.topics.publish, JSON.stringify({ msg_type: 'state_update', data: { led: 'on' } }), { qos: 1 });
    const state = await box.next((m) => m.statusTable?.led === 'on', 30_000);
    expect(state.topic).toBe(d.topics.state);
    expect(box.messages.filter((m) => m.body.id === sent.body.content)).toHaveLength(1);
  });

  test(`${DEVICES * PER_DEVICE} device publishes through one Mosquitto and two bridges are stored exactly once`, async () => {
    const runId = `run-${randomBytes(6).toString('hex')}`;
    const total = DEVICES * PER_DEVICE;
    const conns = await Promise.all(devices.slice(0, DEVICES).map((d) => connect(`mqtt://127.0.0.1:${mqttPort}`, d)));
    clients.push(...conns);
    await Promise.all(conns.map(async (c, i) => {
      for (let seq = 0; seq < PER_DEVICE; seq++) {
        await c.publishAsync(devices[i].topics.publish, JSON.stringify({ msg_type: 'publish', data: { runId, dev: i, seq } }), { qos: 1 });
      }
    }));
    await until(async () => ((await storedOfRun(s1.env, accountId, runId)).length >= total ? true : undefined), 240_000, `${total} stored messages`);

    // Stopping both instances ends every bridge's work, so no duplicate can arrive after the count.
    // Kept for the reads below; afterAll's stop deletes them.
    await s2.stop({ keepData: true });
    await s1.stop({ keepData: true });
    const handled = [s1, s2].map((s) => {
      const lines = readFileSync(s.env.logFile, 'utf8').split('\n').filter((l) => l.includes('"bridge stopped"'));
      return lines.length ? (JSON.parse(lines[lines.length - 1]) as { processed: number }).processed : 0;
    });
    // Both instances took part: each bridge logs how many publishes it handled when it stops.
    expect(handled[0]).toBeGreaterThan(0);
    expect(handled[1]).toBeGreaterThan(0);
    expect(handled[0] + handled[1]).toBeGreaterThanOrEqual(total);

    // The stored set, read from the data directory both shared, with neither process running.
    const keys = (await storedOfRun(s1.env, accountId, runId)).map((data) => `${data.dev}:${data.seq}`);
    expect(keys.length).toBe(total);
    expect(new Set(keys).size).toBe(total);
  });
});

/** The data of the account's stored messages of one run, from the embedded store in the service's DATA_DIR. */
function storedOfRun(env: StackEnv, accountId: string, runId: string): Promise<Json[]> {
  // Message data is kept as the JSON text it arrived as (src/storage/user-json.ts): match the run id inside it.
  return withStackRecords(async ({ table }) => table<StoredMessage>('messages')
    .find("account_id = ? AND instr(json_extract(doc, '$.data'), ?) > 0", [accountId, runId])
    .map((m) => messageOf(m).data), env);
}
