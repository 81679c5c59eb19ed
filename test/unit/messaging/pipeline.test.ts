/**
 * THE message pipeline (src/messaging/pipeline.ts) with in-memory fakes for the store, accounts,
 * usage and validator: only the methods the pipeline calls. Covers the judging order (object,
 * depth, msg_type, schema, data presence, permission, size), each type's effects, directed
 * messages, flows, events and hostile inputs.
 */
import { encodeUserJson } from '../../../src/storage/user-json';
import { BSON } from 'mongodb';
import type { Permission } from '../../../src/accounts/roles';
import type { AccountService } from '../../../src/accounts/service';
import type { AccountDoc } from '../../../src/accounts/records';
import type { EntityDoc } from '../../../src/entities/records';
import { AppError, NotFoundError } from '../../../src/errors';
import type { Logger } from '../../../src/log';
import {
  DeviceEvent, MessagePipeline, MessageQueuedEvent, MessagingEvents, Sender, StateChangedEvent,
} from '../../../src/messaging/pipeline';
import { MESSAGE_TYPES } from '../../../src/messaging/schemas';
import type { InboxDoc, MessageDoc, MessageStore, ValidationOutcome } from '../../../src/messaging/records';
import { DataLimitExceededError, MessagingUsage } from '../../../src/messaging/usage';
import type { ServiceValidator } from '../../../src/messaging/validation';

const NOW = new Date('2026-05-04T10:20:30.000Z');
const ACC = 'acc-1';
const DEFAULT_PERMS: Permission[] = ['entity:Publish', 'entity:State', 'entity:CheckMessages', 'entity:Files'];

const account: AccountDoc = { _id: ACC, name: 'acme', plan: 'pro', region: 'local', entityCount: 3, createdAt: new Date(0) };
const entityDoc = (accountId: string, name: string, extra: Partial<EntityDoc> = {}): EntityDoc => ({
  _id: `${accountId}/${name}`, accountId, name, resourcePath: `accounts/${accountId}/entities/${name}`, apiKeyId: `key-${name}`,
  role: 'default', tags: [], metadata: {}, online: false, statusTable: {}, createdAt: new Date(0), ...extra,
});

function setup(opts: { perms?: Permission[]; serviceId?: string; validation?: ValidationOutcome; dataLimitReached?: boolean } = {}) {
  const entities = new Map<string, EntityDoc>();
  for (const e of [entityDoc(ACC, 'sensor-a', { serviceId: opts.serviceId }), entityDoc(ACC, 'sensor-b'), entityDoc('acc-2', 'victim')]) entities.set(e._id, e);
  const inserted: MessageDoc[] = [];
  const enqueued: InboxDoc[] = [];
  const heartbeats: Array<{ accountId: string; name: string; at: Date; metrics: Record<string, number> }> = [];
  const stateWrites: Array<{ mode: 'replace' | 'merge'; table: Record<string, unknown> }> = [];
  const charges: Array<{ bytes: number; telemetry: boolean }> = [];
  const validations: unknown[][] = [];

  // Documents go through BSON serialization as the driver does before sending them (client-side
  // checks included), in the shape MessageStore stores: user data as JSON text.
  const store = {
    insertMessage: async (d: MessageDoc) => { BSON.serialize({ ...d, data: encodeUserJson(d.data) }); inserted.push(d); },
    enqueue: async (d: InboxDoc) => { BSON.serialize({ ...d, message: { ...d.message, data: encodeUserJson(d.message.data) } }); enqueued.push(d); },
    replaceStatusTable: async (accountId: string, name: string, table: Record<string, unknown>) => {
      const e = entities.get(`${accountId}/${name}`);
      if (!e) return undefined;
      BSON.serialize({ $set: { statusTable: table } });
      stateWrites.push({ mode: 'replace', table });
      e.statusTable = { ...table };
      return e.statusTable;
    },
    mergeStatusTable: async (accountId: string, name: string, patch: Record<string, unknown>) => {
      const e = entities.get(`${accountId}/${name}`);
      if (!e) return undefined;
      BSON.serialize({ $set: Object.fromEntries(Object.entries(patch).map(([k, v]) => [`statusTable.${k}`, v])) });
      stateWrites.push({ mode: 'merge', table: patch });
      e.statusTable = { ...e.statusTable, ...patch };
      return e.statusTable;
    },
  };
  // Looked up the way EntityStore.findEntity does: by `${accountId}/${name}`.
  const entityService = {
    recordHeartbeat: async (accountId: string, name: string, at: Date, metrics: Record<string, number>) => { heartbeats.push({ accountId, name, at, metrics }); },
    entity: async (accountId: string, name: string) => {
      const e = entities.get(`${accountId}/${name}`);
      if (!e) throw new NotFoundError('Entity');
      return e;
    },
  };
  const usage = {
    charge: async (_a: AccountDoc, bytes: number, telemetry: boolean) => {
      if (telemetry && opts.dataLimitReached) throw new DataLimitExceededError(1000, 'free', 60);
      charges.push({ bytes, telemetry });
    },
  };
  const validator = {
    validate: async (...a: unknown[]) => {
      validations.push(a);
      return opts.validation ?? { result: 'passed', actionResults: [] };
    },
  };
  const events = new MessagingEvents();
  const queuedEvents: MessageQueuedEvent[] = [];
  const stateEvents: StateChangedEvent[] = [];
  events.on('messageQueued', (e) => queuedEvents.push(e));
  events.on('stateChanged', (e) => stateEvents.push(e));
  const logger = { error: jest.fn(), warn: jest.fn(), info: jest.fn() };
  const pipeline = new MessagePipeline({
    store: store as unknown as MessageStore,
    accounts: {} as unknown as AccountService,
    entities: entityService,
    validator: validator as unknown as ServiceValidator,
    usage: usage as unknown as MessagingUsage,
    events,
    logger: logger as unknown as Logger,
    now: () => NOW,
  });
  const flows: DeviceEvent[] = [];
  pipeline.flowTrigger = { onDeviceEvent: async (e) => { flows.push(e); } };
  const sender: Sender = { account, entity: entities.get(`${ACC}/sensor-a`) as EntityDoc, permissions: new Set(opts.perms ?? DEFAULT_PERMS) };
  const touched = () => inserted.length + enqueued.length + heartbeats.length + stateWrites.length + charges.length + flows.length;
  return { pipeline, sender, entities, inserted, enqueued, heartbeats, stateWrites, charges, validations, queuedEvents, stateEvents, flows, logger, touched };
}

