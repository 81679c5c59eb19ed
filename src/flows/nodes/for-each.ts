/**
 * `forEach`: JSONata `items`, then for each item either the `do` node `{type, config}` (with
 * `item` and `index` in its context; chunk activities of 100 items) or a child run of another
 * workflow `{workflow_id}` with the item as its input (batch child workflows of 500 runs, run
 * with the forEach's share of its run's width; bounded by the run tree's depth and budget). The
 * output is the array of per-item outputs.
 *
 * The workflow sequences a forEach (workflows/flow.ts); its steps that read and write data are
 * here, each one activity (activities/flows.ts).
 */
import { FIXED_LIMITS } from '../../accounts/plans';
import { decodeUserJson, encodeUserJson } from '../../storage/user-json';
import { stepOutputError } from '../limits';
import { expressionSyntaxError } from '../expressions';
import { defineKind, NodeFailure, NodeRef, StepOutcome, StepRunner } from './types';

export const forEachConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['items', 'do'],
  properties: {
    items: { type: 'string', minLength: 1, maxLength: 65536, description: 'JSONata yielding the array to iterate' },
    max_items: { type: 'integer', minimum: 1, description: `default ${FIXED_LIMITS.workflowForEachDefaultItems}; above ${FIXED_LIMITS.workflowForEachMaxItems} it is capped (logged)` },
    do: {
      oneOf: [
        {
          type: 'object', additionalProperties: false, required: ['type', 'config'],
          properties: {
            type: { type: 'string', description: 'A node kind that runs as an activity (http, transform, condition, switch, device.send, scan, ...)' },
            config: { type: 'object', description: 'That kind\'s config; `item` and `index` are in its context' },
          },
        },
        {
          type: 'object', additionalProperties: false, required: ['workflow_id'],
          properties: { workflow_id: { type: 'string', minLength: 1, maxLength: 64, description: `A child run of this workflow per item, with the item as its input; child runs count toward the nesting depth (${FIXED_LIMITS.workflowFlowCallDepth}, with flow.call) and the ${FIXED_LIMITS.workflowChildRunsPerRun} child runs of the top-level run, taken before the first one starts` } },
        },
      ],
    },
  },
} as const;

/** The node a forEach applies to each item (`do: {type, config}`). */
export type ForEachDoNode = { type: string; config: Record<string, unknown> };

/** A type alias (not an interface), so a node's stored config (a plain record) can be read as one. */
export type ForEachConfig = {
  items: string;
  max_items?: number;
  do: ForEachDoNode | { workflow_id: string };
};

export const forEachNode = defineKind<ForEachConfig>({
  type: 'forEach',
  summary: 'Runs one node, or a child run of another workflow, for each item of a JSONata array; output is the array of per-item outputs',
  configSchema: forEachConfigSchema,
  example: { items: 'nodes.fetch.body.devices', max_items: 500, do: { type: 'device.send', config: { entity: '{{ item.name }}', data: { reboot: true } } } },
  rawKeys: ['items', 'do'],
  check(config) {
    const err = expressionSyntaxError(config.items);
    return err ? [['items', `invalid JSONata: ${err}`]] : [];
  },
});

/** Where a forEach execution's items (and its chunks' outputs) are stored under its run. */
const itemsKey = (ref: Pick<NodeRef, 'nodeId' | 'execution'>) => `${ref.nodeId}#${ref.execution}#items`;

/** forEach step 1: the items array, stored for the chunks or child runs; returns its length and where it is. */
export async function prepareForEach(io: StepRunner, ref: NodeRef & { items: string }): Promise<{ length: number; itemsKey: string }> {
  const ctx = await io.context(ref);
  let items: unknown;
  try {
    items = await io.deps.nodes.expressions.evaluate(ref.accountId, ref.items, ctx, ref.timeoutMs);
  } catch (err) {
    throw new NodeFailure(`items expression failed: ${(err as Error).message}`, false);
  }
  if (items === null) items = [];
  if (!Array.isArray(items)) throw new NodeFailure(`items must yield an array, not ${typeof items}`, false);
  await io.deps.outputs.save(ref.runId, itemsKey(ref), encodeUserJson(items));
  return { length: items.length, itemsKey: itemsKey(ref) };
}

