/** The message pipeline from outside: types, limits, state table, directed delivery, validation services. */
import { api, Json } from '../../support/env';
import { fleet, publish } from './helpers';

const ALLOWED = ['publish', 'heartbeat', 'state_new', 'state_update', 'client_cmd_resp'];

describe('message judgement', () => {
  let f: Awaited<ReturnType<typeof fleet>>;
  beforeAll(async () => { f = await fleet('starter', ['a', 'b']); });

  it('stores a publish and answers {code: 200, content: id}; a heartbeat 200 with an empty body', async () => {
    const r = await publish(f.devices.a.apiKey, { msg_type: 'publish', data: { temp: 21 } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ code: 200, content: expect.stringMatching(/^[0-9a-f]{24}$/) });
    const hb = await publish(f.devices.a.apiKey, { msg_type: 'heartbeat', data: { mem_free: 100, mem_total: 400 } });
    expect(hb.status).toBe(200);
    expect(hb.text).toBe('');
    const bare = await publish(f.devices.a.apiKey, { msg_type: 'heartbeat' });
    expect(bare.status).toBe(200);
    const e = await api('GET', '/api/entities/a', { key: f.apiKey });
    expect(e.body).toMatchObject({ online: true, metrics: { mem_free: 100, mem_total: 400 } });
    const other = await api('GET', '/api/entities/b', { key: f.apiKey });
    expect(other.body.online).toBe(false);
  });

  it('400 for an unknown msg_type, listing every allowed type', async () => {
    const r = await publish(f.devices.a.apiKey, { msg_type: 'telemetry', data: {} });
    expect(r.status).toBe(400);
    for (const t of ALLOWED) expect(r.body.reason).toContain(t);
    expect(r.body.requestId).toBeDefined();
  });

  it('400 for publish without data, a bad timestamp, 11 tags; 10 tags pass', async () => {
    expect((await publish(f.devices.a.apiKey, { msg_type: 'publish' })).status).toBe(400);
    expect((await publish(f.devices.a.apiKey, { msg_type: 'state_update' })).status).toBe(400);
    expect((await publish(f.devices.a.apiKey, { msg_type: 'publish', data: {}, timestamp: 'yesterday' })).status).toBe(400);
    const tags = Array.from({ length: 11 }, (_, i) => `t${i}`);
    const eleven = await publish(f.devices.a.apiKey, { msg_type: 'publish', data: {}, context: { tags } });
    expect(eleven.status).toBe(400);
    expect(eleven.body.reason).toMatch(/10/);
    expect((await publish(f.devices.a.apiKey, { msg_type: 'publish', data: {}, context: { tags: tags.slice(0, 10) } })).status).toBe(200);
  });

  it('413 when data exceeds 5 KB serialized; 5 KB exactly passes', async () => {
    const over = await publish(f.devices.a.apiKey, { msg_type: 'publish', data: { s: 'x'.repeat(5 * 1024) } });
    expect(over.status).toBe(413);
    expect(typeof over.body.reason).toBe('string');
    // {"s":"..."} is 8 bytes of envelope
    const exact = await publish(f.devices.a.apiKey, { msg_type: 'publish', data: { s: 'x'.repeat(5 * 1024 - 8) } });
    expect(exact.status).toBe(200);
  });

  it('400 number_out_of_range for 1e309 anywhere in data, and the state table keeps what it had', async () => {
    const raw = (text: string) => api('POST', '/api/entities/message', { key: f.devices.b.apiKey, rawBody: text, headers: { 'content-type': 'application/json' } });
    expect((await raw('{"msg_type": "state_new", "data": {"level": 3}}')).status).toBe(200);
    for (const text of ['{"msg_type": "state_update", "data": {"level": 1e309}}', '{"msg_type": "publish", "data": {"r": [0, -1e400]}}']) {
      const r = await raw(text);
      expect([r.status, r.body.code]).toEqual([400, 'number_out_of_range']);
      expect(r.body.reason).toMatch(/^data\.(level|r\[1\]) must be a finite number/);
    }
    expect((await api('GET', '/api/entities/status-table', { key: f.devices.b.apiKey })).body).toEqual({ statusTable: { level: 3 } });
  });

  it('the account key cannot publish; a missing key is 401 {reason}', async () => {
    expect((await publish(f.apiKey, { msg_type: 'publish', data: {} })).status).toBe(403);
    const none = await api('POST', '/api/entities/message', { body: { msg_type: 'publish', data: {} } });
    expect(none.status).toBe(401);
    expect(typeof none.body.reason).toBe('string');
  });

  it('judges each message of a batch on its own, answering in input order', async () => {
    const r = await api('POST', '/api/entities/messages', {
      key: f.devices.a.apiKey,
      body: [
        { msg_type: 'publish', data: { n: 1 } },
        { msg_type: 'bogus', data: {} },
        { msg_type: 'heartbeat' },
        { msg_type: 'publish', data: { s: 'x'.repeat(6000) } },
        { msg_type: 'publish', data: { n: 2 }, dest: 'nobody' },
        { msg_type: 'state_update', data: { mode: 'eco' } },
      ],
    });
    expect(r.status).toBe(200);
    const res = r.body.results as Json[];
    expect(res.map((x) => x.code)).toEqual([200, 400, 200, 413, 404, 200]);
    expect(res[0].content).toMatch(/^[0-9a-f]{24}$/);
    expect(res[1].reason).toContain('client_cmd_resp');
    expect(res[2].content).toBe('');
    const tooMany = await api('POST', '/api/entities/messages', { key: f.devices.a.apiKey, body: Array.from({ length: 101 }, () => ({ msg_type: 'heartbeat' })) });
    expect(tooMany.status).toBe(400);
  });

  it('an entry that is not an object gets its own 400, and the batch\'s good messages are stored', async () => {
    const marker = `batch-null-${Date.now()}`;
    const r = await api('POST', '/api/entities/messages', { key: f.devices.a.apiKey, body: [{ msg_type: 'publish', data: { marker } }, null, 7, 'publish'] });
    expect(r.status).toBe(200);
    const res = r.body.results as Json[];
    expect(res.map((x) => x.code)).toEqual([200, 400, 400, 400]);
    expect(res[1].reason).toBe('A message must be a JSON object');
    const stored = await api('GET', `/api/entities/messages/${res[0].content as string}`, { key: f.apiKey });
    expect(stored.status).toBe(200);
    expect((stored.body.data as Json).marker).toBe(marker);
  });
});

