/** FairSlots: at most `max` at once, at most `perAccount` per account, freed slots go round the waiting accounts, aborted waits leave. */
import { FairSlots, perAccountDefault } from '../../../src/flows/fair-slots';

/** A job that runs until released, recording when it started and how many ran at once. */
function harness(slots: FairSlots) {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  let running = 0;
  let most = 0;
  const job = (account: string, name: string, signal = new AbortController().signal) => slots.run(account, signal, async () => {
    started.push(name);
    running++;
    most = Math.max(most, running);
    await new Promise<void>((resolve) => gates.set(name, resolve));
    running--;
    return name;
  });
  const finish = async (name: string) => {
    gates.get(name)?.();
    // Let the finished job's continuation and the next job's start run.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { started, job, finish, most: () => most };
}

it('a freed slot goes to the next waiting account, not to the account with the longest queue', async () => {
  const h = harness(new FairSlots(2, 2));
  const all = [h.job('a', 'a1'), h.job('a', 'a2'), h.job('a', 'a3'), h.job('a', 'a4'), h.job('a', 'a5'), h.job('b', 'b1')];
  await h.finish('none');
  expect(h.started).toEqual(['a1', 'a2']);
  await h.finish('a1');
  // a3 waited first, so account a is served once; then b's turn comes before a's next.
  expect(h.started).toEqual(['a1', 'a2', 'a3']);
  await h.finish('a2');
  expect(h.started).toEqual(['a1', 'a2', 'a3', 'b1']);
  for (const name of ['a3', 'b1', 'a4', 'a5']) await h.finish(name);
  expect(await Promise.all(all)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'b1']);
  expect(h.most()).toBe(2);
});

it('an account that arrives later is served before an earlier account\'s second waiter', async () => {
  const h = harness(new FairSlots(1));
  const all = [h.job('a', 'a1'), h.job('a', 'a2'), h.job('a', 'a3'), h.job('b', 'b1'), h.job('c', 'c1')];
  for (const name of ['a1', 'a2', 'b1', 'c1', 'a3']) await h.finish(name);
  expect(h.started).toEqual(['a1', 'a2', 'b1', 'c1', 'a3']);
  await Promise.all(all);
  expect(h.most()).toBe(1);
});

it('a wait whose signal aborts is refused with its reason and gives up its place; the slots stay counted right', async () => {
  const h = harness(new FairSlots(1));
  const first = h.job('a', 'a1');
  const abort = new AbortController();
  const waiting = h.job('b', 'b1', abort.signal);
  const after = h.job('c', 'c1');
  abort.abort(new Error('node timed out'));
  await expect(waiting).rejects.toThrow('node timed out');
  await h.finish('a1');
  expect(h.started).toEqual(['a1', 'c1']);
  await h.finish('c1');
  await expect(Promise.all([first, after])).resolves.toEqual(['a1', 'c1']);
  // Both slots' worth of work is done: a new job starts at once.
  const again = h.job('d', 'd1');
  await h.finish('none');
  expect(h.started.at(-1)).toBe('d1');
  await h.finish('d1');
  await again;
});

it('by default one account holds fewer than half the slots, so two busy accounts leave one for a third', () => {
  expect([1, 2, 3, 4, 5, 8, 16].map(perAccountDefault)).toEqual([1, 1, 1, 1, 2, 3, 7]);
});

// Found by an outside probe: two sleeping snippets of one account held both of a worker's slots,
// and every other account's python nodes timed out waiting.
it('an account at its cap waits even with slots free; other accounts take them at once', async () => {
  const h = harness(new FairSlots(4));
  const a = [h.job('a', 'a1'), h.job('a', 'a2'), h.job('a', 'a3')];
  const c = [h.job('c', 'c1'), h.job('c', 'c2')];
  await h.finish('none');
  expect(h.started).toEqual(['a1', 'c1']);
  // A third and a fourth account still find a slot each.
  const b = h.job('b', 'b1');
  const d = h.job('d', 'd1');
  await h.finish('none');
  expect(h.started).toEqual(['a1', 'c1', 'b1', 'd1']);
  // a1's slot goes to a's next waiter (a began waiting before c); every job still runs in the end.
  await h.finish('a1');
  expect(h.started).toEqual(['a1', 'c1', 'b1', 'd1', 'a2']);
  for (const name of ['b1', 'd1', 'c1', 'a2', 'c2', 'a3']) await h.finish(name);
  expect(await Promise.all([...a, ...c, b, d])).toEqual(['a1', 'a2', 'a3', 'c1', 'c2', 'b1', 'd1']);
  expect(h.most()).toBe(4);
});

it('an account alone keeps to its cap and runs the rest in turn', async () => {
  const h = harness(new FairSlots(5));
  const all = [h.job('a', 'a1'), h.job('a', 'a2'), h.job('a', 'a3'), h.job('a', 'a4')];
  await h.finish('none');
  expect(h.started).toEqual(['a1', 'a2']);
  for (const name of ['a1', 'a2', 'a3', 'a4']) await h.finish(name);
  expect(h.started).toEqual(['a1', 'a2', 'a3', 'a4']);
  await Promise.all(all);
  expect(h.most()).toBe(2);
});