/** The AppError a call is refused with (fails the test if it resolves or throws something else). */
async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

/** An object nested `depth` levels deep (depth 1 = `{}`), built without recursion. */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

const HEX_ID = /^[0-9a-f]{24}$/;

describe('refused before anything happens', () => {
  test.each([
    ['null', null],
    ['an array', [{ msg_type: 'publish', data: {} }]],
    ['a string', '{"msg_type":"publish"}'],
    ['a number', 42],
    ['a boolean', true],
    ['undefined', undefined],
  ])('%s is not a message (400)', async (_what, raw) => {
    const s = setup();
    const e = await refusal(s.pipeline.process(s.sender, raw));
    expect(e.status).toBe(400);
    expect(e.message).toBe('A message must be a JSON object');
    expect(s.touched()).toBe(0);
  });

  test('missing msg_type: 400 unsupported_msg_type listing all five types, allowedTypes in the body', async () => {
    const s = setup();
    const e = await refusal(s.pipeline.process(s.sender, { data: {} }));
    expect(e.status).toBe(400);
    expect(e.code).toBe('unsupported_msg_type');
    expect(e.message).toBe('msg_type is missing; allowed types: publish, heartbeat, state_new, state_update, client_cmd_resp');
    expect(e.extra).toEqual({ allowedTypes: [...MESSAGE_TYPES] });
  });

  test.each([
    ['upper case', 'PUBLISH'],
    ['trailing space', 'publish '],
    ['empty', ''],
    ['a number', 1],
    ['null', null],
    ['an array holding a valid type', ['publish']],
    ['an object', { toString: 'publish' }],
    ['a prototype name', '__proto__'],
    ['an Object.prototype method name', 'toString'],
    ['a look-alike (Cyrillic e)', 'h\u0435artbeat'],
    ['an internal type name', 'error'],
    ['a very long string', 'x'.repeat(100_000)],
  ])('msg_type %s → 400 unsupported_msg_type', async (_what, msgType) => {
    const s = setup();
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: msgType, data: {} }));
    expect(e.status).toBe(400);
    expect(e.code).toBe('unsupported_msg_type');
    expect(e.message).toMatch(/^Unsupported msg_type .*; allowed types: publish, heartbeat, state_new, state_update, client_cmd_resp$/);
    expect(s.touched()).toBe(0);
  });

  test.each([
    ['an array', []],
    ['a string', 'temp=21'],
    ['null', null],
    ['a number', 21.5],
  ])('data as %s → 400 naming message.data', async (_what, data) => {
    const s = setup();
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: 'publish', data }));
    expect(e.status).toBe(400);
    expect(e.code).toBe('bad_request');
    expect(e.message).toBe('Invalid message: message.data must be object');
  });

  test.each(['publish', 'state_new', 'state_update', 'client_cmd_resp'])('data is required for %s', async (type) => {
    const s = setup();
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: type, dest: 'sensor-b' }));
    expect(e.status).toBe(400);
    expect(e.message).toBe(`data is required for msg_type ${type}`);
  });

  test.each([
    ['dest as a number', { dest: 7 }, 'message.dest must be string'],
    ['timestamp as a number', { timestamp: 1700000000 }, 'message.timestamp must be string'],
    ['timestamp without a time zone', { timestamp: '2026-05-04T10:20:30' }, 'message.timestamp must match format "date-time"'],
    ['timestamp as a date only', { timestamp: '2026-05-04' }, 'message.timestamp must match format "date-time"'],
    ['an impossible date', { timestamp: '2026-02-30T00:00:00Z' }, 'message.timestamp must match format "date-time"'],
    ['free text timestamp', { timestamp: 'yesterday' }, 'message.timestamp must match format "date-time"'],
    ['context as an array', { context: [] }, 'message.context must be object'],
    ['tags as a string', { context: { tags: 'a,b' } }, 'message.context.tags must be array'],
    ['11 tags', { context: { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) } }, 'message.context.tags must NOT have more than 10 items'],
    ['an empty tag', { context: { tags: [''] } }, 'message.context.tags.0 must NOT have fewer than 1 characters'],
    ['a 129-character tag', { context: { tags: ['x'.repeat(129)] } }, 'message.context.tags.0 must NOT have more than 128 characters'],
    ['a non-string tag', { context: { tags: ['ok', 5] } }, 'message.context.tags.1 must be string'],
  ])('%s → 400', async (_what, extra, message) => {
    const s = setup();
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: 'publish', data: {}, ...extra }));
    expect(e.status).toBe(400);
    expect(e.message).toBe(`Invalid message: ${message}`);
    expect(s.touched()).toBe(0);
  });

  test('nesting: depth 20 (message included) is accepted, 21 is json_too_deep', async () => {
    const s = setup();
    // The message object is level 1, data level 2.
    await expect(s.pipeline.process(s.sender, { msg_type: 'publish', data: nested(19) })).resolves.toMatchObject({ code: 200 });
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: 'publish', data: nested(20) }));
    expect(e.status).toBe(400);
    expect(e.code).toBe('json_too_deep');
    expect(e.message).toBe('JSON nesting exceeds 20 levels');
  });

  test('arrays count as nesting levels too', async () => {
    const s = setup();
    let v: unknown = 1;
    for (let i = 0; i < 25; i++) v = [v];
    expect((await refusal(s.pipeline.process(s.sender, { msg_type: 'publish', data: { v } }))).code).toBe('json_too_deep');
  });

  test('a number JSON cannot keep (1e309 parses as Infinity) is refused with its path, and nothing is stored', async () => {
    const s = setup();
    for (const [text, path] of [['{"msg_type": "publish", "data": {"t": 1e309}}', 'data.t'], ['{"msg_type": "state_update", "data": {"a": [1, -1e400]}}', 'data.a[1]']]) {
      const e = await refusal(s.pipeline.process(s.sender, JSON.parse(text)));
      expect([e.status, e.code, e.extra]).toEqual([400, 'number_out_of_range', { path }]);
    }
    expect(await s.pipeline.process(s.sender, JSON.parse('{"msg_type": "publish", "data": {"t": 1e308}}'))).toMatchObject({ code: 200 });
  });

  test('extremely deep input (200,000 levels) is refused without a stack overflow, before msg_type is looked at', async () => {
    const s = setup();
    const raw = JSON.parse(`${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`) as unknown;
    const e = await refusal(s.pipeline.process(s.sender, raw));
    expect(e.code).toBe('json_too_deep');
  });

  test('permission: publish, heartbeat and command responses need entity:Publish', async () => {
    const s = setup({ perms: ['entity:State', 'entity:CheckMessages'] });
    for (const m of [{ msg_type: 'publish', data: {} }, { msg_type: 'heartbeat' }, { msg_type: 'client_cmd_resp', dest: 'sensor-b', data: {} }]) {
      const e = await refusal(s.pipeline.process(s.sender, m));
      expect(e.status).toBe(403);
      expect(e.code).toBe('permission_denied');
      expect(e.message).toBe("The key's role lacks the permission entity:Publish");
    }
    expect(s.touched()).toBe(0);
  });

  test('permission: state messages need entity:State', async () => {
    const s = setup({ perms: ['entity:Publish'] });
    for (const t of ['state_new', 'state_update']) {
      const e = await refusal(s.pipeline.process(s.sender, { msg_type: t, data: { a: 1 } }));
      expect(e.status).toBe(403);
      expect(e.message).toBe("The key's role lacks the permission entity:State");
    }
    expect(s.touched()).toBe(0);
  });

  test('a malformed message is a 400 even for a key without permissions (format is judged first)', async () => {
    const s = setup({ perms: [] });
    expect((await refusal(s.pipeline.process(s.sender, { msg_type: 'nope' }))).status).toBe(400);
    expect((await refusal(s.pipeline.process(s.sender, { msg_type: 'publish', data: [] }))).status).toBe(400);
  });
});