describe('state table', () => {
  it('state_new replaces, state_update merges; PATCH merges and PUT replaces, answering {statusTable}', async () => {
    const f = await fleet('free', ['s1']);
    const key = f.devices.s1.apiKey;
    expect((await api('GET', '/api/entities/status-table', { key })).body).toEqual({ statusTable: {} });
    expect((await publish(key, { msg_type: 'state_new', data: { a: 1, b: { c: 2 } } })).status).toBe(200);
    expect((await publish(key, { msg_type: 'state_update', data: { b: 3, d: 'x' } })).status).toBe(200);
    expect((await api('GET', '/api/entities/status-table', { key })).body).toEqual({ statusTable: { a: 1, b: 3, d: 'x' } });
    expect((await publish(key, { msg_type: 'state_new', data: { z: true } })).status).toBe(200);
    expect((await api('GET', '/api/entities/status-table', { key })).body).toEqual({ statusTable: { z: true } });
    const patched = await api('PATCH', '/api/entities/status-table', { key, body: { y: [1, 2] } });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ statusTable: { z: true, y: [1, 2] } });
    const put = await api('PUT', '/api/entities/status-table', { key, body: { only: 1 } });
    expect(put.body).toEqual({ statusTable: { only: 1 } });
    expect((await api('GET', '/api/entities/status-table', { key })).body).toEqual({ statusTable: { only: 1 } });
    expect((await api('PATCH', '/api/entities/status-table', { key, body: { 'a.b': 1 } })).body).toEqual({ statusTable: { only: 1, 'a.b': 1 } });
  });

  it('a state table is at most 64 KB however it is built up: PATCH, PUT and state_update past it are 413 and the table keeps what it had', async () => {
    const f = await fleet('free', ['s3']);
    const key = f.devices.s3.apiKey;
    const chunk = 'x'.repeat(20 * 1024);
    for (const k of ['a', 'b', 'c']) expect((await api('PATCH', '/api/entities/status-table', { key, body: { [k]: chunk } })).status).toBe(200);
    const over = await api('PATCH', '/api/entities/status-table', { key, body: { d: chunk } });
    expect([over.status, over.body.code]).toEqual([413, 'payload_too_large']);
    expect(over.body.reason).toMatch(/state table would be \d+ bytes as JSON; the limit is 65536/);
    const viaMessage = await publish(key, { msg_type: 'state_update', data: { e: 'y'.repeat(5000) } });
    expect(viaMessage.status).toBe(413);
    const table = (await api('GET', '/api/entities/status-table', { key })).body.statusTable as Json;
    expect(Object.keys(table).sort()).toEqual(['a', 'b', 'c']);
    // Replacing it with something smaller is how a full table is emptied.
    expect((await api('PUT', '/api/entities/status-table', { key, body: { d: chunk } })).body).toEqual({ statusTable: { d: chunk } });
  });

  it('PATCH and PUT refuse a number JSON cannot keep (1e309) with 400 number_out_of_range, and the table keeps what it had', async () => {
    const f = await fleet('free', ['s2']);
    const key = f.devices.s2.apiKey;
    expect((await api('PUT', '/api/entities/status-table', { key, body: { level: 3 } })).status).toBe(200);
    for (const [method, text] of [['PATCH', '{"x": 1e309}'], ['PUT', '{"x": {"y": [1, -1e400]}}']] as const) {
      const r = await api(method, '/api/entities/status-table', { key, rawBody: text, headers: { 'content-type': 'application/json' } });
      expect([r.status, r.body.code]).toEqual([400, 'number_out_of_range']);
    }
    expect((await api('GET', '/api/entities/status-table', { key })).body).toEqual({ statusTable: { level: 3 } });
  });
});

