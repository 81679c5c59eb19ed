/** The scan, threat-feed, vault, connector and MQTT stores' contract, on both engines (docs/contract.md §11). */
import { isDuplicateKey } from '../../../../src/storage/errors';
import { forEachEngine, newTenant } from '../../../support/engines';
import { newTimeOrderedId } from '../../../../src/storage/ids';
import type { StoredScan } from '../../../../src/scan/records';

const scan = (accountId: string, n: number, over: Partial<StoredScan> = {}): StoredScan => ({
  _id: `s${n}-${accountId}`, accountId, requestId: 'r', status: 'complete', scanType: 'file' as StoredScan['scanType'], filename: 'f', size: 1, creditsUsed: 1,
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)), ...over,
});

/** True when the write failed as a duplicate key, whichever engine. */
const duplicate = (write: Promise<unknown>): Promise<boolean> => write.then(() => false, (err: unknown) => isDuplicateKey(err));

forEachEngine(({ stores }) => {
  test('scans: history newest first with a total; completion and webhook claims happen once; uploads kept and erased', async () => {
    const acct = newTenant();
    for (const n of [1, 3, 2]) await stores().scans.insertScan(scan(acct, n));
    await stores().scans.insertScan(scan(acct, 4, { status: 'pending', uploadId: newTimeOrderedId(), uploadHashes: { sha256: 'a', md5: 'b', sha1: 'c' } }));
    const page = await stores().scans.history(acct, 1, 2);
    expect(page.total).toBe(3);
    expect(page.items.map((s) => s._id)).toEqual([scan(acct, 3)._id, scan(acct, 2)._id]);
    expect(await stores().scans.findScan(newTenant(), scan(acct, 1)._id)).toBeNull();
    const completions = await Promise.all([1, 2].map(() => stores().scans.completeScan(scan(acct, 4)._id, { verdict: 'clean' }, new Date(5))));
    expect(completions.sort()).toEqual([false, true]);
    expect(await stores().scans.findScanById(scan(acct, 4)._id)).toMatchObject({ status: 'complete', result: { verdict: 'clean' }, completedAt: new Date(5) });
    const claims = await Promise.all([1, 2].map(() => stores().scans.claimWebhook(scan(acct, 4)._id, new Date(6))));
    expect(claims.sort()).toEqual([false, true]);
    await stores().scans.clearUpload(scan(acct, 4)._id);
    const cleared = await stores().scans.findScanById(scan(acct, 4)._id);
    expect(cleared?.uploadId).toBeUndefined();
    expect(cleared?.uploadHashes).toBeUndefined();
    const bytes = Buffer.from('x'.repeat(2_500_000));
    const id = await stores().scans.saveUpload('f.bin', bytes);
    const back = await stores().scans.readUpload(id);
    expect(back.equals(bytes)).toBe(true);
    expect(back.buffer).toBeInstanceOf(SharedArrayBuffer);
    await stores().scans.deleteUpload(id);
    await stores().scans.deleteUpload(id);
    await expect(stores().scans.readUpload(id)).rejects.toThrow(/not found/);
    // A scan whose work never started is removed; a complete one is not touched by the same call.
    await stores().scans.insertScan(scan(acct, 5, { status: 'pending' }));
    await stores().scans.deletePendingScan(scan(acct, 5)._id);
    await stores().scans.deletePendingScan(scan(acct, 5)._id);
    expect(await stores().scans.findScanById(scan(acct, 5)._id)).toBeNull();
    await stores().scans.deletePendingScan(scan(acct, 4)._id);
    expect(await stores().scans.findScanById(scan(acct, 4)._id)).toMatchObject({ status: 'complete' });
  });

  test('scan profiles: unique name, oldest first, one default, update with unset', async () => {
    const acct = newTenant();
    const profile = (n: number, isDefault: boolean) => ({
      _id: `p${n}-${acct}`, accountId: acct, name: `p${n}`, isDefault, allowedTypes: [], suppressedEngines: [], createdAt: new Date(n * 1000), updatedAt: new Date(),
      webhook: { url: 'https://x', authType: 'none' as const, headerNames: [] },
    });
    await stores().scans.insertProfile(profile(2, true));
    await stores().scans.insertProfile(profile(1, false));
    expect(await duplicate(stores().scans.insertProfile({ ...profile(3, false), name: 'p1' }))).toBe(true);
    expect((await stores().scans.listProfiles(acct)).map((p) => p.name)).toEqual(['p1', 'p2']);
    expect((await stores().scans.findDefaultProfile(acct))?.name).toBe('p2');
    await stores().scans.updateProfile(acct, profile(1, false)._id, { isDefault: true }, ['webhook']);
    await stores().scans.clearDefault(acct, profile(1, false)._id);
    expect((await stores().scans.findDefaultProfile(acct))?.name).toBe('p1');
    expect((await stores().scans.findProfile(acct, profile(1, false)._id))?.webhook).toBeUndefined();
    expect(await stores().scans.updateProfile(newTenant(), profile(1, false)._id, { name: 'x' })).toBeNull();
    expect(await stores().scans.deleteProfile(acct, profile(2, true)._id)).toBe(true);
  });

  test('threat feeds: upserts count new and changed hashes; lookup by any of the three digests, case-insensitive', async () => {
    const h = newTenant().replace('acct_', '').padEnd(64, 'a');
    expect(await stores().feeds.upsert([{ hash: h, algo: 'sha256', source: 'feed', name: 'evil' }])).toEqual({ upserted: 1, modified: 0 });
    expect(await stores().feeds.upsert([{ hash: h, algo: 'sha256', source: 'feed2' }])).toEqual({ upserted: 0, modified: 1 });
    expect(await stores().feeds.lookup({ sha256: h.toUpperCase(), md5: 'none', sha1: 'none' })).toEqual([{ hash: h, algo: 'sha256', source: 'feed2', name: 'evil' }]);
  });

  test('vault: put creates then replaces keeping createdAt; sorted list; find by names; remove', async () => {
    const acct = newTenant();
    expect((await stores().vault.put(acct, 'b', 'sealed1', new Date(1))).created).toBe(true);
    const again = await stores().vault.put(acct, 'b', 'sealed2', new Date(2));
    expect(again).toEqual({ entry: { name: 'b', valueSealed: 'sealed2', createdAt: new Date(1), updatedAt: new Date(2) }, created: false });
    await stores().vault.put(acct, 'a', 's', new Date(3));
    expect((await stores().vault.list(acct)).map((e) => e.name)).toEqual(['a', 'b']);
    expect((await stores().vault.find(acct, ['b', 'zz'])).map((e) => e.valueSealed)).toEqual(['sealed2']);
    expect(await stores().vault.find(newTenant(), ['b'])).toEqual([]);
    expect(await stores().vault.remove(acct, 'b')).toBe(true);
    expect(await stores().vault.remove(acct, 'b')).toBe(false);
  });

  test('connectors: unique name per account, oldest first, replaced only by their account', async () => {
    const acct = newTenant();
    const c = (n: number) => ({ id: `c${n}-${acct}`, accountId: acct, name: `c${n}`, type: 'aws' as const, region: 'eu', credentialsSealed: 's', createdAt: new Date(n), updatedAt: new Date(n) });
    await stores().connectors.insert(c(2));
    await stores().connectors.insert(c(1));
    expect(await duplicate(stores().connectors.insert({ ...c(3), name: 'c1' }))).toBe(true);
    expect((await stores().connectors.list(acct)).map((x) => x.name)).toEqual(['c1', 'c2']);
    expect(await stores().connectors.replace({ ...c(1), region: 'us' })).toBe(true);
    expect((await stores().connectors.find(acct, c(1).id))?.region).toBe('us');
    expect(await stores().connectors.replace({ ...c(1), accountId: newTenant() })).toBe(false);
    expect(await stores().connectors.find(newTenant(), c(1).id)).toBeNull();
    expect(await stores().connectors.remove(acct, c(1).id)).toBe(true);
  });

  test('MQTT: signals since a time, oldest first, swept; presence by entity with expiry, dropped by key', async () => {
    const base = Date.now() + 10 * 3600_000;
    const acct = newTenant();
    await stores().mqtt.addSignal('p1', { kind: 'revoked', apiKeyId: `${acct}-1` }, new Date(base + 2));
    await stores().mqtt.addSignal('p1', { kind: 'revoked', apiKeyId: `${acct}-0` }, new Date(base + 1));
    const since = await stores().mqtt.signalsSince(new Date(base), 10);
    expect(since.map((s) => s.signal)).toEqual([{ kind: 'revoked', apiKeyId: `${acct}-0` }, { kind: 'revoked', apiKeyId: `${acct}-1` }]);
    await stores().mqtt.sweepSignals(new Date(base + 2));
    expect((await stores().mqtt.signalsSince(new Date(base), 10)).map((s) => s.at)).toEqual([new Date(base + 2)]);
    const device = { accountId: acct, entityName: 'd', apiKeyId: `${acct}-k`, region: 'local' } as never;
    await stores().mqtt.markSubscribed(device, new Date(1000), 500);
    expect(await stores().mqtt.subscribedDevice(acct, 'd', new Date(1200))).toEqual(device);
    expect(await stores().mqtt.subscribedDevice(acct, 'd', new Date(1600))).toBeUndefined();
    await stores().mqtt.refreshPresence(device, new Date(1500), 500);
    expect(await stores().mqtt.subscribedDevice(acct, 'd', new Date(1600))).toEqual(device);
    await stores().mqtt.dropPresence({ apiKeyId: `${acct}-k` });
    expect(await stores().mqtt.subscribedDevice(acct, 'd', new Date(1600))).toBeUndefined();
  });
});
