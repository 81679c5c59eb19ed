/**
 * What users send is stored as sent (issue 19): JSON the database would refuse as a native
 * document (nested arrays, keys with "$" or ".", empty or padded keys) goes in through every door
 * and comes back out of every one unchanged, in key order, on the real local stack.
 */
import { parse } from 'csv-parse/sync';
import type { MqttClient } from 'mqtt';
import { api, Json, stack } from '../../support/env';
import { fleet, publish } from '../messaging/helpers';
import { connect, inbox, topicsOf, until } from '../mqtt/support';

const TEXT = '{"m":[[1,2]],"$k":{"a.b":[[[]]],"$set":{"x":1}}," padded ":"ü😀","":{"$where":"1"},"n":-0.5,"deep":[{"$x":[[{"y.z":null}]]}]}';
const same = (v: unknown) => expect(JSON.stringify(v)).toBe(TEXT);
const data = () => JSON.parse(TEXT) as Record<string, unknown>;

let f: Awaited<ReturnType<typeof fleet>>;
const open: MqttClient[] = [];

beforeAll(async () => {
  f = await fleet('pro', ['src', 'dst']);
});
afterAll(async () => {
  await Promise.all(open.map((c) => c.endAsync(true)));
});

const key = (name: string) => f.devices[name].apiKey;

describe('a message with nested arrays and $/. keys', () => {
  let httpId: string;
  let mqttId: string;

  beforeAll(async () => {
    const r = await publish(key('src'), { msg_type: 'publish', data: data(), dest: 'dst', context: { tags: ['odd'] } });
    expect(r.status).toBe(200);
    httpId = r.body.content;
  });

  it('HTTP publish → check_messages of the destination', async () => {
    const r = await api('GET', '/api/entities/check_messages?limit=10', { key: key('dst') });
    expect(r.status).toBe(200);
    const m = (r.body.messages as Json[]).find((x) => x.id === httpId);
    same(m.data);
  });

  it('one message, the list and search give it back unchanged', async () => {
    const one = await api('GET', `/api/entities/messages/${httpId}`, { key: f.apiKey });
    expect(one.status).toBe(200);
    same(one.body.data);
    const list = await api('GET', '/api/entities/messages?entity_name=src&limit=100', { key: f.apiKey });
    same((list.body.messages as Json[]).find((x) => x.id === httpId).data);
    const found = await api('POST', '/api/entities/messages/search', { key: f.apiKey, body: { entity_name: 'src', tags: ['odd'] } });
    expect(found.status).toBe(200);
    same((found.body.messages as Json[]).find((x) => x.id === httpId).data);
  });

  it('a batch stores it too', async () => {
    const r = await api('POST', '/api/entities/messages', { key: key('src'), body: [{ msg_type: 'publish', data: data() }, { msg_type: 'state_update', data: data() }] });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: Json) => x.code)).toEqual([200, 200]);
    same((await api('GET', `/api/entities/messages/${r.body.results[0].content}`, { key: f.apiKey })).body.data);
  });

  it('MQTT publish → the destination\'s MQTT messages topic, and history', async () => {
    const [ts, td] = await Promise.all([topicsOf(f.devices.src), topicsOf(f.devices.dst)]);
    const receiver = await connect(stack().mqttUrl, f.devices.dst);
    open.push(receiver);
    const box = inbox(receiver);
    await receiver.subscribeAsync(td.messages, { qos: 1 });
    const sender = await connect(stack().mqttUrl, f.devices.src);
    open.push(sender);
    await sender.publishAsync(ts.publish, JSON.stringify({ msg_type: 'publish', data: data(), dest: 'dst', context: { tags: ['via-mqtt'] } }), { qos: 1 });
    const got = await box.next((b) => b.msg_type === 'publish' && b.tags?.[0] === 'via-mqtt', 10_000);
    same(got.body.data);
    mqttId = got.body.id;
    same((await api('GET', `/api/entities/messages/${mqttId}`, { key: f.apiKey })).body.data);
    // Later directed messages are to be polled over HTTP.
    await Promise.all(open.splice(0).map((c) => c.endAsync()));
  });

  it('both exports hold it unchanged', async () => {
    const json = await api('GET', '/api/messages/export?format=json', { key: f.apiKey });
    expect(json.status).toBe(200);
    for (const id of [httpId, mqttId]) same((json.body as Json[]).find((x) => x.id === id).data);
    const csv = await api('GET', '/api/messages/export?format=csv', { key: f.apiKey });
    const rows = parse(csv.text, { columns: true }) as Record<string, string>[];
    for (const id of [httpId, mqttId]) expect(rows.find((x) => x.id === id)?.data).toBe(TEXT);
  });
});

