/**
 * The expression threads: an expression that JSONata's own guards cannot stop (a backtracking
 * regular expression, a huge string) is stopped by the pool's hard limits and fails its node
 * alone; the thread that called it stays free meanwhile, and one account cannot hold every
 * thread. No assertion here depends on how fast the machine is: each checks what finished first.
 */
import { ExpressionPool } from '../../../src/flows/expression-pool';
import { ExpressionError } from '../../../src/flows/expressions';

jest.setTimeout(120_000);

const ctx = { input: { s: `${'a'.repeat(29)}!` }, nodes: {}, vars: {} };
/** Catastrophic backtracking: one `$match` call, which JSONata's timeout cannot interrupt. */
const REDOS = '$contains(input.s, /^(a+)+$/)';

let pool: ExpressionPool;
afterEach(() => pool?.close());

it('evaluates on a thread and answers plain JSON', async () => {
  pool = new ExpressionPool({ threads: 1 });
  expect(await pool.evaluate('acc', '{"n": $count([1,2,3]), "m": input.missing}', ctx, 5_000)).toEqual({ n: 3 });
  expect(await pool.resolveTemplates('acc', { a: 'x={{ input.s ~> $length() }}', k: '{{ vault.K }}' }, ctx, 5_000, { secrets: { K: 'v' } })).toEqual({ a: 'x=30', k: 'v' });
});

it('stops a backtracking regular expression at its budget, and the event loop keeps running meanwhile', async () => {
  pool = new ExpressionPool({ threads: 1 });
  let ticks = 0;
  const timer = setInterval(() => { ticks++; }, 20);
  const started = Date.now();
  const err = await pool.evaluate('acc', REDOS, ctx, 1_500).catch((e: unknown) => e);
  clearInterval(timer);
  expect(err).toBeInstanceOf(ExpressionError);
  expect((err as Error).message).toMatch(/ran longer than its 1500 ms budget/);
  // Had the expression run on this thread, no timer callback could have run until it ended.
  expect(ticks).toBeGreaterThan(0);
  expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
  // The terminated thread was replaced: the pool still answers.
  expect(await pool.evaluate('acc', '1 + 1', ctx, 5_000)).toBe(2);
});

it('stops an expression past its heap and reports it', async () => {
  pool = new ExpressionPool({ threads: 1, heapMb: 64 });
  const err = await pool.evaluate('acc', '$count([1..40].($pad("", 4000000, "ab")))', ctx, 60_000).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ExpressionError);
  expect((err as Error).message).toBe('expression used more than 64 MB of memory (stopped)');
  expect(await pool.evaluate('acc', '"ok"', ctx, 5_000)).toBe('ok');
});

it('refuses a result far larger than a node output before it leaves the thread; below that the node\'s own limit answers', async () => {
  pool = new ExpressionPool({ threads: 1 });
  await expect(pool.evaluate('acc', '$pad("", 21000000, "x")', ctx, 30_000)).rejects.toThrow(/produced 21000002 characters; a node output may be at most 10485760 bytes/);
  expect(((await pool.evaluate('acc', '$pad("", 11000000, "x")', ctx, 30_000)) as string).length).toBe(11_000_000);
});

it('one account holds at most its share of the threads: another account is served while its expressions run', async () => {
  pool = new ExpressionPool({ threads: 2 });
  const order: string[] = [];
  const slow = [1, 2, 3].map(() => pool.evaluate('greedy', REDOS, ctx, 4_000).then(() => order.push('greedy'), () => order.push('greedy')));
  // Let the greedy account's tasks reach the pool first.
  await new Promise((r) => setImmediate(r));
  expect(pool.stats()).toEqual({ busy: 1, waiting: 2, threads: 2 });
  await pool.evaluate('other', '$sum([1, 2, 3])', ctx, 5_000).then(() => order.push('other'));
  expect(order).toEqual(['other']);
  await Promise.all(slow);
  expect(order).toEqual(['other', 'greedy', 'greedy', 'greedy']);
});

// Found by an outside probe: with 2 threads and "all but one" per account, two accounts'
// backtracking expressions held both threads and a third account's transform timed out waiting.
it('by default three accounts running away at once still leave a thread for a fourth', async () => {
  pool = new ExpressionPool();
  const greedy = ['a', 'b', 'c'].flatMap((acc) => [1, 2].map(() => pool.evaluate(acc, REDOS, ctx, 4_000).catch(() => 'stopped')));
  await new Promise((r) => setImmediate(r));
  expect(pool.stats()).toEqual({ busy: 3, waiting: 3, threads: 4 });
  expect(await pool.evaluate('other', '$sum([1, 2, 3])', ctx, 5_000)).toBe(6);
  await Promise.all(greedy);
});

it('a cancelled task that still waits for a thread leaves the queue', async () => {
  pool = new ExpressionPool({ threads: 1 });
  const busy = pool.evaluate('a', REDOS, ctx, 3_000).catch(() => 'stopped');
  const ac = new AbortController();
  const waiting = pool.evaluate('b', '1', ctx, 5_000, ac.signal).catch((e: unknown) => e);
  expect(pool.stats().waiting).toBe(1);
  ac.abort(new Error('activity cancelled'));
  expect(((await waiting) as Error).message).toBe('activity cancelled');
  expect(pool.stats().waiting).toBe(0);
  expect(await busy).toBe('stopped');
});

it('a config with nothing to evaluate (vault references only) is filled without waiting for a thread', async () => {
  pool = new ExpressionPool({ threads: 1 });
  const busy = pool.evaluate('a', REDOS, ctx, 3_000).catch(() => 'stopped');
  const filled = await pool.resolveTemplates('b', { h: 'Bearer {{ vault.K }}', code: 'print("{{ vault.K }}")', n: 3 }, ctx, 5_000, { skipKeys: ['code'], secrets: { K: 'v' } });
  expect(filled).toEqual({ h: 'Bearer v', code: 'print("v")', n: 3 });
  expect(pool.stats()).toEqual({ busy: 1, waiting: 0, threads: 1 });
  expect(await busy).toBe('stopped');
});
