/**
 * MessagingService and helpers (src/messaging/service.ts) that need no database: views, the
 * online window, paging, delivery claims, state-table writes and bulk registration, with fakes
 * implementing only the store/account/audit methods each call uses.
 */
import type { AuditLog } from '../../../src/accounts/audit';
import type { AccountService, CreatedEntity } from '../../../src/accounts/service';
import type { AccountDoc, EntityDoc } from '../../../src/accounts/store';
import { AppError, BadRequestError, ConflictError, ForbiddenError } from '../../../src/errors';
import { MessagingEvents, StateChangedEvent } from '../../../src/messaging/pipeline';
import type { DeliveredMessage, MessageDoc, MessageStore, ServiceDoc } from '../../../src/messaging/store';
import {
  messageItemOf, MessagingInfo, MessagingService, ONLINE_WINDOW_MS, serviceViewOf,
} from '../../../src/messaging/service';
import type { ServiceValidator } from '../../../src/messaging/validation';

const NOW = new Date('2026-05-04T10:00:00.000Z');
const account: AccountDoc = { _id: 'acc-1', name: 'acme', plan: 'pro', region: 'eu-1', entityCount: 0, createdAt: new Date(0) };
const entity = (extra: Partial<EntityDoc> = {}): EntityDoc => ({
  _id: 'acc-1/sensor-a', accountId: 'acc-1', name: 'sensor-a', resourcePath: 'accounts/acc-1/entities/sensor-a', apiKeyId: 'k1',
  role: 'default', tags: ['x'], metadata: { floor: 2 }, online: true, statusTable: {}, createdAt: new Date('2026-01-01T00:00:00Z'), ...extra,
});
const delivered = (id: string): DeliveredMessage => ({ id, msg_type: 'publish', data: {}, tags: [], source: 's', timestamp: NOW.toISOString() });

function make(store: Record<string, unknown> = {}, accounts: Record<string, unknown> = {}) {
  const audits: Array<Record<string, unknown>> = [];
  const events = new MessagingEvents();
  const stateEvents: StateChangedEvent[] = [];
  events.on('stateChanged', (e) => stateEvents.push(e));
  const svc = new MessagingService({
    store: store as unknown as MessageStore,
    accounts: accounts as unknown as AccountService,
    audit: { record: async (e: Record<string, unknown>) => { audits.push(e); return e; } } as unknown as AuditLog,
    validator: { compile: jest.fn(), forget: jest.fn() } as unknown as ServiceValidator,
    events,
    now: () => NOW,
  });
  return { svc, audits, stateEvents };
}

describe('views', () => {
  test('messageItemOf: the list item shape, ISO timestamp, no internal fields', () => {
    const doc: MessageDoc = {
      _id: 'm1', accountId: 'acc-1', msgType: 'publish', source: 'accounts/acc-1/entities/a', sourceName: 'a', destination: null,
      data: { t: 1 }, tags: ['x'], timestamp: new Date('2026-01-02T03:04:05.006Z'), receivedAt: NOW, validation: { result: 'passed' }, bytes: 7,
    };
    expect(messageItemOf(doc)).toEqual({
      id: 'm1', source: 'accounts/acc-1/entities/a', destination: null, msgType: 'publish', data: { t: 1 }, tags: ['x'], timestamp: '2026-01-02T03:04:05.006Z',
    });
  });

  test('serviceViewOf: id instead of _id, no accountId or version', () => {
    const s: ServiceDoc = { _id: 'svc', accountId: 'acc-1', name: 'n', rules: [], version: 4, createdAt: NOW, updatedAt: NOW };
    expect(serviceViewOf(s)).toEqual({ id: 'svc', name: 'n', rules: [], createdAt: NOW.toISOString(), updatedAt: NOW.toISOString() });
  });

  test('entityInfo: MQTT url and the three topics built from account, region and key id', () => {
    expect(new MessagingInfo('mqtts://mqtt.example.com').entityInfo(account, entity())).toEqual({
      name: 'sensor-a', resourcePath: 'accounts/acc-1/entities/sensor-a', apiKeyId: 'k1', accountId: 'acc-1', region: 'eu-1', tags: ['x'],
      mqtt: { url: 'mqtts://mqtt.example.com', topics: { publish: 'acc-1/eu-1/k1/publish', messages: 'acc-1/eu-1/k1/messages', state: 'acc-1/eu-1/k1/state' } },
    });
  });

  describe('entityView online status: a heartbeat within the last 5 minutes and no disconnect since', () => {
    const { svc } = make();
    test.each([
      ['just seen', true, 0, true],
      ['seen 4:59.999 ago', true, ONLINE_WINDOW_MS - 1, true],
      ['seen exactly 5 min ago', true, ONLINE_WINDOW_MS, false],
      ['seen 6 min ago', true, 6 * 60_000, false],
      ['disconnected just now', false, 0, false],
      ['clock skew: lastSeen in the future', true, -60_000, true],
    ])('%s → online %s', (_what, online, agoMs, expected) => {
      expect(svc.entityView(entity({ online, lastSeenAt: new Date(NOW.getTime() - agoMs) })).online).toBe(expected);
    });

    test('never seen: offline, lastSeenAt null, metrics {}, service null, no directoryId key', () => {
      const v = svc.entityView(entity({ online: true }));
      expect(v).toEqual({
        name: 'sensor-a', resourcePath: 'accounts/acc-1/entities/sensor-a', apiKeyId: 'k1', role: 'default', tags: ['x'], metadata: { floor: 2 },
        service: null, online: false, lastSeenAt: null, metrics: {}, createdAt: '2026-01-01T00:00:00.000Z',
      });
      expect('directoryId' in v).toBe(false);
    });

    test('service, directoryId and metrics are shown when present', () => {
      const v = svc.entityView(entity({ serviceId: 'svc-1', directoryId: 'dir-9', metrics: { mem_free: 1 }, lastSeenAt: NOW }));
      expect(v).toMatchObject({ service: 'svc-1', directoryId: 'dir-9', metrics: { mem_free: 1 }, lastSeenAt: NOW.toISOString() });
    });
  });
});