describe('the state table', () => {
  it('state_new, state_update, PATCH and PUT keep any key and value', async () => {
    const k = key('src');
    expect((await publish(k, { msg_type: 'state_new', data: data() })).status).toBe(200);
    same((await api('GET', '/api/entities/status-table', { key: k })).body.statusTable);
    const merged = await publish(k, { msg_type: 'state_update', data: { ' padded ': 'again', 'new.key': [[0]] } });
    expect(merged.status).toBe(200);
    const table = (await api('GET', '/api/entities/status-table', { key: k })).body.statusTable;
    expect(JSON.stringify(table)).toBe(TEXT.replace('"ü😀"', '"again"').replace(/}$/, ',"new.key":[[0]]}'));
    const patched = await api('PATCH', '/api/entities/status-table', { key: k, body: { '$inc': { n: 1 } } });
    expect(patched.status).toBe(200);
    expect(patched.body.statusTable.$inc).toEqual({ n: 1 });
    const put = await api('PUT', '/api/entities/status-table', { key: k, body: data() });
    expect(put.status).toBe(200);
    same(put.body.statusTable);
    same((await api('GET', '/api/entities/status-table', { key: k })).body.statusTable);
  });
});

describe('account-side JSON', () => {
  it('entity metadata (PATCH) and bulk metadata', async () => {
    const p = await api('PATCH', '/api/entities/dst', { key: f.apiKey, body: { metadata: data() } });
    expect(p.status).toBe(200);
    same(p.body.metadata);
    same((await api('GET', '/api/entities/dst', { key: f.apiKey })).body.metadata);
    const bulk = await api('POST', '/api/entities/bulk', { key: f.apiKey, body: { count: 1, prefix: 'meta', metadata: data() } });
    expect(bulk.status).toBe(200);
    expect(bulk.body.created).toBe(1);
    same((await api('GET', '/api/entities/meta-1', { key: f.apiKey })).body.metadata);
  });

  it('a service rule schema with nested arrays in enum, stored and applied', async () => {
    const schema = { properties: { m: { enum: [[[1, 2]]] } }, required: ['m'] };
    const s = await api('POST', '/api/services', { key: f.apiKey, body: { name: 'nested', rules: [{ name: 'm is [[1,2]]', schema }] } });
    expect(s.status).toBe(201);
    expect((await api('GET', `/api/services/${s.body.id}`, { key: f.apiKey })).body.rules).toEqual([{ name: 'm is [[1,2]]', schema }]);
    expect((await api('PATCH', '/api/entities/src', { key: f.apiKey, body: { service: s.body.id } })).status).toBe(200);
    const passed = await publish(key('src'), { msg_type: 'publish', data: data(), dest: 'dst' });
    const failed = await publish(key('src'), { msg_type: 'publish', data: { m: [[2, 1]] }, dest: 'dst' });
    expect([passed.status, failed.status]).toEqual([200, 200]);
    const delivered = await until(async () => {
      const r = await api('GET', '/api/entities/check_messages?limit=10', { key: key('dst') });
      return r.body.messages?.length ? (r.body.messages as Json[]) : undefined;
    }, 5_000, 'both messages delivered');
    same(delivered.find((x) => x.id === passed.body.content).data);
    expect(delivered.find((x) => x.id === failed.body.content).data.validation.result).toBe('failed');
  });
});
