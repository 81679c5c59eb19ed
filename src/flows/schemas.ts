/**
 * JSON Schemas of workflow definitions and runs (docs/contract.md §7 "Definitions"): the source of validation,
 * of the TypeScript types and of the OpenAPI document. Each node kind's config schema lives in
 * its own file under nodes/; the documented definition schema is assembled from them.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { pageOffsetProperty } from '../json-schema';
import { FIXED_LIMITS as L } from '../accounts/plans';
import { NODE_KINDS } from './nodes';

export const NODE_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

export const nodeBaseSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'config'],
  properties: {
    id: { type: 'string', pattern: NODE_ID_PATTERN },
    type: { type: 'string' },
    config: { type: 'object' },
    timeout_ms: { type: 'integer', minimum: 1, description: `default ${L.workflowNodeTimeoutDefaultMs}; above ${L.workflowNodeTimeoutCeilingMs} it is capped (logged), and trimmed to the time left in the run` },
    retry: {
      type: 'object',
      additionalProperties: false,
      required: ['max_attempts'],
      properties: {
        max_attempts: { type: 'integer', minimum: 1, description: `above ${L.workflowRetryAttemptsCeiling} it is capped, and lowered so attempts x timeout fits the run (logged)` },
        backoff_ms: { type: 'integer', minimum: 0, maximum: 60_000 },
      },
    },
    on_error: { type: 'string', enum: ['fail', 'continue'], default: 'fail' },
  },
} as const;

export const edgeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to'],
  properties: {
    from: { type: 'string' },
    to: { type: 'string' },
    when: { type: 'string', minLength: 1, maxLength: 256, description: '"true"/"false" after a condition, a case label or "default" after a switch, "error" after any node' },
  },
} as const;

export const definitionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'nodes', 'edges'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: 'string', maxLength: 2000 },
    enabled: { type: 'boolean', default: true },
    trigger: {
      type: 'object',
      additionalProperties: false,
      required: ['tags', 'match'],
      properties: {
        tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, minItems: 1, maxItems: L.tagsPerMessage },
        match: { type: 'string', enum: ['any', 'all'] },
      },
    },
    exposed: { type: 'boolean', default: false },
    input_schema: { type: 'object', description: 'JSON Schema the run input must satisfy. Its patterns run on RE2 (linear time): lookaround and backreferences are refused with 422' },
    nodes: { type: 'array', items: nodeBaseSchema, minItems: 1, maxItems: L.workflowMaxNodes },
    edges: { type: 'array', items: edgeSchema, maxItems: L.workflowMaxEdges },
  },
} as const;

/** Defaults (enabled, exposed, on_error) are filled by ajv on input; stored definitions may lack them. */
export type WorkflowDefinition = FromSchema<typeof definitionSchema, { keepDefaultedPropertiesOptional: true }>;
export type NodeDef = FromSchema<typeof nodeBaseSchema, { keepDefaultedPropertiesOptional: true }>;
export type EdgeDef = FromSchema<typeof edgeSchema>;

/** For OpenAPI: the definition with each node kind's config schema spelled out. */
export const documentedDefinitionSchema = {
  ...definitionSchema,
  description: `Limits: ${L.workflowMaxNodes} nodes, ${L.workflowMaxEdges} edges, graph depth ${L.workflowMaxDepth}, ${L.workflowMaxOutEdges} outgoing edges per node, JSON nesting ${L.jsonNestingDepth}, ${L.workflowDefinitionBytes} bytes; every node reachable from a start node (a node with no incoming edge). A violation answers 422 {error: "Validation Error", details: [{path, message}]}.`,
  properties: {
    ...definitionSchema.properties,
    nodes: {
      ...definitionSchema.properties.nodes,
      items: {
        oneOf: NODE_KINDS.map((k) => ({
          ...nodeBaseSchema,
          title: k.type,
          description: k.summary,
          properties: { ...nodeBaseSchema.properties, type: { const: k.type }, config: k.configSchema },
          example: { id: 'n1', type: k.type, config: k.example },
        })),
      },
    },
  },
};

export const workflowSchema = {
  type: 'object',
  required: ['id', 'name', 'enabled', 'exposed', 'nodes', 'edges', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' },
    ...definitionSchema.properties,
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const listQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
    offset: pageOffsetProperty,
  },
} as const;
export type ListQuery = FromSchema<typeof listQuerySchema>;

