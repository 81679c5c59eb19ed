/**
 * DeviceGateway (src/mqtt/gateway.ts) with fakes: what a device publish goes through before the
 * pipeline (rate limit, 64 KB cap, JSON decoding, superseded key), the error reply it gets on its
 * messages topic, and claim-then-send delivery.
 */
import { AppError, BadRequestError } from '../../../src/errors';
import type { Logger } from '../../../src/log';
import type { DeviceIdentity } from '../../../src/mqtt/acl';
import { FIXED_LIMITS } from '../../../src/accounts/plans';
import { DeviceGateway } from '../../../src/mqtt/gateway';
import type { Services } from '../../../src/services';
import { DataLimitExceededError } from '../../../src/messaging/usage';
import { enableMetrics, registry } from '../../../src/telemetry/metrics';

const MAX_PAYLOAD_BYTES = FIXED_LIMITS.messageBodyBytes;

const device: DeviceIdentity = { accountId: 'acc1', region: 'local', apiKeyId: 'key1', entityName: 'sensor-1' };
const messagesTopic = 'acc1/local/key1/messages';

function setup(opts: { allowed?: boolean; retryAfter?: number; currentKey?: string; process?: (raw: unknown) => Promise<unknown> } = {}) {
  let clock = new Date('2026-03-01T12:00:00.000Z');
  const sent: Array<{ topic: string; payload: string; opts: { qos: number; retain: boolean } }> = [];
  const processed: unknown[] = [];
  const hits: unknown[][] = [];
  const loads: string[] = [];
  let failSend = false;
  const logger = { error: jest.fn(), warn: jest.fn(), info: jest.fn() };
  const services = {
    limits: {
      hit: async (...a: unknown[]) => {
        hits.push(a);
        return { allowed: opts.allowed ?? true, retryAfterSeconds: opts.retryAfter ?? 0, counts: {} };
      },
    },
    messagePipeline: {
      loadSender: async (_a: string, name: string) => {
        loads.push(name);
        return { account: { _id: 'acc1' }, entity: { name, apiKeyId: opts.currentKey ?? 'key1' }, permissions: new Set() };
      },
      process: async (_s: unknown, raw: unknown) => {
        processed.push(raw);
        return opts.process ? opts.process(raw) : { code: 200, content: 'id' };
      },
    },
    messaging: { claimForDelivery: jest.fn(), checkMessages: jest.fn(), getStatusTable: jest.fn() },
    mqtt: { markOnline: jest.fn(), markOffline: jest.fn() },
    accounts: { getAccount: jest.fn(async () => ({ region: 'local' })) },
  };
  const transport = {
    send: async (topic: string, payload: string, o: { qos: 0 | 1; retain: boolean }) => {
      if (failSend) throw new Error('broker gone');
      sent.push({ topic, payload, opts: o });
    },
  };
  const presence = { subscribedDevice: jest.fn(async () => device as DeviceIdentity | undefined) };
  const gw = new DeviceGateway(services as unknown as Services, transport, presence, logger as unknown as Logger, () => clock);
  return {
    gw, sent, processed, hits, loads, logger, services, presence,
    advance: (ms: number) => { clock = new Date(clock.getTime() + ms); },
    breakTransport: () => { failSend = true; },
    errorReply: () => {
      expect(sent).toHaveLength(1);
      expect(sent[0].topic).toBe(messagesTopic);
      expect(sent[0].opts).toEqual({ qos: 1, retain: false });
      return JSON.parse(sent[0].payload) as { msg_type: string; data: Record<string, unknown>; timestamp: string };
    },
  };
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v));

