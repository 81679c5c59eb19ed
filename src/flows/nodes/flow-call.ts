/** `flow.call`: another workflow of the account as a child run; nesting depth at most 10 (forEach child runs count too). */
import { FIXED_LIMITS } from '../../accounts/plans';
import { defineKind } from './types';

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
