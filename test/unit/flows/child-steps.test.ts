/**
 * forEach's and flow.call's data steps (their kinds' files) over an in-memory runner: no
 * Temporal, no database. The interpreter test runs them for real inside workflows.
 */
import { adoptChildOutput } from '../../../src/flows/nodes/flow-call';
import { assembleForEach, assembleForEachRuns, prepareForEach, runForEachChunk } from '../../../src/flows/nodes/for-each';
import { NodeFailure, NodeRef, StepRunner } from '../../../src/flows/nodes/types';

const ref: NodeRef = { runId: 'r1', accountId: 'acc', flowId: 'wf', nodeId: 'each', execution: 2, record: true, contextKeys: [], timeoutMs: 1_000 };

/** Items come from `items`; the `do` node multiplies its item by 10 and fails on 2. */
function memoryRunner(items: unknown) {
  const saved = new Map<string, string>();
  const runner: StepRunner = {
    deps: {
      outputs: {
        save: async (runId, key, json) => { saved.set(`${runId}/${key}`, json); return json.length; },
        load: async (runId, key) => saved.get(`${runId}/${key}`),
      },
      nodes: { expressions: { evaluate: async () => items, resolveTemplates: async (_a, value) => value } },
    },
    context: async () => ({ input: null, nodes: {}, vars: {} }),
    execute: async (_type, _config, ctx) => {
      if (ctx.item === 2) throw new NodeFailure('two is refused', false);
      return { output: (ctx.item as number) * 10 };
    },
    store: async (r, key, value) => runner.deps.outputs.save(r.runId, key, JSON.stringify(value)),
    storedItems: async (runId, key) => JSON.parse(saved.get(`${runId}/${key}`) ?? '[]') as unknown[],
  };
  return { runner, saved };
}

const doNode = { type: 'transform', config: { expression: 'item * 10' } };

describe('forEach steps', () => {
  it('stores the items under the execution, runs chunks, and joins them in order', async () => {
    const { runner, saved } = memoryRunner([1, 2, 3]);
    expect(await prepareForEach(runner, { ...ref, items: 'input.list' })).toEqual({ length: 3, itemsKey: 'each#2#items' });
    const chunk = { ...ref, doNode, continueOnError: true };
    // The second chunk runs first: the output is in item order all the same.
    await runForEachChunk(runner, { ...chunk, chunk: 1, from: 2, to: 3 }, () => undefined, new AbortController().signal);
    await runForEachChunk(runner, { ...chunk, chunk: 0, from: 0, to: 2 }, () => undefined, new AbortController().signal);
    const done = await assembleForEach(runner, { ...ref, chunks: 2, attempt: 1, startedAt: Date.now() });
    expect(done.attempt).toBe(1);
    expect(JSON.parse(saved.get('r1/each') as string)).toEqual([10, { error: 'two is refused' }, 30]);
  });

  it('a failed item fails the chunk unless the forEach continues on error; a null items is no items; a non-array fails', async () => {
    const { runner } = memoryRunner([1, 2]);
    await prepareForEach(runner, { ...ref, items: 'x' });
    await expect(runForEachChunk(runner, { ...ref, doNode, chunk: 0, from: 0, to: 2, continueOnError: false }, () => undefined, new AbortController().signal))
      .rejects.toMatchObject({ message: 'item 1: two is refused', retryable: false });
    expect(await prepareForEach(memoryRunner(null).runner, { ...ref, items: 'x' })).toMatchObject({ length: 0 });
    await expect(prepareForEach(memoryRunner('text').runner, { ...ref, items: 'x' })).rejects.toThrow('items must yield an array, not string');
  });

  it('child runs\' outputs are joined in order; a failed child run is {error}', async () => {
    const { runner, saved } = memoryRunner([]);
    saved.set('r1.each.2.0/#output', '{"t":1}');
    saved.set('r1.each.2.2/#output', '{"t":3}');
    await assembleForEachRuns(runner, { ...ref, childRunPrefix: 'r1.each.2', count: 3, attempt: 1, startedAt: Date.now() });
    expect(JSON.parse(saved.get('r1/each') as string)).toEqual([{ t: 1 }, { error: 'the child run failed' }, { t: 3 }]);
  });
});

describe('flow.call steps', () => {
  it('the child run\'s output becomes the node\'s output', async () => {
    const { runner, saved } = memoryRunner([]);
    saved.set('r1.call.1/#output', '{"end":{"ok":true}}');
    const done = await adoptChildOutput(runner, { ...ref, nodeId: 'call', childRunId: 'r1.call.1', attempt: 2, startedAt: Date.now() });
    expect(done).toMatchObject({ attempt: 2, bytes: '{"end":{"ok":true}}'.length });
    expect(saved.get('r1/call')).toBe('{"end":{"ok":true}}');
  });
});
