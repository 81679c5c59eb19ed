/** Exports of message history and the audit log, and the message list, from outside. */
import { parse } from 'csv-parse/sync';
import { api, Json, newAccount } from '../../support/env';
import { fleet, publish } from './helpers';

/** CSV cells back to the JSON export's values (objects/arrays are JSON text, null is empty). */
function fromCsv(text: string, jsonColumns: string[], nullable: string[]): Json[] {
  const rows = parse(text, { columns: true }) as Record<string, string>[];
  return rows.map((r) => {
    const o: Json = { ...r };
    for (const c of jsonColumns) o[c] = JSON.parse(r[c]);
    for (const c of nullable) if (r[c] === '') o[c] = null;
    return o;
  });
}

describe('message history', () => {
  let f: Awaited<ReturnType<typeof fleet>>;
  const ids: string[] = [];
  beforeAll(async () => {
    f = await fleet('starter', ['p1', 'p2']);
    for (let i = 0; i < 12; i++) {
      const dev = i % 2 ? 'p2' : 'p1';
      const r = await publish(f.devices[dev].apiKey, {
        msg_type: 'publish', data: { i, note: i === 3 ? 'comma, "quote"\nnewline' : 'plain' }, context: { tags: [i % 3 === 0 ? 'alarm' : 'routine'] },
        timestamp: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(), ...(i === 5 ? { dest: 'p1' } : {}),
      });
      expect(r.status).toBe(200);
      ids.push(r.body.content);
    }
    await publish(f.devices.p1.apiKey, { msg_type: 'state_update', data: { s: 1 } });
    await publish(f.devices.p1.apiKey, { msg_type: 'heartbeat' });
  });

  it('lists publish messages only, newest first, with offset next_cursor; the default role gets 403', async () => {
    const page1 = await api('GET', '/api/entities/messages', { key: f.apiKey });
    expect(page1.status).toBe(200);
    expect(page1.body.messages).toHaveLength(10);
    expect(page1.body.next_cursor).toBe(10);
    expect(page1.body.messages[0]).toEqual({
      id: ids[11], source: f.devices.p2.resourcePath, destination: null, msgType: 'publish', data: { i: 11, note: 'plain' }, tags: ['routine'], timestamp: '2025-01-01T00:11:00.000Z',
    });
    const page2 = await api('GET', '/api/entities/messages?offset=10', { key: f.apiKey });
    expect(page2.body.messages.map((m: Json) => m.id)).toEqual([ids[1], ids[0]]);
    expect(page2.body.next_cursor).toBeNull();
    const byP1 = await api('GET', '/api/entities/messages?entity_name=p1&limit=100', { key: f.apiKey });
    expect(byP1.body.messages.map((m: Json) => m.data.i)).toEqual([10, 8, 6, 4, 2, 0]);
    expect(byP1.body.messages.find((m: Json) => m.data.i === 4).destination).toBeNull();
    expect((await api('GET', '/api/entities/messages?entity_name=p2&limit=100', { key: f.apiKey })).body.messages.find((m: Json) => m.data.i === 5).destination).toBe('p1');

    const denied = await api('GET', '/api/entities/messages', { key: f.devices.p1.apiKey });
    expect(denied.status).toBe(403);
    expect(typeof denied.body.reason).toBe('string');
    expect((await api('GET', `/api/entities/messages/${ids[0]}`, { key: f.devices.p1.apiKey })).status).toBe(403);
    expect((await api('POST', '/api/entities/messages/search', { key: f.devices.p1.apiKey, body: {} })).status).toBe(403);
  });

  it('gets one message; unknown and foreign ids are 404', async () => {
    const one = await api('GET', `/api/entities/messages/${ids[3]}`, { key: f.apiKey });
    expect(one.body).toMatchObject({ id: ids[3], data: { i: 3 }, tags: ['alarm'] });
    const other = await newAccount('starter');
    expect((await api('GET', `/api/entities/messages/${ids[3]}`, { key: other.apiKey })).status).toBe(404);
    expect((await api('GET', '/api/entities/messages/000000000000000000000000', { key: f.apiKey })).status).toBe(404);
  });

  it('searches by sender, tags (any of) and [from, to)', async () => {
    const r = await api('POST', '/api/entities/messages/search', {
      key: f.apiKey, body: { tags: ['alarm'], from: '2025-01-01T00:03:00Z', to: '2025-01-01T00:09:00Z' },
    });
    expect(r.status).toBe(200);
    expect(r.body.messages.map((m: Json) => m.data.i)).toEqual([6, 3]);
    const paged = await api('POST', '/api/entities/messages/search', { key: f.apiKey, body: { entity_name: 'p2', limit: 2, offset: 2 } });
    expect(paged.body.messages.map((m: Json) => m.data.i)).toEqual([7, 5]);
    expect(paged.body.next_cursor).toBe(4);
    expect((await api('POST', '/api/entities/messages/search', { key: f.apiKey, body: { from: 'not a date' } })).status).toBe(400);
  });

  it('exports the whole account as CSV and as JSON: attachments that parse back to the same rows, newest first', async () => {
    const csv = await api('GET', '/api/messages/export', { key: f.apiKey });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="messages-.*\.csv"$/);
    expect(csv.text.split('\n')[0]).toBe('id,source,destination,msgType,data,tags,timestamp');
    const json = await api('GET', '/api/messages/export?format=json', { key: f.apiKey });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.headers.get('content-disposition')).toMatch(/^attachment; filename="messages-.*\.json"$/);
    expect(json.body).toHaveLength(12);
    expect(json.body.map((m: Json) => m.id)).toEqual([...ids].reverse());
    expect(fromCsv(csv.text, ['data', 'tags'], ['destination'])).toEqual(json.body);
    const listed = await api('GET', '/api/entities/messages?limit=100', { key: f.apiKey });
    expect(json.body).toEqual(listed.body.messages);
    const ranged = await api('GET', '/api/messages/export?format=json&from=2025-01-01T00:10:00Z', { key: f.apiKey });
    expect(ranged.body.map((m: Json) => m.data.i)).toEqual([11, 10]);
    const empty = await newAccount('free');
    const none = await api('GET', '/api/messages/export', { key: empty.apiKey });
    expect(none.text).toBe('id,source,destination,msgType,data,tags,timestamp\n');
    expect((await api('GET', '/api/messages/export?format=json', { key: empty.apiKey })).body).toEqual([]);
    expect((await api('GET', '/api/messages/export', { key: f.devices.p1.apiKey })).status).toBe(403);
  });
});