describe('data size (5 KB = 5,120 bytes of serialized UTF-8 JSON)', () => {
  /** `{"p":"xxx…"}` of exactly `bytes` bytes. */
  const dataOf = (bytes: number) => ({ p: 'x'.repeat(bytes - 8) });

  test('5,120 bytes is accepted and charged as 5,120', async () => {
    const s = setup();
    expect(Buffer.byteLength(JSON.stringify(dataOf(5120)))).toBe(5120);
    await s.pipeline.process(s.sender, { msg_type: 'publish', data: dataOf(5120) });
    expect(s.charges).toEqual([{ bytes: 5120, telemetry: true }]);
    expect(s.inserted[0].bytes).toBe(5120);
  });

  test('5,121 bytes → 413 payload_too_large, nothing charged or stored', async () => {
    const s = setup();
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: 'publish', data: dataOf(5121) }));
    expect(e.status).toBe(413);
    expect(e.code).toBe('payload_too_large');
    expect(e.message).toBe('Message data is 5121 bytes; the limit is 5120 bytes (5 KB)');
    expect(s.touched()).toBe(0);
  });

  test('bytes, not characters: 1,800 "€" (3 bytes each) is over the limit', async () => {
    const s = setup();
    const data = { p: '€'.repeat(1800) };
    expect(JSON.stringify(data).length).toBeLessThan(5120);
    expect((await refusal(s.pipeline.process(s.sender, { msg_type: 'publish', data }))).status).toBe(413);
  });

  test('astral characters count 4 bytes; escaped control characters count as their escapes', async () => {
    const s = setup();
    await s.pipeline.process(s.sender, { msg_type: 'publish', data: { e: '😀', c: '\u0001' } });
    // {"e":"😀","c":"\u0001"}: 15 bytes of keys and punctuation + 4 (emoji) + 6 (the escape \u0001) = 25.
    expect(s.charges[0].bytes).toBe(Buffer.byteLength('{"e":"😀","c":"\\u0001"}'));
    expect(s.charges[0].bytes).toBe(25);
  });

  test('the limit applies to every type, heartbeats and state messages included', async () => {
    const s = setup();
    for (const t of ['heartbeat', 'state_new', 'state_update']) {
      expect((await refusal(s.pipeline.process(s.sender, { msg_type: t, data: dataOf(6000) }))).status).toBe(413);
    }
  });

  test('the envelope (tags, dest, timestamp) does not count, only data', async () => {
    const s = setup();
    await s.pipeline.process(s.sender, { msg_type: 'publish', data: { a: 1 }, context: { tags: ['x'.repeat(128)] }, timestamp: '2026-01-01T00:00:00Z' });
    expect(s.charges[0].bytes).toBe(7);
  });
});