describe('directed messages and check_messages', () => {
  it('delivers a directed publish once, with source, tags and timestamp; null when none', async () => {
    const f = await fleet('starter', ['sender', 'receiver']);
    const rk = f.devices.receiver.apiKey;
    expect((await api('GET', '/api/entities/check_messages', { key: rk })).body).toEqual({ messages: null });
    const ts = '2024-05-01T10:00:00.000Z';
    const sent = await publish(f.devices.sender.apiKey, { msg_type: 'publish', data: { cmd: 'on' }, dest: 'receiver', timestamp: ts, context: { tags: ['cmd'] } });
    expect(sent.status).toBe(200);
    const got = await api('GET', '/api/entities/check_messages', { key: rk });
    expect(got.status).toBe(200);
    expect(got.body.messages).toEqual([{ id: sent.body.content, msg_type: 'publish', data: { cmd: 'on' }, tags: ['cmd'], source: f.devices.sender.resourcePath, timestamp: ts }]);
    expect((await api('GET', '/api/entities/check_messages', { key: rk })).body).toEqual({ messages: null });
    // The sender does not receive its own directed message.
    expect((await api('GET', '/api/entities/check_messages', { key: f.devices.sender.apiKey })).body.messages).toBeNull();
  });

  it('limit defaults to 1 and returns oldest first; a command response goes to the command sender and is not listed', async () => {
    const f = await fleet('starter', ['ctl', 'dev']);
    for (let i = 0; i < 3; i++) await publish(f.devices.ctl.apiKey, { msg_type: 'publish', data: { i }, dest: 'dev' });
    const one = await api('GET', '/api/entities/check_messages', { key: f.devices.dev.apiKey });
    expect(one.body.messages.map((m: Json) => m.data.i)).toEqual([0]);
    const rest = await api('GET', '/api/entities/check_messages?limit=10', { key: f.devices.dev.apiKey });
    expect(rest.body.messages.map((m: Json) => m.data.i)).toEqual([1, 2]);
    const resp = await publish(f.devices.dev.apiKey, { msg_type: 'client_cmd_resp', data: { ok: true }, dest: f.devices.ctl.resourcePath });
    expect(resp.status).toBe(200);
    expect((await publish(f.devices.dev.apiKey, { msg_type: 'client_cmd_resp', data: { ok: true } })).status).toBe(400);
    const back = await api('GET', '/api/entities/check_messages', { key: f.devices.ctl.apiKey });
    expect(back.body.messages).toEqual([expect.objectContaining({ msg_type: 'client_cmd_resp', data: { ok: true }, source: f.devices.dev.resourcePath })]);
    const list = await api('GET', '/api/entities/messages?limit=100', { key: f.apiKey });
    expect(list.body.messages.every((m: Json) => m.msgType === 'publish')).toBe(true);
    expect(list.body.messages).toHaveLength(3);
  });

  it('20 concurrent pollers draining 1,000 messages receive exactly 1,000 distinct messages', async () => {
    const f = await fleet('starter', ['src', 'sink']);
    const sentIds: string[] = [];
    for (let b = 0; b < 10; b++) {
      const r = await api('POST', '/api/entities/messages', {
        key: f.devices.src.apiKey, body: Array.from({ length: 100 }, (_, i) => ({ msg_type: 'publish', data: { n: b * 100 + i }, dest: 'sink' })),
      });
      expect(r.status).toBe(200);
      for (const x of r.body.results as Json[]) { expect(x.code).toBe(200); sentIds.push(x.content); }
    }
    const received: string[] = [];
    await Promise.all(Array.from({ length: 20 }, async () => {
      for (;;) {
        const r = await api('GET', '/api/entities/check_messages?limit=5', { key: f.devices.sink.apiKey });
        // 20 pollers on one key run into the 50 requests/second limit; they back off and retry.
        if (r.status === 429) {
          await new Promise((res) => setTimeout(res, 200));
          continue;
        }
        expect(r.status).toBe(200);
        if (r.body.messages === null) return;
        for (const m of r.body.messages as Json[]) received.push(m.id);
      }
    }));
    expect(received).toHaveLength(1000);
    expect(new Set(received).size).toBe(1000);
    expect(new Set(received)).toEqual(new Set(sentIds));
  }, 120_000);
});

