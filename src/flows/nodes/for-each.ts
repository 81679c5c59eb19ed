/**
 * `forEach`: JSONata `items`, then for each item either the `do` node `{type, config}` (with
 * `item` and `index` in its context; chunk activities of 100 items) or a child run of another
 * workflow `{workflow_id}` with the item as its input (batch child workflows of 500 runs, run
 * with the forEach's share of its run's width; bounded by the run tree's depth and budget). The
 * output is the array of per-item outputs.
 */
import { FIXED_LIMITS } from '../../accounts/plans';
import { expressionSyntaxError } from '../expressions';
import { defineKind } from './types';

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