describe('publish', () => {
  test('stored with its fields; answer {code: 200, content: id}; flow triggered with validation skipped (no service)', async () => {
    const s = setup();
    const r = await s.pipeline.process(s.sender, { msg_type: 'publish', data: { temp: 21.5 }, context: { tags: ['telemetry', 'ünï'] } });
    expect(r.code).toBe(200);
    expect(r.content).toMatch(HEX_ID);
    expect(s.inserted).toEqual([{
      _id: r.content, accountId: ACC, msgType: 'publish', source: `accounts/${ACC}/entities/sensor-a`, sourceName: 'sensor-a',
      destination: null, data: { temp: 21.5 }, tags: ['telemetry', 'ünï'], timestamp: NOW, receivedAt: NOW, validation: { result: 'skipped' }, bytes: 13,
    }]);
    expect(s.enqueued).toEqual([]);
    expect(s.validations).toEqual([]);
    expect(s.flows).toEqual([{
      id: r.content, msgType: 'publish', accountId: ACC, entityName: 'sensor-a', source: `accounts/${ACC}/entities/sensor-a`,
      destination: null, data: { temp: 21.5 }, tags: ['telemetry', 'ünï'], timestamp: NOW, validation: 'skipped',
    }]);
  });

  test('ids are unique per message', async () => {
    const s = setup();
    const ids = new Set<string>();
    for (let i = 0; i < 50; i++) ids.add((await s.pipeline.process(s.sender, { msg_type: 'publish', data: {} })).content);
    expect(ids.size).toBe(50);
  });

  test('the sender\'s timestamp is kept (offsets normalised to the same instant); default is server time', async () => {
    const s = setup();
    await s.pipeline.process(s.sender, { msg_type: 'publish', data: {}, timestamp: '2026-01-02T03:04:05.678+02:00' });
    await s.pipeline.process(s.sender, { msg_type: 'publish', data: {} });
    expect(s.inserted[0].timestamp.toISOString()).toBe('2026-01-02T01:04:05.678Z');
    expect(s.inserted[1].timestamp).toEqual(NOW);
  });

  test('no tags → []; exactly 10 tags of 128 characters (including astral characters) are accepted', async () => {
    const s = setup();
    await s.pipeline.process(s.sender, { msg_type: 'publish', data: {} });
    const tags = Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(128, '😀'));
    await s.pipeline.process(s.sender, { msg_type: 'publish', data: {}, context: { tags } });
    expect(s.inserted[0].tags).toEqual([]);
    expect(s.inserted[1].tags).toEqual(tags);
  });

  test('injection-looking content is data, stored verbatim', async () => {
    const s = setup();
    const data = JSON.parse('{"$where":"sleep(1000)","a.b":{"$gt":""},"__proto__":{"polluted":true},"html":"<script>alert(1)</script>","nul":"a\\u0000b"}') as Record<string, unknown>;
    await s.pipeline.process(s.sender, { msg_type: 'publish', data, context: { tags: ['{"$ne":null}', "'; DROP TABLE messages; --"] } });
    expect(s.inserted[0].data).toBe(data);
    expect(s.inserted[0].tags).toEqual(['{"$ne":null}', "'; DROP TABLE messages; --"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('over the monthly data limit: 429 data_limit_exceeded, nothing stored, no flow', async () => {
    const s = setup({ dataLimitReached: true });
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: 'publish', data: { a: 1 } }));
    expect(e.status).toBe(429);
    expect(e.code).toBe('data_limit_exceeded');
    expect(s.inserted).toEqual([]);
    expect(s.flows).toEqual([]);
  });

  test('with a service: validated; passed → flow with validation passed', async () => {
    const s = setup({ serviceId: 'svc-1', validation: { result: 'passed', actionResults: [{ rule: 'r', passed: true, errors: [] }] } });
    await s.pipeline.process(s.sender, { msg_type: 'publish', data: { t: 1 } });
    expect(s.validations).toEqual([[ACC, 'svc-1', { t: 1 }]]);
    expect(s.inserted[0].validation.result).toBe('passed');
    expect(s.flows.map((f) => f.validation)).toEqual(['passed']);
  });

  test('failed validation: still stored (200) with the outcome, but no flow', async () => {
    const validation: ValidationOutcome = { result: 'failed', actionResults: [{ rule: 'r', passed: false, errors: ['data.t must be <= 0'] }] };
    const s = setup({ serviceId: 'svc-1', validation });
    const r = await s.pipeline.process(s.sender, { msg_type: 'publish', data: { t: 1 } });
    expect(r.code).toBe(200);
    expect(s.inserted[0].validation).toEqual(validation);
    expect(s.flows).toEqual([]);
  });

  test('a failing flow trigger is logged and does not fail the message', async () => {
    const s = setup();
    s.pipeline.flowTrigger = { onDeviceEvent: async () => { throw new Error('temporal down'); } };
    const r = await s.pipeline.process(s.sender, { msg_type: 'publish', data: {} });
    expect(r.code).toBe(200);
    await new Promise((res) => setImmediate(res));
    expect(s.logger.error).toHaveBeenCalledWith(expect.objectContaining({ messageId: r.content }), 'flow trigger failed');
  });

  test('no flow trigger set: nothing runs and nothing breaks', async () => {
    const s = setup();
    s.pipeline.flowTrigger = undefined;
    await expect(s.pipeline.process(s.sender, { msg_type: 'publish', data: {} })).resolves.toMatchObject({ code: 200 });
  });
});