describe('audit-log export', () => {
  it('is refused below Standard with 403 plan_required, feature audit_log', async () => {
    const acct = await newAccount('starter');
    const r = await api('GET', '/api/audit-log/export', { key: acct.apiKey });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'plan_required', feature: 'audit_log', current_plan: 'starter', upgrade: true, reason: expect.any(String) });
  });

  it('exports CSV and JSON with filters, newest first, and records its own export entry', async () => {
    const f = await fleet('standard', ['a1']);
    await api('POST', '/api/entities/a1/keys/rotate', { key: f.apiKey });
    await api('POST', '/api/services', { key: f.apiKey, body: { name: 'svc', rules: [] } });
    const json = await api('GET', '/api/audit-log/export?format=json&resourceType=entity', { key: f.apiKey });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-log-.*\.json"$/);
    expect(json.body.map((e: Json) => e.action)).toEqual(['rotate_key', 'bulk_create']);
    expect(Object.keys(json.body[0])).toEqual(['id', 'action', 'resourceType', 'resourceId', 'resourceName', 'userEmail', 'timestamp', 'details']);
    const csv = await api('GET', '/api/audit-log/export?resourceType=entity', { key: f.apiKey });
    expect(csv.text.split('\n')[0]).toBe('id,action,resourceType,resourceId,resourceName,userEmail,timestamp,details');
    expect(fromCsv(csv.text, ['details'], [])).toEqual(json.body);
    const exports = await api('GET', '/api/audit-log/export?format=json&action=export', { key: f.apiKey });
    // Two earlier exports plus this one, which is recorded before streaming.
    expect(exports.body).toHaveLength(3);
    expect(exports.body[0]).toMatchObject({ action: 'export', resourceType: 'audit_log', userEmail: `api_key:${/^sk_([0-9a-f]{16})\./.exec(f.apiKey)?.[1]}` });
    expect(exports.body[1].details).toMatchObject({ format: 'csv', resourceType: 'entity' });
  });
});
