/**
 * MessagingService and helpers (src/messaging/service.ts) that need no database: views, the
 * paging, delivery claims and state-table writes, with fakes
 * implementing only the store/account/audit methods each call uses.
 */
import type { AuditLog } from '../../../src/accounts/audit';
import type { EntityService } from '../../../src/entities/service';
import type { AccountDoc } from '../../../src/accounts/records';
import type { EntityDoc } from '../../../src/entities/records';
import { MessagingEvents, StateChangedEvent } from '../../../src/messaging/pipeline';
import type { DeliveredMessage, MessageDoc, MessageStore, ServiceDoc } from '../../../src/messaging/records';
import {
  messageItemOf, MessagingInfo, MessagingService, serviceViewOf,
} from '../../../src/messaging/service';
import type { ServiceValidator } from '../../../src/messaging/validation';

const NOW = new Date('2026-05-04T10:00:00.000Z');
const account: AccountDoc = { _id: 'acc-1', name: 'acme', plan: 'pro', region: 'eu-1', entityCount: 0, createdAt: new Date(0) };
const entity = (extra: Partial<EntityDoc> = {}): EntityDoc => ({
  _id: 'acc-1/sensor-a', accountId: 'acc-1', name: 'sensor-a', resourcePath: 'accounts/acc-1/entities/sensor-a', apiKeyId: 'k1',
  role: 'default', tags: ['x'], metadata: { floor: 2 }, online: true, statusTable: {}, createdAt: new Date('2026-01-01T00:00:00Z'), ...extra,
});
const delivered = (id: string): DeliveredMessage => ({ id, msg_type: 'publish', data: {}, tags: [], source: 's', timestamp: NOW.toISOString() });

function make(store: Record<string, unknown> = {}, entities: Record<string, unknown> = {}) {
  const audits: Array<Record<string, unknown>> = [];
  const events = new MessagingEvents();
  const stateEvents: StateChangedEvent[] = [];
  events.on('stateChanged', (e) => stateEvents.push(e));
  const svc = new MessagingService({
    store: store as unknown as MessageStore,
    entities: entities as unknown as EntityService,
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