describe('directed publish (dest)', () => {
  test('by name: stored with destination, queued for it in the delivered shape, messageQueued emitted', async () => {
    const s = setup();
    const r = await s.pipeline.process(s.sender, { msg_type: 'publish', dest: 'sensor-b', data: { cmd: 'blink' }, context: { tags: ['cmd'] } });
    expect(s.inserted[0].destination).toBe('sensor-b');
    const delivered = { id: r.content, msg_type: 'publish', data: { cmd: 'blink' }, tags: ['cmd'], source: `accounts/${ACC}/entities/sensor-a`, timestamp: NOW.toISOString() };
    expect(s.enqueued).toEqual([{ _id: r.content, accountId: ACC, dest: 'sensor-b', queuedAt: NOW, message: delivered }]);
    expect(s.queuedEvents).toEqual([{ accountId: ACC, destName: 'sensor-b', messageId: r.content, message: delivered }]);
    expect(s.flows[0].destination).toBe('sensor-b');
  });

  test('by resource path in the sender\'s own account', async () => {
    const s = setup();
    await s.pipeline.process(s.sender, { msg_type: 'publish', dest: `accounts/${ACC}/entities/sensor-b`, data: {} });
    expect(s.enqueued[0].dest).toBe('sensor-b');
  });

  test('to itself is allowed', async () => {
    const s = setup();
    await s.pipeline.process(s.sender, { msg_type: 'publish', dest: 'sensor-a', data: {} });
    expect(s.enqueued[0].dest).toBe('sensor-a');
  });

  test.each([
    ['an unknown name', 'ghost'],
    ['another account\'s resource path', 'accounts/acc-2/entities/victim'],
    ['a traversal into another account', '../acc-2/victim'],
    ['a resource path with traversal', `accounts/${ACC}/entities/../../acc-2/entities/victim`],
    ['an account-id prefix trick', `accounts/${ACC}-2/entities/sensor-b`],
    ['the bare resource path prefix', `accounts/${ACC}/entities/`],
    ['an empty string', ''],
    ['a name with different case', 'SENSOR-B'],
    ['a name with a trailing NUL', 'sensor-b\u0000'],
    ['a Mongo operator-looking string', '{"$ne":null}'],
  ])('%s → 404 naming the destination; nothing charged, stored or queued', async (_what, dest) => {
    const s = setup();
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: 'publish', dest, data: {} }));
    expect(e.status).toBe(404);
    expect(e.message).toBe(`Destination entity "${dest}" not found`);
    expect(s.touched()).toBe(0);
    expect(s.queuedEvents).toEqual([]);
  });

  test('failed validation: the delivered copy carries data.validation = {result: failed, actionResults}; history keeps data untouched', async () => {
    const actionResults = [{ rule: 'r', passed: false, errors: ['data.t must be <= 0'] }];
    const s = setup({ serviceId: 'svc-1', validation: { result: 'failed', actionResults } });
    await s.pipeline.process(s.sender, { msg_type: 'publish', dest: 'sensor-b', data: { t: 1 } });
    expect(s.enqueued[0].message.data).toEqual({ t: 1, validation: { result: 'failed', actionResults } });
    expect(s.inserted[0].data).toEqual({ t: 1 });
  });

  test('failed validation overrides a sender-supplied data.validation in the delivered copy', async () => {
    const actionResults = [{ rule: 'r', passed: false, errors: ['x'] }];
    const s = setup({ serviceId: 'svc-1', validation: { result: 'failed', actionResults } });
    await s.pipeline.process(s.sender, { msg_type: 'publish', dest: 'sensor-b', data: { validation: { result: 'passed' } } });
    expect(s.enqueued[0].message.data).toEqual({ validation: { result: 'failed', actionResults } });
  });

  test('passed validation: the delivered data is the sender\'s data, unchanged', async () => {
    const s = setup({ serviceId: 'svc-1', validation: { result: 'passed', actionResults: [] } });
    await s.pipeline.process(s.sender, { msg_type: 'publish', dest: 'sensor-b', data: { t: 1 } });
    expect(s.enqueued[0].message.data).toEqual({ t: 1 });
  });
});