/**
 * forEach step 2: the `do` node over items [from, to), each with the node timeout, ten at a
 * time; the chunk's outputs are stored together. `continueOnError` keeps a failed item as
 * `{error}` instead of failing the node.
 */
export async function runForEachChunk(io: StepRunner, ref: NodeRef & { doNode: ForEachDoNode; from: number; to: number; chunk: number; continueOnError: boolean }, beat: () => void, signal: AbortSignal): Promise<{ bytes: number }> {
  const [items, base] = await Promise.all([io.storedItems(ref.runId, itemsKey(ref)), io.context(ref)]);
  const outputs: unknown[] = new Array(ref.to - ref.from);
  let next = ref.from;
  const worker = async () => {
    while (next < ref.to) {
      const i = next++;
      const itemSignal = AbortSignal.any([signal, AbortSignal.timeout(ref.timeoutMs)]);
      try {
        const r = await io.execute(ref.doNode.type, ref.doNode.config, { ...base, item: items[i], index: i }, ref, itemSignal, i);
        outputs[i - ref.from] = r.output;
      } catch (err) {
        if (!ref.continueOnError) throw new NodeFailure(`item ${i}: ${(err as Error).message}`, !(err instanceof NodeFailure) || err.retryable);
        outputs[i - ref.from] = { error: (err as Error).message };
      }
      beat();
    }
  };
  await Promise.all(Array.from({ length: Math.min(10, ref.to - ref.from) }, worker));
  const json = encodeUserJson(outputs);
  const bytes = Buffer.byteLength(json);
  const tooBig = stepOutputError(ref.nodeId, bytes);
  if (tooBig) throw new NodeFailure(tooBig, false);
  await io.deps.outputs.save(ref.runId, `${itemsKey(ref)}#chunk-${ref.chunk}`, json);
  return { bytes };
}

/** forEach step 3: the chunks joined in order become the node's output. */
export async function assembleForEach(io: StepRunner, ref: NodeRef & { chunks: number; attempt: number; startedAt: number }): Promise<StepOutcome> {
  const parts: string[] = [];
  let total = 0;
  for (let c = 0; c < ref.chunks; c++) {
    const text = (await io.deps.outputs.load(ref.runId, `${itemsKey(ref)}#chunk-${c}`)) ?? '[]';
    total += text.length;
    const tooBig = stepOutputError(ref.nodeId, total);
    if (tooBig) throw new NodeFailure(tooBig, false);
    const inner = text.slice(1, -1);
    if (inner) parts.push(inner);
  }
  const value = decodeUserJson(`[${parts.join(',')}]`);
  const bytes = await io.store(ref, ref.nodeId, value);
  return { bytes, durationMs: Date.now() - ref.startedAt, attempt: ref.attempt };
}

/**
 * forEach with child runs: the outputs of runs `<prefix>.0` ... `<prefix>.<count - 1>` in order;
 * a child that failed (kept with on_error: continue) is `{error}`.
 */
export async function assembleForEachRuns(io: StepRunner, ref: NodeRef & { childRunPrefix: string; count: number; attempt: number; startedAt: number }): Promise<StepOutcome> {
  const parts: string[] = [];
  let total = 0;
  for (let i = 0; i < ref.count; i++) {
    const text = (await io.deps.outputs.load(`${ref.childRunPrefix}.${i}`, '#output')) ?? '{"error":"the child run failed"}';
    total += text.length + 1;
    const tooBig = stepOutputError(ref.nodeId, total);
    if (tooBig) throw new NodeFailure(tooBig, false);
    parts.push(text);
  }
  const bytes = await io.store(ref, ref.nodeId, decodeUserJson(`[${parts.join(',')}]`));
  return { bytes, durationMs: Date.now() - ref.startedAt, attempt: ref.attempt };
}