describe('handlePublish', () => {
  test('a valid payload goes to the pipeline decoded, and nothing is sent back', async () => {
    const s = setup();
    const msg = { msg_type: 'publish', data: { t: 'ü€😀' } };
    await s.gw.handlePublish(device, json(msg));
    expect(s.processed).toEqual([msg]);
    expect(s.sent).toEqual([]);
    expect(s.hits).toHaveLength(1);
  });

  test('over 64 KB: payload_too_large reply, pipeline not called (the publish still counts against the rate)', async () => {
    const s = setup();
    await s.gw.handlePublish(device, Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x20));
    const r = s.errorReply();
    expect(r.msg_type).toBe('error');
    expect(r.data).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(r.timestamp).toBe('2026-03-01T12:00:00.000Z');
    expect(s.processed).toEqual([]);
    expect(s.hits).toHaveLength(1);
  });

  test('exactly 64 KB is decoded and processed', async () => {
    const s = setup();
    const head = '{"msg_type":"publish","data":{"p":"';
    const tail = '"}}';
    const payload = Buffer.from(head + 'x'.repeat(MAX_PAYLOAD_BYTES - head.length - tail.length) + tail);
    expect(payload.length).toBe(MAX_PAYLOAD_BYTES);
    await s.gw.handlePublish(device, payload);
    expect(s.processed).toHaveLength(1);
    expect(s.sent).toEqual([]);
  });

  test.each([
    ['empty payload', Buffer.alloc(0)],
    ['truncated JSON', Buffer.from('{"msg_type":"publish"')],
    ['single quotes', Buffer.from("{'msg_type':'publish'}")],
    ['NaN literal', Buffer.from('{"msg_type":"publish","data":{"x":NaN}}')],
    ['invalid UTF-8 then garbage', Buffer.from([0xff, 0xfe, 0x7b, 0x00])],
    ['trailing garbage', Buffer.from('{"msg_type":"heartbeat"} x')],
  ])('%s: invalid_json (400) reply, pipeline not called', async (_what, payload) => {
    const s = setup();
    await s.gw.handlePublish(device, payload);
    expect(s.errorReply().data).toEqual({ reason: 'Malformed JSON payload', code: 'invalid_json', status: 400 });
    expect(s.processed).toEqual([]);
  });

  test.each([
    ['a __proto__ key in data', '{"msg_type":"state_update","data":{"__proto__":{"polluted":"yes"}}}'],
    ['a __proto__ key deep in a publish', '{"msg_type":"publish","data":{"a":[{"b":{"__proto__":{}}}]}}'],
  ])('%s: refused as HTTP refuses it (invalid_json), pipeline not called', async (_what, text) => {
    const s = setup();
    await s.gw.handlePublish(device, Buffer.from(text));
    expect(s.errorReply().data).toEqual({ reason: 'Malformed JSON payload: Object contains forbidden prototype property', code: 'invalid_json', status: 400 });
    expect(s.processed).toEqual([]);
  });

  test('valid JSON that is not an object is still handed to the pipeline (it decides)', async () => {
    const s = setup();
    await s.gw.handlePublish(device, Buffer.from('"publish"'));
    await s.gw.handlePublish(device, Buffer.from('null'));
    expect(s.processed).toEqual(['publish', null]);
  });

  test('rate limited: rate_limited 429 with retry_after seconds, nothing decoded', async () => {
    const s = setup({ allowed: false, retryAfter: 0.2 });
    await s.gw.handlePublish(device, json({ msg_type: 'publish', data: {} }));
    expect(s.errorReply().data).toMatchObject({ code: 'rate_limited', status: 429, retry_after: 1 });
    expect(s.processed).toEqual([]);
  });

  test('the rate window is the arrival time, not the processing time', async () => {
    const s = setup();
    const arrived = new Date('2026-03-01T11:59:58.000Z');
    await s.gw.handlePublish(device, json({ msg_type: 'heartbeat' }), arrived);
    expect(s.hits[0]).toContain(arrived);
  });

  test('a key rotated after CONNECT: unauthorized reply, pipeline not called', async () => {
    const s = setup({ currentKey: 'key2' });
    await s.gw.handlePublish(device, json({ msg_type: 'publish', data: {} }));
    expect(s.errorReply().data).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(s.processed).toEqual([]);
  });

  test('pipeline refusals keep their code; a data-limit refusal carries retry_after', async () => {
    const s = setup({ process: async () => { throw new DataLimitExceededError(1000, 'free', 3600); } });
    await s.gw.handlePublish(device, json({ msg_type: 'publish', data: {} }));
    expect(s.errorReply().data).toMatchObject({ code: 'data_limit_exceeded', status: 429, retry_after: 3600 });
    const s2 = setup({ process: async () => { throw new BadRequestError('nope', undefined, 'unsupported_msg_type'); } });
    await s2.gw.handlePublish(device, json({ msg_type: 'x' }));
    expect(s2.errorReply().data).toEqual({ reason: 'nope', code: 'unsupported_msg_type', status: 400 });
  });

  test('an AppError without a code is reported as http_<status>', async () => {
    const s = setup({ process: async () => { throw new AppError(418, 'teapot'); } });
    await s.gw.handlePublish(device, json({ msg_type: 'publish', data: {} }));
    expect(s.errorReply().data).toEqual({ reason: 'teapot', code: 'http_418', status: 418 });
  });

  test('an unexpected error is a generic 500 (internal text not leaked) and is logged', async () => {
    const s = setup({ process: async () => { throw new Error('mongo: connection string mongodb://user:pw@db'); } });
    await s.gw.handlePublish(device, json({ msg_type: 'publish', data: {} }));
    const r = s.errorReply();
    expect(r.data).toEqual({ reason: 'Internal server error', code: 'internal_error', status: 500 });
    expect(JSON.stringify(r)).not.toContain('mongodb://');
    expect(s.logger.error).toHaveBeenCalledTimes(1);
  });

  test('a failing error reply is logged, not thrown', async () => {
    const s = setup();
    s.breakTransport();
    await expect(s.gw.handlePublish(device, Buffer.from('not json'))).resolves.toBeUndefined();
    expect(s.logger.warn).toHaveBeenCalledTimes(1);
  });

  test('the sender is reloaded at most every 10 s per key, and forget() drops it at once', async () => {
    const s = setup();
    const m = json({ msg_type: 'heartbeat' });
    await s.gw.handlePublish(device, m);
    s.advance(9_999);
    await s.gw.handlePublish(device, m);
    expect(s.loads).toHaveLength(1);
    s.advance(1);
    await s.gw.handlePublish(device, m);
    expect(s.loads).toHaveLength(2);
    s.gw.forget('key1');
    await s.gw.handlePublish(device, m);
    expect(s.loads).toHaveLength(3);
  });
});