describe('heartbeat', () => {
  test('keeps only the four numeric metrics; other data is ignored; empty content; charged as non-telemetry', async () => {
    const s = setup();
    const r = await s.pipeline.process(s.sender, { msg_type: 'heartbeat', data: { mem_free: 10, mem_total: 20, disk_free: 0, disk_size: 1e12, cpu: 99, mem_freee: 1 } });
    expect(r).toEqual({ code: 200, content: '' });
    expect(s.heartbeats).toEqual([{ accountId: ACC, name: 'sensor-a', at: NOW, metrics: { mem_free: 10, mem_total: 20, disk_free: 0, disk_size: 1e12 } }]);
    expect(s.charges).toEqual([{ bytes: expect.any(Number), telemetry: false }]);
    expect(s.inserted).toEqual([]);
    expect(s.flows).toEqual([]);
  });

  test('without data, or with none of the metrics, is accepted with no metrics', async () => {
    const s = setup();
    await s.pipeline.process(s.sender, { msg_type: 'heartbeat' });
    await s.pipeline.process(s.sender, { msg_type: 'heartbeat', data: { uptime: 5 } });
    expect(s.heartbeats.map((h) => h.metrics)).toEqual([{}, {}]);
    expect(s.charges[0].bytes).toBe(2);
  });

  test.each([
    ['a string', '100'],
    ['null', null],
    ['a boolean', true],
    ['an object', { v: 1 }],
    ['an array', [1]],
    ['Infinity (JSON.parse of 1e999)', JSON.parse('1e999') as number],
    ['-Infinity', -Infinity],
    ['NaN', NaN],
  ])('a metric that is %s → 400 naming it, nothing recorded', async (_what, v) => {
    const s = setup();
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: 'heartbeat', data: { mem_total: 1, disk_free: v } }));
    expect(e.status).toBe(400);
    // Non-finite numbers are refused for every message type before the heartbeat's own check.
    expect(e.message).toMatch(typeof v === 'number' ? /^data\.disk_free must be a finite number/ : /^heartbeat data\.disk_free must be a number$/);
    expect(s.heartbeats).toEqual([]);
    expect(s.charges).toEqual([]);
  });

  test('accepted even when the monthly data limit is reached', async () => {
    const s = setup({ dataLimitReached: true });
    await expect(s.pipeline.process(s.sender, { msg_type: 'heartbeat', data: { mem_free: 1 } })).resolves.toEqual({ code: 200, content: '' });
  });
});

