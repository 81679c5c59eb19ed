/**
 * Devices over the embedded broker, from outside: real MQTT clients against the running service.
 */
import { readFileSync } from 'node:fs';
import type { MqttClient } from 'mqtt';
import { api, newAccount, stack, Json } from '../../support/env';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/log';
import { loadSecrets } from '../../../src/secrets';
import { openDatabase } from '../../../src/storage/engine';
import { createServices } from '../../../src/services';
import { connect, deliveredAfter, Device, inbox, newDevice, sleep, Topics, topicsOf, until, within } from './support';

let account: { accountId: string; apiKey: string };
let a: Device;
let b: Device;
let ta: Topics;
let tb: Topics;
const open: MqttClient[] = [];

const track = (c: MqttClient) => { open.push(c); return c; };
const url = () => stack().mqttUrl;

beforeAll(async () => {
  account = await newAccount('pro', 'mqtt-devices');
  [a, b] = await Promise.all([newDevice(account.accountId, 'sensor-a'), newDevice(account.accountId, 'sensor-b')]);
  [ta, tb] = await Promise.all([topicsOf(a), topicsOf(b)]);
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.endAsync(true)));
  // The broker handles a disconnect after the socket has closed. Until it has, sensor-a still
  // counts as listening, and the next test's directed message to it would be claimed for the
  // client just closed: wait until the service has it offline.
  await until(async () => ((await api('GET', '/api/entities/sensor-a', { key: account.apiKey })).body as Json).online === false || undefined, 20_000, 'sensor-a offline after the test');
});

test('topics follow {accountId}/{region}/{apiKeyId}/...', () => {
  expect(ta.publish).toBe(`${account.accountId}/local/${a.apiKeyId}/publish`);
  expect(ta.messages).toBe(`${account.accountId}/local/${a.apiKeyId}/messages`);
  expect(ta.state).toBe(`${account.accountId}/local/${a.apiKeyId}/state`);
});

test('a device connects and its telemetry appears in the messages list; connect/disconnect drive online status', async () => {
  const c = track(await connect(url(), a));
  await until(async () => ((await api('GET', '/api/entities/sensor-a', { key: account.apiKey })).body as Json).online === true || undefined, 20_000, 'online after connect');
  const marker = `t-${Date.now()}`;
  await c.publishAsync(ta.publish, JSON.stringify({ msg_type: 'publish', data: { temp: 21.5, marker }, context: { tags: ['telemetry'] } }), { qos: 1 });
  const item = await until(async () => {
    const r = await api('GET', '/api/entities/messages?entity_name=sensor-a&limit=50', { key: account.apiKey });
    return ((r.body as Json).messages as Json[]).find((m) => m.data.marker === marker);
  }, 30_000, 'the MQTT publish in the messages list');
  expect(item).toMatchObject({ source: a.resourcePath, msgType: 'publish', tags: ['telemetry'], data: { temp: 21.5 } });
  await c.endAsync();
  await until(async () => ((await api('GET', '/api/entities/sensor-a', { key: account.apiKey })).body as Json).online === false || undefined, 20_000, 'offline after disconnect');
});

test('a directed message reaches the connected device on its messages topic at QoS 1, and HTTP polling then finds nothing', async () => {
  const c = track(await connect(url(), a));
  const box = inbox(c);
  await c.subscribeAsync(ta.messages, { qos: 1 });
  const sent = await api('POST', '/api/entities/message', { key: b.apiKey, body: { msg_type: 'publish', dest: 'sensor-a', data: { cmd: 'blink', n: 3 }, context: { tags: ['cmd'] } } });
  expect(sent.status).toBe(200);
  const got = await box.next((m) => m.id === sent.body.content);
  expect(got.qos).toBe(1);
  expect(got.body).toMatchObject({ msg_type: 'publish', data: { cmd: 'blink', n: 3 }, tags: ['cmd'], source: b.resourcePath });
  const polled = await api('GET', '/api/entities/check_messages?limit=10', { key: a.apiKey });
  expect(polled.body.messages).toBeNull();
});

