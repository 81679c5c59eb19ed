/**
 * The fixed-window limiter groups concurrent hits on one window into one counter update; each
 * hit must still get the decision it would get with one update per request.
 */
import { LimitService } from '../../../src/limits/service';
import type { CounterStore } from '../../../src/limits/records';

/** A counter store that applies $inc like MongoDB and counts round trips. */
function countingStore() {
  const docs = new Map<string, Record<string, number>>();
  const calls: Array<Record<string, number>> = [];
  const store = {
    calls,
    async hitWindow(id: string, amounts: Record<string, number>): Promise<Record<string, number>> {
      calls.push(amounts);
      await new Promise((r) => setTimeout(r, 5));
      const doc = docs.get(id) ?? {};
      for (const [f, n] of Object.entries(amounts)) doc[f] = (doc[f] ?? 0) + n;
      docs.set(id, doc);
      return { ...doc };
    },
    async sweepWindows(): Promise<void> {},
  };
  return store;
}

const fixedNow = () => new Date('2026-11-22T10:00:00.250Z');

test('60 concurrent hits on a limit of 50: exactly 50 allowed, in arrival order, in few round trips', async () => {
  const store = countingStore();
  const limits = new LimitService(store as unknown as CounterStore, fixedNow);
  const verdicts = await Promise.all(Array.from({ length: 60 }, () => limits.hit('acct:a:msg', 1000, [{ name: 'k_1', limit: 50 }])));
  expect(verdicts.filter((v) => v.allowed)).toHaveLength(50);
  expect(verdicts.slice(0, 50).every((v) => v.allowed)).toBe(true);
  expect(verdicts.slice(50).every((v) => !v.allowed && v.exceeded === 'k_1')).toBe(true);
  expect(verdicts.map((v) => v.counts.k_1)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
  expect(store.calls.length).toBeLessThanOrEqual(2);
});

test('keys of one account share a window document but keep separate counts', async () => {
  const store = countingStore();
  const limits = new LimitService(store as unknown as CounterStore, fixedNow);
  const hits = [
    ...Array.from({ length: 3 }, () => limits.hit('acct:a:msg', 1000, [{ name: 'k_1', limit: 2 }])),
    ...Array.from({ length: 2 }, () => limits.hit('acct:a:msg', 1000, [{ name: 'k_2', limit: 2 }])),
  ];
  const v = await Promise.all(hits);
  expect(v.map((x) => x.allowed)).toEqual([true, true, false, true, true]);
  expect(v[4].counts).toEqual({ k_2: 2 });
});

test('sequential hits each see the running total, and several rules are judged together', async () => {
  const store = countingStore();
  const limits = new LimitService(store as unknown as CounterStore, fixedNow);
  const rules = [{ name: 'read', limit: 60 }, { name: 'plan', limit: 2 }];
  const a = await limits.hit('acct:a:scan', 60_000, rules);
  const b = await limits.hit('acct:a:scan', 60_000, rules);
  const c = await limits.hit('acct:a:scan', 60_000, rules);
  expect([a.allowed, b.allowed, c.allowed]).toEqual([true, true, false]);
  expect(c.exceeded).toBe('plan');
  expect(c.retryAfterSeconds).toBe(60);
});