describe('state_new / state_update', () => {
  test('state_new replaces, state_update merges; stateChanged carries the whole table; flows get the message data', async () => {
    const s = setup();
    s.entities.get(`${ACC}/sensor-a`)!.statusTable = { old: 1 };
    const r1 = await s.pipeline.process(s.sender, { msg_type: 'state_new', data: { mode: 'eco', level: 3 } });
    const r2 = await s.pipeline.process(s.sender, { msg_type: 'state_update', data: { level: null, fan: true }, context: { tags: ['st'] } });
    expect(r1.content).toMatch(HEX_ID);
    expect(r2.content).toMatch(HEX_ID);
    expect(s.stateWrites.map((w) => w.mode)).toEqual(['replace', 'merge']);
    expect(s.stateEvents).toEqual([
      { accountId: ACC, entityName: 'sensor-a', apiKeyId: 'key-sensor-a', statusTable: { mode: 'eco', level: 3 } },
      { accountId: ACC, entityName: 'sensor-a', apiKeyId: 'key-sensor-a', statusTable: { mode: 'eco', level: null, fan: true } },
    ]);
    expect(s.flows.map((f) => [f.id, f.msgType, f.data, f.tags, f.validation, f.destination])).toEqual([
      [r1.content, 'state_new', { mode: 'eco', level: 3 }, [], 'skipped', null],
      [r2.content, 'state_update', { level: null, fan: true }, ['st'], 'skipped', null],
    ]);
    expect(s.inserted).toEqual([]);
    expect(s.charges.every((c) => !c.telemetry)).toBe(true);
  });

  test('an empty object is a valid state_new (clears the table)', async () => {
    const s = setup();
    s.entities.get(`${ACC}/sensor-a`)!.statusTable = { a: 1 };
    await s.pipeline.process(s.sender, { msg_type: 'state_new', data: {} });
    expect(s.stateEvents[0].statusTable).toEqual({});
  });

  test('any key reaches the store as sent: dots, $, empty, spaces (they are stored as JSON text)', async () => {
    const s = setup();
    const data = JSON.parse('{"a.b":1,"$set":{"x":1},"":2,".":3," padded ":[[1,2]]}') as Record<string, unknown>;
    for (const t of ['state_new', 'state_update']) await s.pipeline.process(s.sender, { msg_type: t, data });
    expect(s.stateWrites).toEqual([{ mode: 'replace', table: data }, { mode: 'merge', table: data }]);
    expect(JSON.stringify(s.stateEvents[1].statusTable)).toBe(JSON.stringify(data));
  });

  test('the entity vanished between authentication and the write → 404, no event', async () => {
    const s = setup();
    s.entities.delete(`${ACC}/sensor-a`);
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: 'state_update', data: { a: 1 } }));
    expect(e.status).toBe(404);
    expect(s.stateEvents).toEqual([]);
    expect(s.flows).toEqual([]);
  });

  test('accepted even when the monthly data limit is reached', async () => {
    const s = setup({ dataLimitReached: true });
    await expect(s.pipeline.process(s.sender, { msg_type: 'state_update', data: { a: 1 } })).resolves.toMatchObject({ code: 200 });
  });
});