test('a message sent while the device is offline waits and is delivered when it subscribes; one polled over HTTP is not delivered again', async () => {
  const first = await api('POST', '/api/entities/message', { key: b.apiKey, body: { msg_type: 'publish', dest: 'sensor-a', data: { seq: 1 } } });
  const second = await api('POST', '/api/entities/message', { key: b.apiKey, body: { msg_type: 'publish', dest: 'sensor-a', data: { seq: 2 } } });
  expect([first.status, second.status]).toEqual([200, 200]);
  // Poll one over HTTP (oldest first), then connect: only the other arrives over MQTT.
  const polled = await api('GET', '/api/entities/check_messages?limit=1', { key: a.apiKey });
  expect(polled.body.messages.map((m: Json) => m.id)).toEqual([first.body.content]);
  const c = track(await connect(url(), a));
  const box = inbox(c);
  await c.subscribeAsync(ta.messages, { qos: 1 });
  const got = await box.next((m) => m.data?.seq !== undefined);
  expect(got.body.id).toBe(second.body.content);
  // A message sent after the subscription arrives after whatever the subscription released.
  await deliveredAfter(box, { key: b.apiKey, dest: 'sensor-a' });
  expect(box.messages.filter((m) => m.body.id === first.body.content)).toHaveLength(0);
});

test('the state table is published retained: a subscriber gets the current table at once, and MQTT state updates take effect immediately', async () => {
  const put = await api('PUT', '/api/entities/status-table', { key: a.apiKey, body: { mode: 'eco', fw: '1.0' } });
  expect(put.status).toBe(200);
  const c = track(await connect(url(), a));
  const box = inbox(c);
  await c.subscribeAsync(ta.state, { qos: 1 });
  const first = await box.next((m) => m.statusTable?.mode === 'eco');
  expect(first.body.statusTable).toEqual({ mode: 'eco', fw: '1.0' });

  await c.publishAsync(ta.publish, JSON.stringify({ msg_type: 'state_update', data: { fw: '1.1' } }), { qos: 1 });
  const updated = await box.next((m) => m.statusTable?.fw === '1.1');
  expect(updated.body.statusTable).toEqual({ mode: 'eco', fw: '1.1' });
  const read = await api('GET', '/api/entities/status-table', { key: a.apiKey });
  expect(read.body.statusTable).toEqual({ mode: 'eco', fw: '1.1' });

  // A later subscriber (a fresh connection) gets the retained, current table.
  const c2 = track(await connect(url(), a, { clientId: a.resourcePath }));
  const box2 = inbox(c2);
  await c2.subscribeAsync(ta.state, { qos: 1 });
  const retained = await box2.next((m) => m.statusTable?.fw === '1.1');
  expect(retained.retain).toBe(true);
  // Once: the broker's retained copy, not a second fresh publish on top of it. A later change
  // arrives after anything the subscription released.
  const patch = await api('PATCH', '/api/entities/status-table', { key: a.apiKey, body: { fw: '1.2' } });
  expect(patch.status).toBe(200);
  await box2.next((m) => m.statusTable?.fw === '1.2');
  expect(box2.messages.filter((m) => m.body.statusTable?.fw === '1.1')).toHaveLength(1);
});

test('wrong credentials are refused with CONNACK not authorized', async () => {
  await expect(connect(url(), { ...a, apiKey: `${a.apiKey}x` })).rejects.toMatchObject({ code: 5 });
  await expect(connect(url(), a, { username: b.apiKeyId })).rejects.toMatchObject({ code: 5 });
  await expect(connect(url(), a, { clientId: b.resourcePath })).rejects.toMatchObject({ code: 5 });
  await expect(connect(url(), a, { password: undefined })).rejects.toMatchObject({ code: 5 });
  await expect(connect(url(), a, { password: b.apiKey, username: a.apiKeyId })).rejects.toMatchObject({ code: 5 });
});

test('a foreign topic is refused: subscribing to another device\'s topics, publishing to another\'s publish topic', async () => {
  const c = track(await connect(url(), a));
  // mqtt.js rejects a SUBACK carrying refusals; the packet says which.
  const refused = await c.subscribeAsync([tb.messages, tb.state, `${account.accountId}/#`, ta.publish, ta.messages], { qos: 1 }).then(() => undefined, (e: Json) => e);
  expect(refused?.packet?.granted).toEqual([128, 128, 128, 128, 1]);
  const marker = `foreign-${Date.now()}`;
  const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
  c.publish(tb.publish, JSON.stringify({ msg_type: 'publish', data: { marker } }), { qos: 0 });
  await closed; // aedes drops a client whose publish is not authorized
  // A later allowed publish stored means the gateway has passed the refused one, had it got it.
  const after = `after-${marker}`;
  const c2 = track(await connect(url(), a));
  await c2.publishAsync(ta.publish, JSON.stringify({ msg_type: 'publish', data: { marker: after } }), { qos: 1 });
  await until(async () => {
    const r = await api('GET', '/api/entities/messages?limit=100', { key: account.apiKey });
    return (r.body.messages as Json[]).some((m) => m.data.marker === after) || undefined;
  }, 30_000, 'the later allowed publish');
  const list = await api('GET', '/api/entities/messages?limit=100', { key: account.apiKey });
  expect((list.body.messages as Json[]).filter((m) => m.data.marker === marker)).toHaveLength(0);
});

