/** FairSlots: at most `max` at once, freed slots go round the waiting accounts, aborted waits leave. */
import { FairSlots } from '../../../src/flows/fair-slots';

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
  const h = harness(new FairSlots(2));
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
