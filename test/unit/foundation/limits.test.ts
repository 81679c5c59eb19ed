/**
 * src/limits: fixed windows (boundaries, Retry-After never 0, grouped hits with exact places,
 * failures, several replicas), monthly quotas (never past the limit under concurrency, with
 * racing first upserts), UTC month and day keys, reset_at and the zero-filled 30-day volume.
 * The real CounterStore runs on test/unit/foundation/fake-mongo.ts.
 */
import { LimitService, dayKey, monthKey, startOfNextMonthUtc } from '../../../src/limits/service';
import { MongoCounterStore } from '../../../src/limits/store/mongo';
import { COLLECTIONS } from '../../../src/storage/mongo';
import { RateLimitedError } from '../../../src/errors';
import { FakeDb } from './fake-mongo';
import type { Db } from 'mongodb';

function realStore(db = new FakeDb()) {
  return { db, store: new MongoCounterStore(db as unknown as Db) };
}
const clock = (iso: string) => {
  const c = { t: new Date(iso).getTime(), now: () => new Date(c.t) };
  return c;
};

describe('fake mongo (sanity: the races the store handles really happen here)', () => {
  test('two concurrent first upserts of one _id: one of them gets E11000', async () => {
    const db = new FakeDb();
    const c = db.collection('x');
    const r = await Promise.allSettled([0, 1].map(() => c.findOneAndUpdate({ _id: 'a' }, { $inc: { n: 1 } }, { upsert: true })));
    expect(r.map((x) => x.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((r.find((x) => x.status === 'rejected') as PromiseRejectedResult).reason.code).toBe(11000);
  });
});

describe('fixed windows', () => {
  const rules = [{ name: 'k', limit: 3 }];

  test('Retry-After is the rest of the window, rounded up, and never 0 (1 s and 60 s windows)', async () => {
    const { store } = realStore();
    const c = clock('2026-05-10T10:00:00.000Z');
    const limits = new LimitService(store, c.now);
    for (const [offset, windowMs, expected] of [
      [0, 1_000, 1], [1, 1_000, 1], [500, 1_000, 1], [999, 1_000, 1],
      [0, 60_000, 60], [1, 60_000, 60], [59_000, 60_000, 1], [59_001, 60_000, 1], [59_999, 60_000, 1], [58_999, 60_000, 2],
    ]) {
      c.t = new Date('2026-05-10T10:00:00.000Z').getTime() + offset;
      const v = await limits.hit(`s:${offset}:${windowMs}`, windowMs, rules);
      expect([offset, windowMs, v.retryAfterSeconds]).toEqual([offset, windowMs, expected]);
    }
  });

  test('the last millisecond of a window and the first of the next are counted apart', async () => {
    const { store } = realStore();
    const c = clock('2026-05-10T10:00:59.999Z');
    const limits = new LimitService(store, c.now);
    for (let i = 0; i < 4; i++) await limits.hit('acct:a:scan', 60_000, rules);
    expect((await limits.hit('acct:a:scan', 60_000, rules)).allowed).toBe(false);
    c.t += 1;
    const v = await limits.hit('acct:a:scan', 60_000, rules);
    expect(v.allowed).toBe(true);
    expect(v.counts.k).toBe(1);
    expect(v.retryAfterSeconds).toBe(60);
  });

  test('a request stamped with its arrival time (bridge backlog) counts in the window it arrived in', async () => {
    const { store } = realStore();
    const c = clock('2026-05-10T10:00:01.200Z');
    const limits = new LimitService(store, c.now);
    const arrived = new Date('2026-05-10T10:00:00.900Z');
    for (let i = 0; i < 3; i++) expect((await limits.hit('m', 1_000, rules, arrived)).allowed).toBe(true);
    expect((await limits.hit('m', 1_000, rules, arrived)).allowed).toBe(false);
    expect((await limits.hit('m', 1_000, rules)).counts.k).toBe(1); // the current second is untouched
  });

  test('grouped concurrent hits with different rule sets on one window get exact places per counter', async () => {
    const { store, db } = realStore();
    const limits = new LimitService(store, clock('2026-05-10T10:00:10Z').now);
    const read = [{ name: 'read', limit: 60 }, { name: 'plan', limit: 10 }];
    const write = [{ name: 'write', limit: 30 }, { name: 'plan', limit: 10 }];
    const hits = Array.from({ length: 16 }, (_, i) => limits.hit('acct:a:scan', 60_000, i % 2 ? write : read));
    const v = await Promise.all(hits);
    expect(v.map((x) => x.counts.plan)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(v.filter((x, i) => i % 2 === 0).map((x) => x.counts.read)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(v.filter((x, i) => i % 2 === 1).map((x) => x.counts.write)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(v.map((x) => x.allowed)).toEqual(Array.from({ length: 16 }, (_, i) => i < 10));
    expect(v.slice(10).every((x) => x.exceeded === 'plan')).toBe(true);
    expect(db.collection(COLLECTIONS.rateCounters).updates).toBeLessThanOrEqual(3);
  });

  test('two replicas (own LimitService each) on one store: exactly the limit is allowed and places are unique', async () => {
    const { db } = realStore();
    const c = clock('2026-05-10T10:00:00.100Z');
    const a = new LimitService(new MongoCounterStore(db as unknown as Db), c.now);
    const b = new LimitService(new MongoCounterStore(db as unknown as Db), c.now);
    const r = [{ name: 'k_1', limit: 50 }];
    const v = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).hit('acct:x:msg', 1_000, r)));
    expect(v.filter((x) => x.allowed)).toHaveLength(50);
    expect(v.map((x) => x.counts.k_1).sort((p, q) => p - q)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
  });

  test('a failed counter update rejects every hit of its group, and the window is usable afterwards', async () => {
    const { store } = realStore();
    const limits = new LimitService(store, clock('2026-05-10T10:00:00Z').now);
    const original = store.hitWindow.bind(store);
    let call = 0;
    jest.spyOn(store, 'hitWindow').mockImplementation(async (...args) => {
      // The first hit goes out alone; the two arriving while it is in flight form the second group.
      if (++call === 2) { await new Promise((r) => setImmediate(r)); throw new Error('db down'); }
      return original(...args);
    });
    const r = await Promise.allSettled([1, 2, 3].map(() => limits.hit('w', 1_000, rules)));
    expect(r.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect((r[1] as PromiseRejectedResult).reason).toEqual(new Error('db down'));
    const after = await limits.hit('w', 1_000, rules);
    expect(after).toMatchObject({ allowed: true, counts: { k: 2 } });
    expect(call).toBe(3);
  });

  test('RateLimitedError turns any retry time into a Retry-After of at least 1 whole second', () => {
    for (const [s, h] of [[0, '1'], [0.001, '1'], [0.999, '1'], [1, '1'], [1.2, '2'], [-5, '1'], [59.0001, '60']] as const) {
      expect(new RateLimitedError(s).headers['Retry-After']).toBe(h);
    }
  });
});

describe('monthly quota', () => {
  test('150 concurrent scans on a fresh month with a quota of 100: exactly 100 reserved, counter ends at 100', async () => {
    const { store } = realStore();
    const limits = new LimitService(store, clock('2026-05-10T10:00:00Z').now);
    const r = await Promise.all(Array.from({ length: 150 }, () => limits.reserveScan('acc', 100)));
    expect(r.filter(Boolean)).toHaveLength(100);
    expect(await limits.scansUsedThisMonth('acc')).toBe(100);
    const vol = await limits.dailyScanVolume('acc');
    expect(vol.counts[29]).toBe(100);
    expect(await limits.reserveScan('acc', 100)).toBe(false);
    expect(await limits.reserveScan('acc', 101)).toBe(true); // an upgraded plan's quota applies at once
  });

  test('two replicas racing on the first upsert of the month still count every scan exactly once', async () => {
    const { db } = realStore();
    const c = clock('2026-05-10T10:00:00Z');
    const services = [0, 1, 2].map(() => new LimitService(new MongoCounterStore(db as unknown as Db), c.now));
    const r = await Promise.all(Array.from({ length: 30 }, (_, i) => services[i % 3].reserveScan('acc', 1_000)));
    expect(r.every(Boolean)).toBe(true);
    expect(await services[0].scansUsedThisMonth('acc')).toBe(30);
    expect((await services[1].dailyScanVolume('acc')).counts[29]).toBe(30);
    // 30 month + 30 day updates, plus the retries of the upserts that lost the race
    expect(db.collection(COLLECTIONS.usageDaily).updates).toBeGreaterThan(60);
  });

  test('bounded values returned are 1..limit each once (every reservation knows its own place)', async () => {
    const { store } = realStore();
    const doc = { _id: 'acc:2026-05', accountId: 'acc', period: '2026-05', kind: 'month' as const };
    const r = await Promise.all(Array.from({ length: 40 }, () => store.incrementUsageBounded(doc, 'scans', 1, 25)));
    expect(r.filter((x) => x !== undefined).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
  });

  test('messaging bytes: a bounded charge that would pass the limit counts nothing; unbounded charges always count', async () => {
    const { store } = realStore();
    const limits = new LimitService(store, clock('2026-05-10T10:00:00Z').now);
    expect(await limits.addMessagingBytes('acc', 900, 1_000)).toEqual({ allowed: true, used: 900 });
    expect(await limits.addMessagingBytes('acc', 101, 1_000)).toEqual({ allowed: false, used: 900 });
    expect(await limits.addMessagingBytes('acc', 100, 1_000)).toEqual({ allowed: true, used: 1_000 });
    expect(await limits.addMessagingBytes('acc', 5_000)).toEqual({ allowed: true, used: 6_000 });
    expect(await limits.addMessagingBytes('acc', 1, 1_000)).toEqual({ allowed: false, used: 6_000 });
  });

  // Regression (fixed): incrementUsageBounded's filter `$or: [{field: {$exists: false}}, {field: {$lte: max - amount}}]`
  // let the first charge of a month (no document, or a month document holding only the other
  // counter) through whatever its size, so one charge larger than the whole limit was accepted.
  it('a single charge larger than the whole limit is refused even when it is the first of the month', async () => {
    const { store } = realStore();
    const doc = { _id: 'acc:2026-05', accountId: 'acc', period: '2026-05', kind: 'month' as const };
    expect(await store.incrementUsageBounded(doc, 'messagingBytes', 6_000, 5_000)).toBeUndefined();
    expect((await store.getUsage('acc:2026-05'))?.messagingBytes ?? 0).toBe(0);
  });

  it('a charge larger than the limit is refused when the month document exists with only the scan counter', async () => {
    const { store } = realStore();
    const limits = new LimitService(store, clock('2026-05-10T10:00:00Z').now);
    expect(await limits.reserveScan('acc', 100)).toBe(true); // creates acc:2026-05 with scans only
    const r = await limits.addMessagingBytes('acc', 2_000, 1_000);
    expect(r.allowed).toBe(false);
    expect(await limits.messagingBytesThisMonth('acc')).toBe(0);
  });
});

describe('UTC calendar', () => {
  test('month and day keys are UTC, whatever the offset the instant was written with', () => {
    const d = new Date('2026-03-01T00:30:00+01:00'); // 2026-02-28T23:30Z
    expect(monthKey(d)).toBe('2026-02');
    expect(dayKey(d)).toBe('2026-02-28');
    expect(monthKey(new Date('2026-12-31T23:59:59.999Z'))).toBe('2026-12');
    expect(monthKey(new Date('2027-01-01T00:00:00.000Z'))).toBe('2027-01');
  });

  test.each([
    ['2026-01-31T23:59:59.999Z', '2026-02-01T00:00:00.000Z'],
    ['2026-01-31T12:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    ['2026-12-15T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['2028-02-29T23:00:00.000Z', '2028-03-01T00:00:00.000Z'],
    ['2026-06-01T00:00:00.000Z', '2026-07-01T00:00:00.000Z'],
    ['2026-03-01T00:30:00+01:00', '2026-03-01T00:00:00.000Z'],
  ])('reset_at after %s is %s (strictly later, first instant of the next UTC month)', (now, expected) => {
    const r = startOfNextMonthUtc(new Date(now));
    expect(r.toISOString()).toBe(expected);
    expect(r.getTime()).toBeGreaterThan(new Date(now).getTime());
  });

  test('scans just before and at a month boundary count in different months', async () => {
    const { store } = realStore();
    const c = clock('2026-01-31T23:59:59.999Z');
    const limits = new LimitService(store, c.now);
    expect(await limits.reserveScan('acc', 1)).toBe(true);
    expect(await limits.reserveScan('acc', 1)).toBe(false);
    c.t += 1;
    expect(await limits.scansUsedThisMonth('acc')).toBe(0);
    expect(await limits.reserveScan('acc', 1)).toBe(true);
  });
});

describe('daily volume', () => {
  test('30 consecutive UTC days ending today, oldest first, zero-filled, only this account', async () => {
    const { store } = realStore();
    const c = clock('2026-03-02T00:10:00Z'); // spans February of a non-leap year
    const limits = new LimitService(store, c.now);
    const plan: Array<[string, number]> = [['2026-03-02T00:00:01Z', 2], ['2026-02-28T23:59:59Z', 1], ['2026-02-01T12:00:00Z', 3], ['2026-01-31T12:00:00Z', 4]];
    for (const [at, n] of plan) {
      c.t = new Date(at).getTime();
      for (let i = 0; i < n; i++) await limits.reserveScan('acc', 1_000);
    }
    c.t = new Date('2026-03-02T00:00:01Z').getTime();
    await limits.reserveScan('someone-else', 1_000);
    c.t = new Date('2026-03-02T23:59:59Z').getTime();
    const v = await limits.dailyScanVolume('acc');
    expect(v.dates).toHaveLength(30);
    expect(v.counts).toHaveLength(30);
    expect(v.dates[0]).toBe('2026-02-01');
    expect(v.dates[29]).toBe('2026-03-02');
    for (let i = 1; i < 30; i++) expect(Date.parse(v.dates[i]) - Date.parse(v.dates[i - 1])).toBe(86_400_000);
    expect(new Set(v.dates).size).toBe(30);
    const byDate = Object.fromEntries(v.dates.map((d, i) => [d, v.counts[i]]));
    expect(byDate).toMatchObject({ '2026-03-02': 2, '2026-02-28': 1, '2026-02-01': 3 });
    expect(v.counts.reduce((a, b) => a + b, 0)).toBe(6); // 2026-01-31 is 31 days back: outside
    expect(v.counts.every((n) => Number.isInteger(n) && n >= 0)).toBe(true);
  });

  test('a leap year\'s 29 February is one of the 30 days', async () => {
    const { store } = realStore();
    const limits = new LimitService(store, clock('2028-03-05T08:00:00Z').now);
    const v = await limits.dailyScanVolume('acc');
    expect(v.dates).toContain('2028-02-29');
    expect(v.dates[0]).toBe('2028-02-05');
    expect(v.counts).toEqual(Array(30).fill(0));
  });
});