test('a bad publish is answered with an error message on the device\'s messages topic', async () => {
  const c = track(await connect(url(), a));
  const box = inbox(c);
  await c.subscribeAsync(ta.messages, { qos: 1 });
  await c.publishAsync(ta.publish, JSON.stringify({ msg_type: 'bogus', data: {} }), { qos: 1 });
  const unsupported = await box.next((m) => m.msg_type === 'error');
  expect(unsupported.body.data).toMatchObject({ code: 'unsupported_msg_type', status: 400 });
  expect(unsupported.body.data.reason).toContain('client_cmd_resp');

  await c.publishAsync(ta.publish, JSON.stringify({ msg_type: 'publish', data: { blob: 'x'.repeat(6_000) } }), { qos: 1 });
  const tooBig = await box.next((m) => m.msg_type === 'error');
  expect(tooBig.body.data).toMatchObject({ code: 'payload_too_large', status: 413 });

  await c.publishAsync(ta.publish, JSON.stringify({ msg_type: 'publish', data: {}, context: { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) } }), { qos: 1 });
  const tags = await box.next((m) => m.msg_type === 'error');
  expect(tags.body.data.status).toBe(400);

  await c.publishAsync(ta.publish, '{not json', { qos: 1 });
  const bad = await box.next((m) => m.msg_type === 'error');
  expect(bad.body.data).toMatchObject({ code: 'invalid_json', status: 400 });
});

test('client_cmd_resp over MQTT goes to the command\'s sender', async () => {
  const c = track(await connect(url(), a));
  await c.publishAsync(ta.publish, JSON.stringify({ msg_type: 'client_cmd_resp', dest: 'sensor-b', data: { ok: true, cmd: 'blink' } }), { qos: 1 });
  const got = await until(async () => {
    const r = await api('GET', '/api/entities/check_messages?limit=5', { key: b.apiKey });
    return (r.body.messages as Json[] | null)?.find((m) => m.msg_type === 'client_cmd_resp');
  }, 30_000, 'the command response');
  expect(got).toMatchObject({ data: { ok: true, cmd: 'blink' }, source: a.resourcePath });
});

test('MQTT publishes count against the 50 requests per second per key', async () => {
  const d = await newDevice(account.accountId, 'burst');
  const t = await topicsOf(d);
  const c = track(await connect(url(), d));
  const box = inbox(c);
  await c.subscribeAsync(t.messages, { qos: 1 });
  await Promise.all(Array.from({ length: 160 }, (_, i) => c.publishAsync(t.publish, JSON.stringify({ msg_type: 'heartbeat', data: { mem_free: i } }), { qos: 0 })));
  const limited = await box.next((m) => m.msg_type === 'error' && m.data.code === 'rate_limited', 10_000);
  expect(limited.body.data.status).toBe(429);
});

test('exactly once across MQTT delivery and HTTP polling racing for the same messages', async () => {
  const c = track(await connect(url(), a));
  const box = inbox(c);
  await c.subscribeAsync(ta.messages, { qos: 1 });
  const polled: string[] = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const r = await api('GET', '/api/entities/check_messages?limit=5', { key: a.apiKey });
      for (const m of (r.body?.messages as Json[] | null) ?? []) polled.push(m.id);
      await sleep(40);
    }
  })();
  const sent: string[] = [];
  for (let round = 0; round < 3; round++) {
    const batch = await api('POST', '/api/entities/messages', {
      key: b.apiKey, body: Array.from({ length: 40 }, (_, i) => ({ msg_type: 'publish', dest: 'sensor-a', data: { race: round * 40 + i } })),
    });
    expect(batch.status).toBe(200);
    for (const r of batch.body.results as Json[]) { expect(r.code).toBe(200); sent.push(r.content); }
    await sleep(300);
  }
  await until(async () => (box.messages.filter((m) => m.body.data?.race !== undefined).length + polled.length >= sent.length ? true : undefined), 60_000, 'all messages taken');
  polling = false;
  await poller;
  // Nothing left unclaimed: a message sent now arrives after any late duplicate would have.
  await deliveredAfter(box, { key: b.apiKey, dest: 'sensor-a' });
  const viaMqtt = box.messages.filter((m) => m.body.data?.race !== undefined).map((m) => m.body.id as string);
  const all = [...viaMqtt, ...polled];
  expect(new Set(all).size).toBe(all.length);
  expect(new Set(all)).toEqual(new Set(sent));
  expect(viaMqtt.length).toBeGreaterThan(0);
});