export const runBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { input: { description: 'The run input (validated against the workflow\'s input_schema when it has one)' } },
} as const;
export type RunBody = FromSchema<typeof runBodySchema>;

export const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled', 'expired'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** A run in one of these never changes again. */
export const FINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'expired'];
/** `cancelled`: the node was in flight when its run was cancelled or stopped by a run limit. */
export const NODE_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped', 'cancelled'] as const;

export const logEntrySchema = {
  type: 'object',
  required: ['level', 'message', 'at'],
  properties: {
    level: { type: 'string', enum: ['info', 'warn', 'error'] },
    node: { type: 'string' },
    message: { type: 'string' },
    at: { type: 'string', format: 'date-time' },
  },
} as const;

export const outputRefSchema = {
  type: 'object',
  required: ['$ref', 'bytes'],
  description: 'An output over 256 KB, read back from GET /api/workflows/runs/{runId}/outputs/{node}',
  properties: { $ref: { type: 'string' }, bytes: { type: 'integer' } },
} as const;

export const runNodeSchema = {
  type: 'object',
  required: ['id', 'status', 'executions', 'attempts', 'durationMs', 'outputBytes'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: NODE_STATUSES },
    executions: { type: 'integer' },
    attempts: { type: 'integer' },
    durationMs: { type: 'integer' },
    outputBytes: { type: 'integer' },
    output: { description: 'The latest output, once the run has ended (an output over 256 KB is a reference object)' },
    error: { type: 'string' },
    childRuns: {
      type: 'object',
      required: ['started', 'failed'],
      description: 'flow.call and forEach over a workflow: the child runs the node started and how many of them failed',
      properties: { started: { type: 'integer' }, failed: { type: 'integer' } },
    },
  },
} as const;

export const runSchema = {
  type: 'object',
  required: ['runId', 'workflowId', 'trigger', 'status', 'log', 'nodes', 'queuedAt', 'temporal'],
  properties: {
    runId: { type: 'string' },
    workflowId: { type: 'string' },
    workflowName: { type: 'string' },
    trigger: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', enum: ['manual', 'device_event'] }, messageId: { type: 'string' } },
    },
    status: { type: 'string', enum: RUN_STATUSES },
    input: {},
    output: { description: '{<node id>: output} of the nodes that ran and have no outgoing edge', type: ['object', 'null'] },
    error: { type: ['string', 'null'] },
    log: { type: 'array', items: logEntrySchema },
    nodes: { type: 'array', items: runNodeSchema },
    childRuns: { type: 'integer', description: 'Child runs taken from the run\'s budget by its whole tree (flow.call and forEach at every depth; at most 10,000)' },
    queuedAt: { type: 'string', format: 'date-time' },
    startedAt: { type: ['string', 'null'], format: 'date-time' },
    finishedAt: { type: ['string', 'null'], format: 'date-time' },
    temporal: { type: 'object', properties: { workflowId: { type: 'string' }, runId: { type: ['string', 'null'] } } },
  },
} as const;

export const runStartedSchema = {
  type: 'object',
  required: ['runId', 'workflowId', 'status'],
  properties: { runId: { type: 'string' }, workflowId: { type: 'string' }, status: { type: 'string', enum: ['running', 'queued'] } },
} as const;

export const runListSchema = {
  type: 'object',
  required: ['runs', 'next_cursor'],
  properties: {
    runs: { type: 'array', items: { type: 'object', properties: { runId: { type: 'string' }, status: { type: 'string', enum: RUN_STATUSES }, queuedAt: { type: 'string' }, startedAt: { type: ['string', 'null'] }, finishedAt: { type: ['string', 'null'] }, error: { type: ['string', 'null'] } } } },
    next_cursor: { type: ['string', 'null'], description: 'The offset of the next page, or null on the last page' },
  },
} as const;

export const validationErrorSchema = {
  type: 'object',
  required: ['error', 'requestId', 'details'],
  properties: {
    error: { const: 'Validation Error' },
    requestId: { type: 'string' },
    code: { type: 'string' },
    details: { type: 'array', items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } } },
  },
} as const;