describe('messages_total for MQTT publishes', () => {
  beforeAll(() => enableMetrics());
  const count = async (labels: string) => {
    const line = (await registry.getSingleMetricAsString('messages_total')).split('\n').find((l) => l.startsWith(`messages_total{${labels}}`));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  test('refusals before the pipeline count once, by outcome; pipeline answers count once too', async () => {
    const refusedOther = 'type="other",transport="mqtt",outcome="refused"';
    const acceptedHb = 'type="heartbeat",transport="mqtt",outcome="accepted"';
    const refusedHb = 'type="heartbeat",transport="mqtt",outcome="refused"';
    const before = { other: await count(refusedOther), ok: await count(acceptedHb), hb: await count(refusedHb) };

    await setup().gw.handlePublish(device, Buffer.from('not json'));
    await setup().gw.handlePublish(device, Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x20));
    expect(await count(refusedOther)).toBe(before.other + 2);

    await setup({ allowed: false, retryAfter: 3 }).gw.handlePublish(device, json({ msg_type: 'heartbeat' }));
    expect(await count(refusedOther)).toBe(before.other + 3); // refused by rate before decoding

    await setup({ currentKey: 'key2' }).gw.handlePublish(device, json({ msg_type: 'heartbeat' }));
    expect(await count(refusedHb)).toBe(before.hb + 1);

    await setup({ process: async () => { throw new BadRequestError('no'); } }).gw.handlePublish(device, json({ msg_type: 'heartbeat' }));
    expect(await count(refusedHb)).toBe(before.hb + 2);

    await setup().gw.handlePublish(device, json({ msg_type: 'heartbeat' }));
    expect(await count(acceptedHb)).toBe(before.ok + 1);
  });
});

