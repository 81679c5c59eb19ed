/** `flow.call`: another workflow of the account as a child run; nesting depth at most 10. */
import { defineKind } from './types';

export const flowCallConfigSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['workflow_id'],
  properties: {
    workflow_id: { type: 'string', minLength: 1, maxLength: 64 },
    input: { description: 'The child run input; `{{ }}` templates allowed in strings' },
  },
} as const;

export const flowCallNode = defineKind<{ workflow_id: string; input?: unknown }>({
  type: 'flow.call',
  summary: 'Runs another workflow of the account as a child run; its run output is this node\'s output',
  configSchema: flowCallConfigSchema,
  example: { workflow_id: 'wf_3f2a…', input: { orderId: '{{ input.orderId }}' } },
});
