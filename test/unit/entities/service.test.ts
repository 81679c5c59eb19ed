/**
 * EntityService (src/entities/service.ts) with fakes implementing only the account, audit and
 * messaging-store methods each call uses: the entity view and its online window, bulk
 * registration and entity changes.
 */
import type { AuditLog } from '../../../src/accounts/audit';
import type { AccountService } from '../../../src/accounts/service';
import type { AccountDoc } from '../../../src/accounts/records';
import type { EntityDoc, EntityStore } from '../../../src/entities/records';
import { AppError, BadRequestError, ConflictError, ForbiddenError } from '../../../src/errors';
import { CreatedEntity, EntityService, ONLINE_WINDOW_MS } from '../../../src/entities/service';
import type { BulkRequest } from '../../../src/entities/schemas';

const NOW = new Date('2026-05-04T10:00:00.000Z');
const account: AccountDoc = { _id: 'acc-1', name: 'acme', plan: 'pro', region: 'eu-1', entityCount: 0, createdAt: new Date(0) };
const entity = (extra: Partial<EntityDoc> = {}): EntityDoc => ({
  _id: 'acc-1/sensor-a', accountId: 'acc-1', name: 'sensor-a', resourcePath: 'accounts/acc-1/entities/sensor-a', apiKeyId: 'k1',
  role: 'default', tags: ['x'], metadata: { floor: 2 }, online: true, statusTable: {}, createdAt: new Date('2026-01-01T00:00:00Z'), ...extra,
});

function make(store: { findService?: unknown; purgeInbox?: unknown } = {}, entities: Partial<EntityStore> = {}) {
  const audits: Array<Record<string, unknown>> = [];
  const svc = new EntityService({
    store: entities as EntityStore,
    accounts: {} as unknown as AccountService,
    secrets: { entityKeySecret: new Uint8Array(32) },
    audit: { record: async (e: Record<string, unknown>) => { audits.push(e); return e; } } as unknown as AuditLog,
    inbox: { purgeInbox: (store.purgeInbox ?? jest.fn()) as (a: string, n: string) => Promise<void> },
    validationServices: { findService: (store.findService ?? jest.fn()) as (a: string, id: string) => Promise<unknown> },
    now: () => NOW,
  });
  return { svc, audits };
}

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

describe('bulkRegister', () => {
  /** EntityService with its own createEntity (the name, quota and key rules, tested in account-service.test.ts) replaced. */
  function withCreate(acc: ReturnType<typeof createFake>) {
    const made = make();
    jest.spyOn(made.svc, 'createEntity').mockImplementation(acc.createEntity as EntityService['createEntity']);
    return made;
  }

  function createFake(opts: { failNames?: Record<string, AppError>; crashOn?: string } = {}) {
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
    const acc = createFake();
    const { svc, audits } = withCreate(acc);
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
    const acc = createFake();
    const { svc, audits } = withCreate(acc);
    const r = await svc.bulkRegister(account, { count: 5, prefix: 'x', tags: ['all'], entities: [{ name: 'a', tags: ['own'] }, { name: 'b' }] }, 'actor');
    expect(r.results.map((x) => x.name)).toEqual(['a', 'b']);
    expect(acc.created.map((c) => c.tags)).toEqual([['own'], ['all']]);
    expect(audits[0]).toMatchObject({ resourceName: '2 listed entities', details: { mode: 'entities', requested: 2 } });
  });

  test('per-entry failures (repeated name, invalid, taken, quota) fail only that entry, in order', async () => {
    const acc = createFake({
      failNames: {
        'bad/name': new BadRequestError('entity name must match [A-Za-z0-9_.-]{1,64}'),
        taken: new ConflictError('entity "taken" already exists'),
        over: new ForbiddenError('Entity limit reached', 'entity_limit_reached'),
      },
    });
    const { svc, audits } = withCreate(acc);
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
    const { svc, audits } = withCreate(createFake({ crashOn: 'b' }));
    await expect(svc.bulkRegister(account, { entities: [{ name: 'a' }, { name: 'b' }] }, 'actor')).rejects.toThrow('db down');
    expect(audits).toEqual([]);
  });

  test.each([
    ['nothing', {}],
    ['count without prefix', { count: 2 }],
    ['prefix without count', { prefix: 'x' }],
  ])('%s → 400', async (_what, req) => {
    const { svc } = withCreate(createFake());
    // The schema refuses these bodies first over HTTP; the service keeps its own check for other callers.
    await expect(svc.bulkRegister(account, req as unknown as BulkRequest, 'actor')).rejects.toMatchObject({ status: 400 });
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
    expect(update).toHaveBeenCalledWith('acc-1', 'sensor-a', { tags: ['t'] }, ['serviceId']);
    expect(audits[0]).toMatchObject({ action: 'update', resourceType: 'entity', details: { fields: ['service', 'tags'] } });
  });
});