describe('delivery', () => {
  const msg = (id: string) => ({ id, msg_type: 'publish', data: { n: id }, tags: [], source: 'accounts/acc1/entities/b', timestamp: '2026-03-01T12:00:00.000Z' });

  test('onMessageQueued: nobody listening → no claim (the message waits in the inbox)', async () => {
    const s = setup();
    s.presence.subscribedDevice.mockResolvedValueOnce(undefined);
    await s.gw.onMessageQueued('acc1', 'sensor-1', 'm1');
    expect(s.services.messaging.claimForDelivery).not.toHaveBeenCalled();
    expect(s.sent).toEqual([]);
  });

  test('onMessageQueued: claimed → sent once at QoS 1 on the listener\'s messages topic; taken elsewhere → nothing sent', async () => {
    const s = setup();
    s.services.messaging.claimForDelivery.mockResolvedValueOnce(msg('m1')).mockResolvedValueOnce(null);
    await s.gw.onMessageQueued('acc1', 'sensor-1', 'm1');
    await s.gw.onMessageQueued('acc1', 'sensor-1', 'm1');
    expect(s.sent).toEqual([{ topic: messagesTopic, payload: JSON.stringify(msg('m1')), opts: { qos: 1, retain: false } }]);
  });

  test('two messages queued back to back reach the device in queue order, even when the first one\'s lookups are slower', async () => {
    const s = setup();
    let releaseFirst!: () => void;
    const firstLookup = new Promise<void>((resolve) => { releaseFirst = resolve; });
    s.presence.subscribedDevice
      .mockImplementationOnce(async () => { await firstLookup; return device; })
      .mockImplementationOnce(async () => device);
    s.services.messaging.claimForDelivery.mockImplementation(async (id: string) => msg(id));
    const first = s.gw.onMessageQueued('acc1', 'sensor-1', 'door');
    const second = s.gw.onMessageQueued('acc1', 'sensor-1', 'smoke');
    // The second waits for the first: nothing is claimed or sent while the first is held.
    await new Promise((resolve) => setImmediate(resolve));
    expect(s.services.messaging.claimForDelivery).not.toHaveBeenCalled();
    releaseFirst();
    await Promise.all([first, second]);
    expect(s.sent.map((x) => (JSON.parse(x.payload) as { id: string }).id)).toEqual(['door', 'smoke']);
  });

  test('a failed delivery does not stop the next one to the same device', async () => {
    const s = setup();
    s.presence.subscribedDevice.mockRejectedValueOnce(new Error('database gone'));
    s.services.messaging.claimForDelivery.mockImplementation(async (id: string) => msg(id));
    await expect(s.gw.onMessageQueued('acc1', 'sensor-1', 'm1')).rejects.toThrow('database gone');
    await s.gw.onMessageQueued('acc1', 'sensor-1', 'm2');
    expect(s.sent.map((x) => (JSON.parse(x.payload) as { id: string }).id)).toEqual(['m2']);
  });

  test('deliverPending drains the inbox in batches, in order, until it is empty', async () => {
    const s = setup();
    s.services.messaging.checkMessages
      .mockResolvedValueOnce([msg('a'), msg('b')])
      .mockResolvedValueOnce([msg('c')])
      .mockResolvedValueOnce(null);
    expect(await s.gw.deliverPending(device)).toBe(3);
    expect(s.sent.map((x) => (JSON.parse(x.payload) as { id: string }).id)).toEqual(['a', 'b', 'c']);
    expect(s.services.messaging.checkMessages).toHaveBeenCalledWith('acc1', 'sensor-1', 50);
  });

  test('a send failing after the claim is logged loudly and not retried', async () => {
    const s = setup();
    s.breakTransport();
    s.services.messaging.claimForDelivery.mockResolvedValueOnce(msg('m1'));
    await expect(s.gw.onMessageQueued('acc1', 'sensor-1', 'm1')).resolves.toBeUndefined();
    expect(s.logger.error).toHaveBeenCalledWith(expect.objectContaining({ messageId: 'm1' }), 'mqtt delivery failed after claim');
    expect(s.services.messaging.claimForDelivery).toHaveBeenCalledTimes(1);
  });

  test('publishState: the whole table retained on the state topic; a deleted entity publishes nothing; region read once', async () => {
    const s = setup();
    s.services.messaging.getStatusTable
      .mockResolvedValueOnce({ mode: 'eco', n: null })
      .mockRejectedValueOnce(new AppError(404, 'Entity not found'))
      .mockResolvedValueOnce({ mode: 'x' });
    await s.gw.publishState('acc1', 'sensor-1', 'key1');
    await s.gw.publishState('acc1', 'sensor-1', 'key1');
    await s.gw.publishState('acc1', 'sensor-1', 'key1');
    expect(s.sent.map((x) => [x.topic, x.payload, x.opts.retain])).toEqual([
      ['acc1/local/key1/state', '{"statusTable":{"mode":"eco","n":null}}', true],
      ['acc1/local/key1/state', '{"statusTable":{"mode":"x"}}', true],
    ]);
    expect(s.services.accounts.getAccount).toHaveBeenCalledTimes(1);
  });

  test('publishState: other errors propagate', async () => {
    const s = setup();
    s.services.messaging.getStatusTable.mockRejectedValueOnce(new Error('db down'));
    await expect(s.gw.publishState('acc1', 'sensor-1', 'key1')).rejects.toThrow('db down');
  });
});