describe('client_cmd_resp', () => {
  test('needs dest', async () => {
    const s = setup();
    const e = await refusal(s.pipeline.process(s.sender, { msg_type: 'client_cmd_resp', data: { ok: true } }));
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/^client_cmd_resp needs dest/);
    expect(s.touched()).toBe(0);
  });

  test('stored as client_cmd_resp (skipped validation even with a service), queued for the command\'s sender, no flow', async () => {
    const s = setup({ serviceId: 'svc-1', dataLimitReached: true });
    const r = await s.pipeline.process(s.sender, { msg_type: 'client_cmd_resp', dest: `accounts/${ACC}/entities/sensor-b`, data: { ok: true } });
    expect(s.inserted[0]).toMatchObject({ _id: r.content, msgType: 'client_cmd_resp', destination: 'sensor-b', validation: { result: 'skipped' } });
    expect(s.enqueued[0].message).toMatchObject({ id: r.content, msg_type: 'client_cmd_resp', data: { ok: true } });
    expect(s.validations).toEqual([]);
    expect(s.flows).toEqual([]);
    expect(s.charges).toEqual([{ bytes: 11, telemetry: false }]);
  });

  test('to another account\'s entity → 404', async () => {
    const s = setup();
    expect((await refusal(s.pipeline.process(s.sender, { msg_type: 'client_cmd_resp', dest: 'accounts/acc-2/entities/victim', data: {} }))).status).toBe(404);
    expect(s.enqueued).toEqual([]);
  });
});

describe('processBatch', () => {
  test('each judged on its own, results positional, errorCode carried', async () => {
    const s = setup({ perms: ['entity:Publish'] });
    const results = await s.pipeline.processBatch(s.sender, [
      { msg_type: 'publish', data: { i: 0 } },
      { msg_type: 'bogus' },
      { msg_type: 'heartbeat' },
      { msg_type: 'state_update', data: { a: 1 } },
      'not an object',
      { msg_type: 'publish', data: { p: 'x'.repeat(6000) } },
      { msg_type: 'publish', dest: 'ghost', data: {} },
    ]);
    expect(results[0]).toEqual({ code: 200, content: expect.stringMatching(HEX_ID) });
    expect(results[1]).toMatchObject({ code: 400, errorCode: 'unsupported_msg_type' });
    expect(results[2]).toEqual({ code: 200, content: '' });
    expect(results[3]).toMatchObject({ code: 403, errorCode: 'permission_denied' });
    expect(results[4]).toMatchObject({ code: 400, reason: 'A message must be a JSON object' });
    expect(results[5]).toMatchObject({ code: 413, errorCode: 'payload_too_large' });
    expect(results[6]).toMatchObject({ code: 404, reason: 'Destination entity "ghost" not found' });
    expect(s.inserted).toHaveLength(1);
  });

  test('an unexpected error becomes a generic 500 entry (logged), the others still succeed', async () => {
    const s = setup();
    const original = s.pipeline.process.bind(s.pipeline);
    jest.spyOn(s.pipeline, 'process').mockImplementation(async (sender, raw) => {
      if ((raw as { boom?: boolean }).boom) throw new TypeError('secret internals');
      return original(sender, raw);
    });
    const results = await s.pipeline.processBatch(s.sender, [{ msg_type: 'heartbeat' }, { boom: true }, { msg_type: 'heartbeat' }]);
    expect(results).toEqual([{ code: 200, content: '' }, { code: 500, reason: 'Internal server error' }, { code: 200, content: '' }]);
    expect(s.logger.error).toHaveBeenCalledTimes(1);
  });

  test('an empty batch gives an empty result', async () => {
    expect(await setup().pipeline.processBatch(setup().sender, [])).toEqual([]);
  });
});

describe('input the database or Date cannot represent', () => {
  // ajv-formats' date-time accepts a leap second and an hour-only offset, which `new Date()` makes
  // Invalid Date (stored as 1970, or a RangeError and a 500 for a directed publish). The shared
  // date-time format (src/http/schema.ts) refuses them.
  it.each(['2016-12-31T23:59:60Z', '2026-01-01T10:00:00+01'])('timestamp %s is refused with 400 and nothing is stored', async (timestamp) => {
    const s = setup();
    for (const raw of [{ msg_type: 'publish', data: {}, timestamp }, { msg_type: 'publish', dest: 'sensor-b', data: {}, timestamp }]) {
      await expect(s.pipeline.process(s.sender, raw)).rejects.toMatchObject({ status: 400 });
    }
    expect(s.inserted).toHaveLength(0);
  });

  // BSON cannot encode a NUL character in a key; data is stored as JSON text, so it is kept.
  it('a NUL in a key of publish data reaches the store as sent', async () => {
    const s = setup();
    const r = await s.pipeline.process(s.sender, { msg_type: 'publish', data: { 'a\u0000b': 1, cfg: { 'k\u0000': 1 } } });
    expect(r.code).toBe(200);
    expect(s.inserted[0].data).toEqual({ 'a\u0000b': 1, cfg: { 'k\u0000': 1 } });
  });
});