test('revoking a key closes its live session at once, and the old key is refused afterwards', async () => {
  const d = await newDevice(account.accountId, 'rotating');
  const c = track(await connect(url(), d));
  const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
  const rot = await api('POST', '/api/entities/rotating/keys/rotate', { key: account.apiKey });
  expect(rot.status).toBe(200);
  await within(closed, 30_000, 'the session closed after the rotation');
  await expect(connect(url(), d)).rejects.toMatchObject({ code: 5 });
  const fresh = track(await connect(url(), { ...d, apiKeyId: rot.body.apiKeyId, apiKey: rot.body.apiKey }));
  expect(fresh.connected).toBe(true);
});

// Two devices sharing a key took the session from each other every second without a word.
test('a second connection with the same key takes the session, and the service says so in its log and metrics', async () => {
  const d = await newDevice(account.accountId, 'twin');
  const metric = async () => {
    const text = await (await fetch(`http://127.0.0.1:${stack().metricsPort}/metrics`)).text();
    return Number(/^mqtt_session_takeovers_total (\d+)/m.exec(text)?.[1] ?? 0);
  };
  const before = await metric();
  const first = track(await connect(url(), d));
  const closed = new Promise<void>((resolve) => first.once('close', () => resolve()));
  const second = track(await connect(url(), d));
  await within(closed, 30_000, 'the first session closed by the second');
  expect(second.connected).toBe(true);
  expect(await metric()).toBeGreaterThanOrEqual(before + 1);
  const warned = await until(async () => readFileSync(stack().logFile, 'utf8').split('\n')
    .find((l) => l.includes('took over the session') && l.includes(d.apiKeyId)), 30_000, 'the takeover warning in the log');
  expect(JSON.parse(warned)).toMatchObject({ level: 40, entityName: 'twin', apiKeyId: d.apiKeyId });
  expect(warned).not.toContain(d.apiKey);
});

// Found by an outside probe: a session kept the permissions it had at CONNECT, so a device whose
// role lost entity:CheckMessages still received directed messages over MQTT (HTTP answered 403).
test('a role change that takes permissions away closes the session; reconnected, the device may subscribe only as its new role allows', async () => {
  const role = `pub-only-${Date.now()}`;
  expect((await api('POST', '/api/roles', { key: account.apiKey, body: { name: role, permissions: ['entity:Publish', 'entity:State'] } })).status).toBe(201);
  const d = await newDevice(account.accountId, 'demoted');
  const t = await topicsOf(d);
  const c = track(await connect(url(), d));
  await c.subscribeAsync(t.messages, { qos: 1 });
  const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
  expect((await api('PATCH', '/api/entities/demoted', { key: account.apiKey, body: { role } })).status).toBe(200);
  await within(closed, 30_000, 'the session closed after its role lost entity:CheckMessages');
  c.end(true);
  const again = track(await connect(url(), d));
  const refused = await again.subscribeAsync([t.messages, t.state], { qos: 1 }).then(() => undefined, (e: Json) => e);
  expect(refused?.packet?.granted).toEqual([128, 1]);
  // A message for it now waits in its inbox (HTTP polling is refused too): nothing arrives here.
  const box = inbox(again);
  const sent = await api('POST', '/api/entities/message', { key: b.apiKey, body: { msg_type: 'publish', dest: 'demoted', data: { after: 'demotion' } } });
  expect(sent.status).toBe(200);
  expect((await api('GET', '/api/entities/check_messages', { key: d.apiKey })).status).toBe(403);
  // Narrowing the role itself (PATCH /api/roles/:name) closes the session in the same way.
  const closedAgain = new Promise<void>((resolve) => again.once('close', () => resolve()));
  expect((await api('PATCH', `/api/roles/${role}`, { key: account.apiKey, body: { permissions: ['entity:Publish'] } })).status).toBe(200);
  await within(closedAgain, 30_000, 'the session closed after its role lost entity:State');
  again.end(true);
  expect(box.messages.some((m) => (m.body as Json)?.id === sent.body.content)).toBe(false);
});

test('a rotation made by another process closes the session too (signal log, no shared memory)', async () => {
  const d = await newDevice(account.accountId, 'rotated-elsewhere');
  const c = track(await connect(url(), d));
  const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
  const config = loadConfig({ ...process.env, ...stack().env });
  const storage = await openDatabase(config);
  try {
    const other = createServices({ config, logger: createLogger('silent'), storage, secrets: loadSecrets(config) });
    await other.entities.rotateKey(account.accountId, 'rotated-elsewhere', 'test');
    // The broker closing the session also shows the signal was written before the connection closes.
    await within(closed, 30_000, 'the session closed after the rotation in another process');
  } finally {
    await storage.close();
  }
  await expect(connect(url(), d)).rejects.toMatchObject({ code: 5 });
});
