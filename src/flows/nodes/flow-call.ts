/**
 * `flow.call`: another workflow of the account as a child run; nesting depth at most 10 (forEach
 * child runs count too). The workflow starts the child run (workflows/flow.ts) after the node
 * runner prepared it (NodeRunner.prepareChildRun, shared with forEach); adopting its output is here.
 */
import { FIXED_LIMITS } from '../../accounts/plans';
import { decodeUserJson } from '../../storage/user-json';
import { defineKind, NodeRef, StepOutcome, StepRunner } from './types';

export const flowCallConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['workflow_id'],
  properties: {
    workflow_id: {
      type: 'string', minLength: 1, maxLength: 64,
      description: `The child run's workflow; a child at nesting depth ${FIXED_LIMITS.workflowFlowCallDepth + 1} (flow.call and forEach child runs together) or past the top-level run's ${FIXED_LIMITS.workflowChildRunsPerRun} child runs fails the run`,
    },
    input: { description: 'The child run input; `{{ }}` templates allowed in strings' },
  },
} as const;

export type FlowCallConfig = { workflow_id: string; input?: unknown };

export const flowCallNode = defineKind<FlowCallConfig>({
  type: 'flow.call',
  summary: 'Runs another workflow of the account as a child run; its run output is this node\'s output',
  configSchema: flowCallConfigSchema,
  example: { workflow_id: 'wf_3f2a…', input: { orderId: '{{ input.orderId }}' } },
});

/** flow.call: the child run's output becomes this node's output. */
export async function adoptChildOutput(io: StepRunner, ref: NodeRef & { childRunId: string; attempt: number; startedAt: number }): Promise<StepOutcome> {
  const text = (await io.deps.outputs.load(ref.childRunId, '#output')) ?? '{}';
  const bytes = await io.store(ref, ref.nodeId, decodeUserJson(text));
  return { bytes, durationMs: Date.now() - ref.startedAt, attempt: ref.attempt };
}
