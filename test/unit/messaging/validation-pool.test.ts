/**
 * ValidationPool: validation services' rules run on threads of their own, each message under a
 * hard budget, shared fairly between accounts. Found by an outside probe: a 6 KB rule (a
 * recursive $ref applied 300 times) took 1.7 s per 5 KB message on the thread serving everyone.
 */
import { ValidationPool } from '../../../src/messaging/validation-pool';
import type { ServiceDoc } from '../../../src/messaging/records';

const PATTERN = '(?:a|b)[a-z]{0,400}z';
const slowRule = {
  name: 'slow',
  schema: {
    $defs: { p: { anyOf: [{ type: 'string', pattern: PATTERN }, { type: 'array', items: { $ref: '#/$defs/p' } }] } },
    type: 'object', additionalProperties: { allOf: Array.from({ length: 300 }, () => ({ $ref: '#/$defs/p' })) },
  },
};
const tempRule = { name: 'temp-range', schema: { type: 'object', properties: { temp: { type: 'number', minimum: -40, maximum: 85 } }, required: ['temp'] } };
const service = (id: string, rules: ServiceDoc['rules']): ServiceDoc => ({ _id: id, accountId: 'x', name: id, version: 1, rules, createdAt: new Date(), updatedAt: new Date() } as ServiceDoc);
const bulky = (): Record<string, unknown> => Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'ab'.repeat(48)]));

let pool: ValidationPool;
afterEach(async () => { await pool.close(); });

test('rules answer as they would inline', async () => {
  pool = new ValidationPool(2, 2_000);
  expect(await pool.check('acc1', service('s1', [tempRule]), { temp: 21 })).toEqual({ result: 'passed', actionResults: [{ rule: 'temp-range', passed: true, errors: [] }] });
  const failed = await pool.check('acc1', service('s1', [tempRule]), { temp: 200 });
  expect(failed).toMatchObject({ result: 'failed', actionResults: [{ rule: 'temp-range', passed: false }] });
});

test('a rule past its budget is stopped, the message fails naming it, and the serving thread is never held', async () => {
  pool = new ValidationPool(2, 300);
  // The serving thread keeps turning while the rule runs: inline, the rule held it in one turn for
  // 1.7 s, and no timer could fire until it was done.
  let turns = 0;
  const tick = setInterval(() => { turns += 1; }, 5);
  let turnsWhileRunning: number;
  let r;
  try {
    const before = turns;
    r = await pool.check('acc1', service('slow', [slowRule, tempRule]), bulky());
    turnsWhileRunning = turns - before;
  } finally {
    clearInterval(tick);
  }
  expect(r.result).toBe('failed');
  expect(r.actionResults).toEqual([
    { rule: 'slow', passed: false, errors: ["the service's rules ran longer than 300 ms on this message (stopped)"] },
    { rule: 'temp-range', passed: false, errors: ["the service's rules ran longer than 300 ms on this message (stopped)"] },
  ]);
  expect(turnsWhileRunning).toBeGreaterThan(0);
  // A fresh thread took the stopped one's place; the budget counts from when it takes the task,
  // so its own start is not charged to the message.
  expect((await pool.check('acc1', service('s1', [tempRule]), { temp: 1 })).result).toBe('passed');
});

test('one account\'s slow messages hold at most its share: another account is answered meanwhile', async () => {
  pool = new ValidationPool(3, 1_000);
  await pool.check('warm', service('warm', [tempRule]), { temp: 1 });
  let noisyDone = 0;
  const slow = Array.from({ length: 3 }, () => pool.check('noisy', service('slow', [slowRule]), bulky()).then((r) => { noisyDone++; return r; }));
  await new Promise((r) => setTimeout(r, 50));
  expect((await pool.check('quiet', service('s1', [tempRule]), { temp: 1 })).result).toBe('passed');
  // The noisy account holds one of three threads (fewer than half), its three checks one after
  // another: the quiet account's answer did not wait for them.
  expect(noisyDone).toBeLessThan(3);
  const slowResults = await Promise.all(slow);
  expect(slowResults.every((r) => r.result === 'failed')).toBe(true);
});

test('too many of one account\'s messages waiting or running: 429, and other accounts are not refused', async () => {
  pool = new ValidationPool(1, 2_000, 2);
  const held = Array.from({ length: 2 }, () => pool.check('noisy', service('slow', [slowRule]), bulky()));
  await expect(pool.check('noisy', service('s1', [tempRule]), { temp: 1 })).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
  const other = pool.check('other', service('s1', [tempRule]), { temp: 1 });
  await Promise.all(held);
  expect((await other).result).toBe('passed');
  // Once they ran, the account may queue again.
  expect((await pool.check('noisy', service('s1', [tempRule]), { temp: 1 })).result).toBe('passed');
});
