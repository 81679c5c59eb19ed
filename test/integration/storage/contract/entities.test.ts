/** The entity store's contract (entities, entity keys, online status), on both engines (docs/contract.md §11). */
import { isDuplicateKey } from '../../../../src/storage/errors';
import type { EntityDoc } from '../../../../src/entities/records';
import { forEachEngine, newTenant } from '../../../support/engines';

/** User JSON that native documents would not keep: `$` and `.` keys, spaced keys, nested arrays. */
const AWKWARD = { $set: 1, 'a.b': { ' lead': [[1, [2, { $x: null }]]], 'trail ': 'x' }, '': [], 'ü': '\u0000' };

const entity = (accountId: string, name: string, over: Partial<EntityDoc> = {}): EntityDoc => ({
  _id: `${accountId}/${name}`, accountId, name, resourcePath: `acc/${accountId}/${name}`, apiKeyId: `k-${accountId}-${name}`, role: 'default',
  tags: ['t'], metadata: { m: 1 }, online: false, statusTable: {}, createdAt: new Date(), ...over,
});

/** True when the write failed as a duplicate key, whichever engine. */
const duplicate = (write: Promise<unknown>): Promise<boolean> => write.then(() => false, (err: unknown) => isDuplicateKey(err));

forEachEngine(({ stores }) => {
  test('entities: unique name per account, sorted pages, update and unset, service cleared, role in use', async () => {
    const id = newTenant();
    for (const n of ['c', 'a', 'b']) await stores().entities.insertEntity(entity(id, n, n === 'b' ? { serviceId: 'svc', role: 'ops' } : {}));
    expect(await duplicate(stores().entities.insertEntity(entity(id, 'a')))).toBe(true);
    expect((await stores().entities.listEntities(id, 1, 5)).map((e) => e.name)).toEqual(['b', 'c']);
    expect(await stores().entities.listEntities(newTenant(), 0, 5)).toEqual([]);
    expect(await stores().entities.roleInUse(id, 'ops')).toBe(true);
    expect(await stores().entities.roleInUse(newTenant(), 'ops')).toBe(false);
    const updated = await stores().entities.updateEntity(id, 'b', { tags: ['x'], metadata: { k: [1] } }, ['serviceId']);
    expect(updated).toMatchObject({ tags: ['x'], metadata: { k: [1] } });
    expect(updated?.serviceId).toBeUndefined();
    await stores().entities.updateEntity(id, 'c', { serviceId: 's2' }, []);
    await stores().entities.clearEntityService(id, 's2');
    expect((await stores().entities.findEntity(id, 'c'))?.serviceId).toBeUndefined();
    await stores().entities.setEntityKey(id, 'c', 'k2', 'hash2');
    expect(await stores().entities.findEntity(id, 'c')).toMatchObject({ apiKeyId: 'k2', apiKeyHash: 'hash2' });
    expect(await stores().entities.deleteEntity(id, 'c')).toBe(true);
    expect(await stores().entities.deleteEntity(id, 'c')).toBe(false);
    expect(await stores().entities.findEntity(id, 'c')).toBeNull();
    expect(await stores().entities.updateEntity(id, 'c', { tags: [] }, [])).toBeNull();
  });

  test('metadata comes back exactly as sent', async () => {
    const id = newTenant();
    await stores().entities.insertEntity(entity(id, 'd', { metadata: AWKWARD }));
    expect(JSON.stringify((await stores().entities.findEntity(id, 'd'))?.metadata)).toBe(JSON.stringify(AWKWARD));
    await stores().entities.updateEntity(id, 'd', { metadata: { ...AWKWARD, more: [[]] } }, []);
    expect(JSON.stringify((await stores().entities.findEntity(id, 'd'))?.metadata)).toBe(JSON.stringify({ ...AWKWARD, more: [[]] }));
  });

  test('entity keys: revocation returns the live ones; dead keys are the revoked and the unknown', async () => {
    const id = newTenant();
    for (const k of ['k1', 'k2']) await stores().entities.insertEntityKey({ _id: `${id}-${k}`, accountId: id, entityName: 'd', tokenHash: 'h', createdAt: new Date() });
    await stores().entities.insertEntityKey({ _id: `${id}-k3`, accountId: id, entityName: 'other', tokenHash: 'h', createdAt: new Date() });
    expect((await stores().entities.revokeEntityKeys(id, 'd', new Date(7))).sort()).toEqual([`${id}-k1`, `${id}-k2`]);
    expect(await stores().entities.revokeEntityKeys(id, 'd', new Date(8))).toEqual([]);
    expect((await stores().entities.findEntityKey(`${id}-k1`))?.revokedAt).toEqual(new Date(7));
    expect(await stores().entities.findEntityKey('nope')).toBeNull();
    expect(await stores().entities.deadEntityKeys([`${id}-k1`, `${id}-k3`, 'nope'])).toEqual([`${id}-k1`, 'nope']);
    expect(await stores().entities.deadEntityKeys([])).toEqual([]);
  });

  test('heartbeats make an entity online and merge metrics; a disconnect makes it offline; unknown entities are untouched', async () => {
    const id = newTenant();
    await stores().entities.insertEntity(entity(id, 'd'));
    await stores().entities.recordHeartbeat(id, 'd', new Date(5), { cpu: 3 });
    await stores().entities.recordHeartbeat(id, 'd', new Date(6), { mem: 4, cpu: 5 });
    expect(await stores().entities.findEntity(id, 'd')).toMatchObject({ online: true, lastSeenAt: new Date(6), metrics: { cpu: 5, mem: 4 } });
    await stores().entities.recordDisconnect(id, 'd', new Date(7));
    expect(await stores().entities.findEntity(id, 'd')).toMatchObject({ online: false, lastSeenAt: new Date(6), metrics: { cpu: 5, mem: 4 } });
    await stores().entities.recordHeartbeat(id, 'ghost', new Date(8), {});
    await stores().entities.recordDisconnect(id, 'ghost', new Date(8));
    expect(await stores().entities.findEntity(id, 'ghost')).toBeNull();
  });
});
