/**
 * /api/workflows: definitions and runs, account key only. Definitions are read as raw JSON so
 * that every limit (size, nesting, nodes, edges, config per kind) answers 422 with details.
 */
import { AppContext, RouteRegistry, principalOf, queryOf } from '../http/route';
import type { FlowService, RunService } from './service';
import { BadRequestError, PayloadTooLargeError } from '../errors';
import { FIXED_LIMITS } from '../accounts/plans';
import { parseClientJson } from '../json-schema';
import {
  documentedDefinitionSchema, listQuerySchema, ListQuery, runBodySchema, runListSchema, runSchema,
  runStartedSchema, validationErrorSchema, workflowSchema,
} from './schemas';

/** Past the 1 MB definition limit a body is still read (to answer 422) up to this size. */
const READ_LIMIT = 4 * 1024 * 1024;

/** The JSON body as sent, so limits on it are 422s; an empty body is `undefined` when allowed. */
async function readJson(ctx: AppContext, allowEmpty = false): Promise<{ value: unknown; bytes: number }> {
  const declared = Number(ctx.get('content-length') || 0);
  if (allowEmpty && !ctx.request.type && !declared) return { value: undefined, bytes: 0 };
  if (!ctx.is('application/json', '+json')) throw new BadRequestError('Request body must be JSON (Content-Type: application/json)', undefined, 'invalid_json');
  if (declared > READ_LIMIT) throw new PayloadTooLargeError(`Request body exceeds ${READ_LIMIT} bytes`);
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of ctx.req) {
    bytes += (chunk as Buffer).length;
    if (bytes > READ_LIMIT) throw new PayloadTooLargeError(`Request body exceeds ${READ_LIMIT} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (allowEmpty && bytes === 0) return { value: undefined, bytes };
  try {
    return { value: parseClientJson(Buffer.concat(chunks).toString('utf8')), bytes };
  } catch (err) {
    throw new BadRequestError(`Malformed JSON body: ${(err as Error).message}`, undefined, 'invalid_json');
  }
}

const runAccount = (ctx: AppContext) => {
  const { account } = principalOf(ctx);
  return { id: account._id, plan: account.plan };
};

const limitReached = { description: 'A plan limit is reached: `{error, code: "limit_reached", usage, limit, plan}`' };

const definitionBody = { contentType: 'application/json', schema: documentedDefinitionSchema };
const invalid = { description: 'Validation Error: details name each failing path', schema: validationErrorSchema };
const common = { dialect: 'workflow' as const, tags: ['workflows'], auth: 'account' as const, rate: 'none' as const };

export function registerFlowRoutes(r: RouteRegistry, s: { flows: FlowService; runs: RunService }): void {
  r.add({
    ...common, method: 'GET', path: '/api/workflows', summary: 'Workflows of the account',
    query: listQuerySchema,
    responses: { 200: { description: 'A page of workflows', schema: { type: 'object', properties: { workflows: { type: 'array', items: workflowSchema }, next_cursor: { type: ['string', 'null'] } } } } },
    handler: async (ctx) => {
      const q = queryOf<ListQuery>(ctx);
      ctx.body = await s.flows.list(principalOf(ctx).account._id, q.offset ?? 0, q.limit ?? 25);
    },
  });

  r.add({
    ...common, rate: 'workflow-write', method: 'POST', path: '/api/workflows', summary: 'Create a workflow',
    description: `Limits: ${FIXED_LIMITS.workflowMaxNodes} nodes, ${FIXED_LIMITS.workflowMaxEdges} edges, depth ${FIXED_LIMITS.workflowMaxDepth}, ${FIXED_LIMITS.workflowMaxOutEdges} outgoing edges per node, JSON nesting ${FIXED_LIMITS.jsonNestingDepth}, 1 MB. Each node's config is checked against its kind's schema (see the node variants of the request body).`,
    rawBody: definitionBody,
    responses: { 201: { description: 'Created', schema: workflowSchema }, 403: limitReached, 422: invalid },
    handler: async (ctx) => {
      const { value, bytes } = await readJson(ctx);
      ctx.status = 201;
      ctx.body = await s.flows.create(runAccount(ctx), value, bytes);
    },
  });

  r.add({
    ...common, method: 'GET', path: '/api/workflows/:id', summary: 'One workflow',
    responses: { 200: { description: 'The workflow', schema: workflowSchema } },
    handler: async (ctx) => {
      ctx.body = await s.flows.get(principalOf(ctx).account._id, ctx.params.id);
    },
  });

  r.add({
    ...common, rate: 'workflow-write', method: 'PUT', path: '/api/workflows/:id', summary: 'Replace a workflow definition (runs in progress keep the definition they started with)',
    rawBody: definitionBody,
    responses: { 200: { description: 'The workflow', schema: workflowSchema }, 422: invalid },
    handler: async (ctx) => {
      const { value, bytes } = await readJson(ctx);
      ctx.body = await s.flows.replace(principalOf(ctx).account._id, ctx.params.id, value, bytes);
    },
  });

  r.add({
    ...common, rate: 'workflow-write', method: 'DELETE', path: '/api/workflows/:id', summary: 'Delete a workflow (its run records stay readable)',
    responses: { 204: { description: 'Deleted' } },
    handler: async (ctx) => {
      await s.flows.remove(principalOf(ctx).account._id, ctx.params.id);
      ctx.status = 204;
    },
  });

  r.add({
    ...common, rate: 'workflow-run', method: 'POST', path: '/api/workflows/:id/run', summary: 'Start a run',
    description: 'Answers 202 at once with status `running`, or `queued` while the plan\'s concurrent runs are busy (FIFO; a run queued for an hour expires); follow the run at GET /api/workflows/runs/{runId}. The 202 means the run is recorded; Temporal is told right after, and a run it refuses turns `failed` with `The run could not be started`. A run has 10 minutes of wall clock.',
    // No body at all is a run without input, like `{}`.
    rawBody: { contentType: 'application/json', schema: runBodySchema, optional: true },
    responses: {
      202: { description: 'Started or queued', schema: runStartedSchema }, 403: limitReached, 422: invalid,
      503: { description: 'The run queue is full (`code: queue_full`); retry after Retry-After' },
    },
    handler: async (ctx) => {
      const { value, bytes } = await readJson(ctx, true);
      ctx.status = 202;
      ctx.body = await s.runs.startFromBody(runAccount(ctx), ctx.params.id, value, bytes);
    },
  });

  r.add({
    ...common, method: 'GET', path: '/api/workflows/:id/runs', summary: 'Runs of a workflow, newest first',
    query: listQuerySchema,
    responses: { 200: { description: 'A page of runs', schema: runListSchema } },
    handler: async (ctx) => {
      const q = queryOf<ListQuery>(ctx);
      ctx.body = await s.runs.list(principalOf(ctx).account._id, ctx.params.id, q.offset ?? 0, q.limit ?? 25);
    },
  });

  r.add({
    ...common, method: 'GET', path: '/api/workflows/runs/:runId', summary: 'One run: status, per-node status, output, error and log',
    responses: { 200: { description: 'The run', schema: runSchema } },
    handler: async (ctx) => {
      ctx.body = await s.runs.get(principalOf(ctx).account._id, ctx.params.runId);
    },
  });

  r.add({
    ...common, method: 'POST', path: '/api/workflows/runs/:runId/cancel', summary: 'Cancel a run',
    responses: { 200: { description: 'The run (cancellation is asynchronous: the status turns cancelled shortly)', schema: runSchema } },
    handler: async (ctx) => {
      ctx.body = await s.runs.cancel(principalOf(ctx).account._id, ctx.params.runId);
    },
  });

  r.add({
    ...common, method: 'GET', path: '/api/workflows/runs/:runId/outputs/:node', summary: 'The output of one node (also those over 256 KB shown by reference)',
    responses: { 200: { description: 'The node\'s output as JSON', contentType: 'application/json', schema: {} } },
    handler: async (ctx) => {
      ctx.type = 'application/json';
      ctx.body = await s.runs.output(principalOf(ctx).account._id, ctx.params.runId, ctx.params.node);
    },
  });
}