describe('history paging', () => {
  function pagedStore(total: number) {
    const calls: unknown[][] = [];
    const docs = Array.from({ length: total }, (_, i) => ({
      _id: `m${i}`, accountId: 'acc-1', msgType: 'publish', source: 's', sourceName: 'a', destination: null, data: {}, tags: [],
      timestamp: new Date(NOW.getTime() - i), receivedAt: NOW, validation: { result: 'skipped' }, bytes: 2,
    }));
    return {
      calls,
      listPublished: async (f: unknown, offset: number, limit: number) => { calls.push([f, offset, limit]); return docs.slice(offset, offset + limit); },
    };
  }

  test('reads limit + 1 to know whether a next page exists; next_cursor is the next offset, null on the last page', async () => {
    const store = pagedStore(25);
    const { svc } = make(store);
    const p1 = await svc.listMessages('acc-1', { limit: 10, offset: 0 });
    const p3 = await svc.listMessages('acc-1', { limit: 10, offset: 20, entity_name: 'a' });
    expect(p1.messages.map((m) => m.id)).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
    expect(p1.next_cursor).toBe(10);
    expect(p3.messages).toHaveLength(5);
    expect(p3.next_cursor).toBeNull();
    expect(store.calls).toEqual([[{ accountId: 'acc-1', sourceName: undefined }, 0, 11], [{ accountId: 'acc-1', sourceName: 'a' }, 20, 11]]);
  });

  test('a page that ends exactly at the last message has next_cursor null', async () => {
    const { svc } = make(pagedStore(10));
    expect((await svc.listMessages('acc-1', { limit: 10, offset: 0 })).next_cursor).toBeNull();
  });

  test('an offset past the end gives an empty page', async () => {
    const { svc } = make(pagedStore(3));
    expect(await svc.listMessages('acc-1', { limit: 10, offset: 1_000_000 })).toEqual({ messages: [], next_cursor: null });
  });

  test('search: [from, to) parsed to dates; from >= to is an empty page without any read', async () => {
    const store = pagedStore(0);
    const { svc } = make(store);
    await svc.searchMessages('acc-1', { from: '2026-01-01T00:00:00+01:00', to: '2026-01-02T00:00:00Z', tags: ['a'], limit: 5, offset: 0 });
    expect(store.calls[0][0]).toEqual({
      accountId: 'acc-1', sourceName: undefined, tags: ['a'], from: new Date('2025-12-31T23:00:00Z'), to: new Date('2026-01-02T00:00:00Z'),
    });
    for (const [from, to] of [['2026-01-02T00:00:00Z', '2026-01-01T00:00:00Z'], ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'], ['2026-01-01T01:00:00+01:00', '2026-01-01T00:00:00Z']]) {
      expect(await svc.searchMessages('acc-1', { from, to, limit: 5, offset: 0 })).toEqual({ messages: [], next_cursor: null });
    }
    expect(store.calls).toHaveLength(1);
  });

  test('getMessage: unknown id → 404', async () => {
    const { svc } = make({ findPublished: async () => null });
    await expect(svc.getMessage('acc-1', 'nope')).rejects.toMatchObject({ status: 404 });
  });
});

describe('delivery', () => {
  test('checkMessages claims one at a time up to limit, oldest first; null (not []) when none', async () => {
    const queue = ['a', 'b', 'c'];
    const claims: string[][] = [];
    const { svc } = make({
      claimNext: async (acc: string, name: string) => {
        claims.push([acc, name]);
        const id = queue.shift();
        return id ? { _id: id, accountId: acc, dest: name, queuedAt: NOW, message: delivered(id) } : null;
      },
    });
    expect((await svc.checkMessages('acc-1', 'sensor-a', 2))?.map((m) => m.id)).toEqual(['a', 'b']);
    expect((await svc.checkMessages('acc-1', 'sensor-a', 100))?.map((m) => m.id)).toEqual(['c']);
    expect(await svc.checkMessages('acc-1', 'sensor-a', 100)).toBeNull();
    // 2 claims, then 1 hit + 1 miss, then 1 miss: it stops at the first miss.
    expect(claims).toHaveLength(5);
  });

  test('claimForDelivery returns the message or null when someone else took it', async () => {
    const { svc } = make({ claimForDelivery: async (id: string) => (id === 'm1' ? { message: delivered('m1') } : null) });
    expect(await svc.claimForDelivery('m1')).toEqual(delivered('m1'));
    expect(await svc.claimForDelivery('m2')).toBeNull();
  });
});

describe('writeStatusTable (PATCH / PUT)', () => {
  test('merge and replace go to the store and emit stateChanged with the whole table', async () => {
    const calls: string[] = [];
    const { svc, stateEvents } = make({
      mergeStatusTable: async () => { calls.push('merge'); return { a: 1, b: 2 }; },
      replaceStatusTable: async () => { calls.push('replace'); return { b: 2 }; },
    });
    expect(await svc.writeStatusTable(entity(), { b: 2 }, 'merge')).toEqual({ a: 1, b: 2 });
    expect(await svc.writeStatusTable(entity(), { b: 2 }, 'replace')).toEqual({ b: 2 });
    expect(calls).toEqual(['merge', 'replace']);
    expect(stateEvents).toEqual([
      { accountId: 'acc-1', entityName: 'sensor-a', apiKeyId: 'k1', statusTable: { a: 1, b: 2 } },
      { accountId: 'acc-1', entityName: 'sensor-a', apiKeyId: 'k1', statusTable: { b: 2 } },
    ]);
  });

  test('keys with dots or a leading $ reach the store as sent', async () => {
    const merge = jest.fn(async (_a: string, _n: string, patch: Record<string, unknown>) => patch);
    const { svc } = make({ mergeStatusTable: merge });
    const table = JSON.parse('{"a.b":1,"$set":{"apiKeyHash":"x"}}') as Record<string, unknown>;
    expect(await svc.writeStatusTable(entity(), table, 'merge')).toEqual(table);
    expect(merge).toHaveBeenCalledWith('acc-1', 'sensor-a', table);
  });

  test('a deleted entity is a 404 and emits nothing', async () => {
    const { svc, stateEvents } = make({ replaceStatusTable: async () => undefined });
    await expect(svc.writeStatusTable(entity(), {}, 'replace')).rejects.toMatchObject({ status: 404 });
    expect(stateEvents).toEqual([]);
  });
});

describe('bulkRegister', () => {
  function accountsFake(opts: { failNames?: Record<string, AppError>; crashOn?: string } = {}) {
    const created: Array<Record<string, unknown>> = [];
    return {
      created,
      createEntity: async (_acc: string, input: { name: string; tags: string[] }): Promise<CreatedEntity> => {
        if (opts.crashOn === input.name) throw new Error('db down');
        const f = opts.failNames?.[input.name];
        if (f) throw f;
        created.push(input);
        return { name: input.name, resourcePath: `accounts/acc-1/entities/${input.name}`, apiKeyId: `id-${input.name}`, apiKey: `key-${input.name}` };
      },
    };
  }

  test('count + prefix: prefix-1..prefix-N with the request tags; one audit entry', async () => {
    const acc = accountsFake();
    const { svc, audits } = make({}, acc);
    const r = await svc.bulkRegister(account, { count: 3, prefix: 'cam', tags: ['lobby'] }, 'api_key:abc');
    expect(r.created).toBe(3);
    expect(r.failed).toBe(0);
    expect(r.results.map((x) => x.name)).toEqual(['cam-1', 'cam-2', 'cam-3']);
    expect(r.results[0]).toEqual({ name: 'cam-1', status: 'created', apiKeyId: 'id-cam-1', apiKey: 'key-cam-1', resourcePath: 'accounts/acc-1/entities/cam-1' });
    expect(acc.created.map((c) => c.tags)).toEqual([['lobby'], ['lobby'], ['lobby']]);
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({
      accountId: 'acc-1', action: 'bulk_create', resourceType: 'entity', resourceName: 'cam-1..cam-3', userEmail: 'api_key:abc',
      details: { mode: 'count', requested: 3, created: 3, failed: 0 },
    });
  });

  test('the explicit list wins over count + prefix; per-entry tags override request tags', async () => {
    const acc = accountsFake();
    const { svc, audits } = make({}, acc);
    const r = await svc.bulkRegister(account, { count: 5, prefix: 'x', tags: ['all'], entities: [{ name: 'a', tags: ['own'] }, { name: 'b' }] }, 'actor');
    expect(r.results.map((x) => x.name)).toEqual(['a', 'b']);
    expect(acc.created.map((c) => c.tags)).toEqual([['own'], ['all']]);
    expect(audits[0]).toMatchObject({ resourceName: '2 listed entities', details: { mode: 'entities', requested: 2 } });
  });

  test('per-entry failures (repeated name, invalid, taken, quota) fail only that entry, in order', async () => {
    const acc = accountsFake({
      failNames: {
        'bad/name': new BadRequestError('entity name must match [A-Za-z0-9_.-]{1,64}'),
        taken: new ConflictError('entity "taken" already exists'),
        over: new ForbiddenError('Entity limit reached', 'entity_limit_reached'),
      },
    });
    const { svc, audits } = make({}, acc);
    const r = await svc.bulkRegister(account, { entities: [{ name: 'a' }, { name: 'a' }, { name: 'bad/name' }, { name: 'taken' }, { name: 'over' }, { name: 'b' }] }, 'actor');
    expect(r.results.map((x) => [x.name, x.status, x.detail])).toEqual([
      ['a', 'created', undefined],
      ['a', 'failed', 'name appears twice in this request'],
      ['bad/name', 'failed', 'entity name must match [A-Za-z0-9_.-]{1,64}'],
      ['taken', 'failed', 'entity "taken" already exists'],
      ['over', 'failed', 'Entity limit reached'],
      ['b', 'created', undefined],
    ]);
    expect(r.results.filter((x) => x.status === 'failed').every((x) => x.apiKey === undefined)).toBe(true);
    expect([r.created, r.failed]).toEqual([2, 4]);
    expect(audits[0].details).toMatchObject({ requested: 6, created: 2, failed: 4 });
  });

  test('an unexpected error aborts the request (and writes no audit entry)', async () => {
    const { svc, audits } = make({}, accountsFake({ crashOn: 'b' }));
    await expect(svc.bulkRegister(account, { entities: [{ name: 'a' }, { name: 'b' }] }, 'actor')).rejects.toThrow('db down');
    expect(audits).toEqual([]);
  });

  test.each([
    ['nothing', {}],
    ['count without prefix', { count: 2 }],
    ['prefix without count', { prefix: 'x' }],
  ])('%s → 400', async (_what, req) => {
    const { svc } = make({}, accountsFake());
    await expect(svc.bulkRegister(account, req, 'actor')).rejects.toMatchObject({ status: 400 });
  });
});

describe('updateEntity', () => {
  test('a service id that does not exist in the account is a 400 and nothing changes', async () => {
    const update = jest.fn();
    const { svc, audits } = make({ findService: async () => null }, { updateEntity: update });
    await expect(svc.updateEntity(account, 'sensor-a', { service: 'other-accounts-svc' }, 'actor')).rejects.toMatchObject({
      status: 400, message: 'service "other-accounts-svc" does not exist',
    });
    expect(update).not.toHaveBeenCalled();
    expect(audits).toEqual([]);
  });

  test('service null removes it without a lookup; the audit entry names the fields changed', async () => {
    const findService = jest.fn();
    const update = jest.fn(async () => entity());
    const { svc, audits } = make({ findService }, { updateEntity: update });
    await svc.updateEntity(account, 'sensor-a', { service: null, tags: ['t'] }, 'actor');
    expect(findService).not.toHaveBeenCalled();
    expect(update).toHaveBeenCalledWith(account, 'sensor-a', { tags: ['t'], metadata: undefined, role: undefined, serviceId: null });
    expect(audits[0]).toMatchObject({ action: 'update', resourceType: 'entity', details: { fields: ['service', 'tags'] } });
  });
});