describe('validation services', () => {
  it('a failing rule still stores the publish (200) and the destination sees validation results in data', async () => {
    const f = await fleet('starter', ['probe', 'hub']);
    const svc = await api('POST', '/api/services', {
      key: f.apiKey,
      body: { name: 'thermo', rules: [
        { name: 'has-temp', schema: { type: 'object', required: ['temp'] } },
        { name: 'temp-range', schema: { type: 'object', properties: { temp: { type: 'number', minimum: -40, maximum: 100 } } } },
      ] },
    });
    expect(svc.status).toBe(201);
    const assign = await api('PATCH', '/api/entities/probe', { key: f.apiKey, body: { service: svc.body.id } });
    expect(assign.status).toBe(200);
    expect(assign.body.service).toBe(svc.body.id);

    const bad = await publish(f.devices.probe.apiKey, { msg_type: 'publish', data: { temp: 150 }, dest: 'hub' });
    expect(bad.status).toBe(200);
    const good = await publish(f.devices.probe.apiKey, { msg_type: 'publish', data: { temp: 20 }, dest: 'hub' });
    expect(good.status).toBe(200);
    const got = await api('GET', '/api/entities/check_messages?limit=10', { key: f.devices.hub.apiKey });
    const [first, second] = got.body.messages as Json[];
    expect(first.id).toBe(bad.body.content);
    expect(first.data.temp).toBe(150);
    expect(first.data.validation.result).toBe('failed');
    expect(first.data.validation.actionResults).toEqual([
      { rule: 'has-temp', passed: true, errors: [] },
      { rule: 'temp-range', passed: false, errors: [expect.stringContaining('<= 100')] },
    ]);
    expect(second.data).toEqual({ temp: 20 });
    // Stored in history either way.
    expect((await api('GET', `/api/entities/messages/${bad.body.content}`, { key: f.apiKey })).status).toBe(200);

    // Editing the rules takes effect at once (the compiled cache is keyed by version).
    expect((await api('PATCH', `/api/services/${svc.body.id}`, { key: f.apiKey, body: { rules: [{ name: 'any', schema: {} }] } })).status).toBe(200);
    await publish(f.devices.probe.apiKey, { msg_type: 'publish', data: { temp: 150 }, dest: 'hub' });
    expect((await api('GET', '/api/entities/check_messages', { key: f.devices.hub.apiKey })).body.messages[0].data).toEqual({ temp: 150 });
  });

  it('refuses an invalid JSON Schema, a duplicate name; other accounts get 404; delete unassigns', async () => {
    const f = await fleet('free', ['x']);
    const other = await fleet('free', ['y']);
    const invalid = await api('POST', '/api/services', { key: f.apiKey, body: { name: 's', rules: [{ name: 'r', schema: { type: 'not-a-type' } }] } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.reason).toMatch(/rule "r"/);
    const s = await api('POST', '/api/services', { key: f.apiKey, body: { name: 's', rules: [] } });
    expect(s.status).toBe(201);
    expect((await api('POST', '/api/services', { key: f.apiKey, body: { name: 's', rules: [] } })).status).toBe(409);
    expect((await api('GET', `/api/services/${s.body.id}`, { key: other.apiKey })).status).toBe(404);
    expect((await api('PATCH', `/api/services/${s.body.id}`, { key: other.apiKey, body: { name: 'z' } })).status).toBe(404);
    expect((await api('DELETE', `/api/services/${s.body.id}`, { key: other.apiKey })).status).toBe(404);
    expect((await api('PATCH', '/api/entities/y', { key: other.apiKey, body: { service: s.body.id } })).status).toBe(400);
    expect((await api('GET', '/api/services', { key: f.apiKey })).body.services.map((x: Json) => x.name)).toEqual(['s']);
    await api('PATCH', '/api/entities/x', { key: f.apiKey, body: { service: s.body.id } });
    expect((await api('DELETE', `/api/services/${s.body.id}`, { key: f.apiKey })).status).toBe(204);
    expect((await api('GET', '/api/entities/x', { key: f.apiKey })).body.service).toBeNull();
    expect((await api('GET', `/api/services/${s.body.id}`, { key: f.apiKey })).status).toBe(404);
  });
});
