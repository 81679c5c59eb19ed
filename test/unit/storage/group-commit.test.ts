/**
 * GroupCommit (src/storage/group-commit.ts), the one write-batching helper behind rate windows,
 * data-limit charges and message inserts: grouping, order, per-key independence, failures.
 */
import { GroupCommit, ItemFailure } from '../../../src/storage/group-commit';

/** A writer whose writes stay in flight until released, recording every group it was given. */
function gatedWriter<I>(answer: (key: string, items: I[]) => Array<unknown> = (_k, items) => items.map((i) => i)) {
  const groups: Array<{ key: string; items: I[] }> = [];
  const gates: Array<() => void> = [];
  const write = async (key: string, items: I[]) => {
    groups.push({ key, items: [...items] });
    await new Promise<void>((r) => gates.push(r));
    return answer(key, items);
  };
  const releaseAll = async () => {
    while (gates.length) {
      gates.shift()!();
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    }
  };
  return { write, groups, gates, releaseAll };
}

test('an item alone is written at once; items arriving during that write go out together next, in order', async () => {
  const w = gatedWriter<number>();
  const gc = new GroupCommit<number, unknown>(w.write);
  const first = gc.submit('k', 1);
  expect(w.groups).toEqual([{ key: 'k', items: [1] }]);
  const rest = [2, 3, 4].map((n) => gc.submit('k', n));
  expect(w.groups).toHaveLength(1);
  await w.releaseAll();
  expect(await first).toBe(1);
  expect(await Promise.all(rest)).toEqual([2, 3, 4]);
  expect(w.groups).toEqual([{ key: 'k', items: [1] }, { key: 'k', items: [2, 3, 4] }]);
});

test('keys are independent: a write in flight for one key does not hold back another', () => {
  const w = gatedWriter<string>();
  const gc = new GroupCommit<string, unknown>(w.write);
  void gc.submit('a', 'x');
  void gc.submit('b', 'y');
  expect(w.groups.map((g) => g.key)).toEqual(['a', 'b']);
});

test('maxBatch caps a group; the rest follows in the next write', async () => {
  const w = gatedWriter<number>();
  const gc = new GroupCommit<number, unknown>(w.write, 2);
  const all = [1, 2, 3, 4, 5, 6].map((n) => gc.submit('k', n));
  await w.releaseAll();
  expect(await Promise.all(all)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(w.groups.map((g) => g.items)).toEqual([[1], [2, 3], [4, 5], [6]]);
});

test('an ItemFailure fails that item only; a throw fails the whole group; later groups still run', async () => {
  const boom = new Error('write failed');
  let call = 0;
  const w = gatedWriter<number>((_k, items) => {
    call++;
    if (call === 2) throw boom;
    return items.map((n) => (n === 3 ? new ItemFailure(new Error('duplicate 3')) : n * 10));
  });
  const gc = new GroupCommit<number, unknown>(w.write);
  const a = gc.submit('k', 1);
  const b = [2, 3].map((n) => gc.submit('k', n).catch((e: Error) => e.message));
  await Promise.resolve();
  const settledA = a.then((v) => v);
  await w.releaseAll();
  expect(await settledA).toBe(10);
  expect(await Promise.all(b)).toEqual(['write failed', 'write failed']);
  const c = [3, 4].map((n) => gc.submit('k', n).catch((e: Error) => e.message));
  await w.releaseAll();
  expect(await Promise.all(c)).toEqual(['duplicate 3', 40]);
});

test('a writer answering the wrong number of results fails the group instead of mismatching answers', async () => {
  const gc = new GroupCommit<number, number>(async () => [1]);
  const first = gc.submit('k', 1);
  const [x, y] = [gc.submit('k', 2), gc.submit('k', 3)];
  expect(await first).toBe(1);
  await expect(x).rejects.toThrow(/2 items/);
  await expect(y).rejects.toThrow(/2 items/);
});
